#pragma once

#include <string>

#include "common/time.h"

namespace allot::server {

struct Options {
  std::string data_dir = "./allot-data";
  std::string host = "127.0.0.1";
  int port = 8742;
  std::string region = "local";
  std::string account = "000000000000";
  Duration stop_grace = Seconds(120);  // SIGTERM to SIGKILL for stopping jobs
  int http_threads = 32;
  bool sandbox = true;  // run hosts under bubblewrap when it is installed
};

}  // namespace allot::server
