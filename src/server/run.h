#pragma once

#include "server/options.h"

namespace allot::server {

// `allot server`: starts the controller and the HTTP server, prints what to export, serves
// until SIGTERM or SIGINT, then shuts down cleanly (running jobs are left to the next start).
int RunServer(const Options& options);

}  // namespace allot::server
