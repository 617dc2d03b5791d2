#pragma once

#include <map>
#include <string>
#include <vector>

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
  // The program each host runs as `<supervisor_exe> __supervise ...`; empty: this binary.
  std::string supervisor_exe;
  // The optional host map: per instance type, one entry per instance slot with its own GPUs
  // (CUDA_VISIBLE_DEVICES) and/or CPU set. A dispatched host takes the lowest free slot of its
  // type and gives it back when its attempt ends.
  struct Slot {
    std::string gpus;
    std::string cpus;
  };
  std::map<std::string, std::vector<Slot>> host_map;
};

}  // namespace allot::server
