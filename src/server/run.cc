#include "server/run.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "exec/ipc_scope.h"
#include "server/controller.h"
#include "server/http_server.h"
#include "server/log.h"

namespace allot::server {

int RunServer(const Options& options) {
  // Signals are taken synchronously by one thread, so no handler runs inside library code.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  if (Status s = log::Configure(options.log_level, options.log_format); !s.ok()) {
    std::fprintf(stderr, "allot server: %s\n", s.message().c_str());
    return 2;
  }
  if (options.sandbox && !exec::JobIpcScopeAvailable()) {
    log::Warn("sandbox.ipc_not_scoped",
              {{"why",
                "this kernel has no Landlock scopes (Linux 6.12 or later, with Landlock "
                "enabled): a job may connect to other jobs' abstract UNIX sockets"}});
  }
  Result<std::unique_ptr<Controller>> controller = Controller::Start(options);
  if (!controller.ok()) {
    std::fprintf(stderr, "allot server: %s\n", controller.status().ToString().c_str());
    return 1;
  }
  HttpServer http(*controller.value());
  Result<int> port = http.Bind(options.host, options.port);
  if (!port.ok()) {
    std::fprintf(stderr, "allot server: %s\n", port.status().message().c_str());
    return 1;
  }
  std::thread serving([&http] { http.Serve(); });
  const std::string creds =
      std::filesystem::absolute(controller.value()->credentials_path()).string();
  std::printf("allot server listening on http://%s:%d (data in %s)\n", options.host.c_str(),
              port.value(), options.data_dir.c_str());
  std::printf("export AWS_SHARED_CREDENTIALS_FILE=%s\n", creds.c_str());
  std::printf("export AWS_ENDPOINT_URL_BATCH=http://%s:%d\n", options.host.c_str(), port.value());
  std::printf("export AWS_DEFAULT_REGION=%s\n", options.region.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
  std::printf("allot server: signal %d, shutting down\n", sig);
  http.Stop();
  serving.join();
  controller.value()->Shutdown();
  return 0;
}

}  // namespace allot::server
