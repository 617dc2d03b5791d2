// `allot`: one binary for the server and the command line.

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <string_view>

#include "cli/commands.h"
#include "exec/supervisor.h"
#include "server/run.h"

namespace {

// `allot server`'s flags, turned into server::Options by RunServerCommand.
struct ServerFlags {
  allot::server::Options server;
  std::string listen = "127.0.0.1:8742";
  int grace_seconds = 120;
  std::string host_map_file;
  bool no_sandbox = false;
  int http_header_timeout_seconds = 10;
  int http_body_timeout_seconds = 30;
  int http_idle_timeout_seconds = 30;
};

CLI::App* AddServerCommand(CLI::App& app, ServerFlags& f) {
  CLI::App* serve = app.add_subcommand("server", "run the server");
  serve->add_option("--data-dir", f.server.data_dir, "data directory")->capture_default_str();
  serve->add_option("--listen", f.listen, "host:port to listen on (port 0 = any free port)")
      ->capture_default_str();
  serve->add_option("--region", f.server.region, "region in ARNs")->capture_default_str();
  serve->add_option("--account", f.server.account, "account in ARNs")->capture_default_str();
  serve
      ->add_option("--stop-grace-seconds", f.grace_seconds,
                   "SIGTERM to SIGKILL grace for stopping jobs")
      ->capture_default_str();
  serve->add_option("--host-map", f.host_map_file,
                    "YAML file: per instance type, a list of slots {gpus: \"0\", cpus: \"0-3\"}; "
                    "each host of a job gets its own slot's GPUs (CUDA_VISIBLE_DEVICES) and CPUs");
  serve->add_option("--log-level", f.server.log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  serve
      ->add_option("--log-format", f.server.log_format,
                   "text (key=value) or json (one object a line)")
      ->capture_default_str();
  // The HTTP server's limits (docs/server.md, "Layout of a request").
  serve->add_option("--http-threads", f.server.http_threads, "workers that run requests")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  serve
      ->add_option("--http-max-connections", f.server.http_max_connections,
                   "open connections in all; beyond, an idle one is closed or the new one is "
                   "answered 503")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  serve
      ->add_option("--http-max-connections-per-address", f.server.http_max_connections_per_address,
                   "open connections per client address")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  serve
      ->add_option("--http-header-timeout-seconds", f.http_header_timeout_seconds,
                   "a request's headers must arrive within this of its first byte")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve
      ->add_option("--http-body-timeout-seconds", f.http_body_timeout_seconds,
                   "a request's body must arrive, and its answer be written, within this")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve
      ->add_option("--http-idle-timeout-seconds", f.http_idle_timeout_seconds,
                   "an idle keep-alive connection is closed after this")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve->add_flag("--no-sandbox", f.no_sandbox,
                  "run jobs without bubblewrap even where it is installed (the /opt/ml tree then "
                  "lives under the data directory and SM_* variables point there)");
  return serve;
}

// The port of --listen's "host:port": a whole number from 0 to 65535.
std::optional<int> ParsePort(std::string_view text) {
  int port = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ec != std::errc() || ptr != end || port < 0 || port > 65535) {
    return std::nullopt;
  }
  return port;
}

int RunServerCommand(ServerFlags& f) {
  allot::server::Options& server = f.server;
  server.http_header_timeout = allot::Seconds(f.http_header_timeout_seconds);
  server.http_body_timeout = allot::Seconds(f.http_body_timeout_seconds);
  server.http_idle_timeout = allot::Seconds(f.http_idle_timeout_seconds);
  const auto colon = f.listen.rfind(':');
  server.host = colon == std::string::npos ? f.listen : f.listen.substr(0, colon);
  if (colon != std::string::npos) {
    std::optional<int> port = ParsePort(std::string_view{f.listen}.substr(colon + 1));
    if (!port) {
      std::fprintf(stderr, "allot server: --listen %s: the port must be a number from 0 to 65535\n",
                   f.listen.c_str());
      return 1;
    }
    server.port = *port;
  }
  server.stop_grace = allot::Seconds(f.grace_seconds);
  server.sandbox = !f.no_sandbox;
  if (!f.host_map_file.empty()) {
    try {
      server.host_map = allot::cli::ReadHostMap(f.host_map_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "allot server: --host-map %s: %s\n", f.host_map_file.c_str(), e.what());
      return 1;
    }
  }
  return allot::server::RunServer(server);
}

int Main(int argc, char** argv) {
  // Each host of an attempt runs under `allot __supervise ...` (hidden: started by the executor).
  if (argc > 1 && std::string_view(argv[1]) == "__supervise") {
    return allot::exec::SuperviseMain(argc - 2, argv + 2);
  }
  CLI::App app{"Allot: a self-hosted job queue with quota shares, speaking the AWS Batch API"};
  app.require_subcommand(1);
  ServerFlags server_flags;
  CLI::App* serve = AddServerCommand(app, server_flags);

  allot::cli::Runner run;
  allot::cli::AddApplyCommand(app, &run);
  allot::cli::AddJobCommands(app, &run);
  allot::cli::AddSharesCommand(app, &run);
  allot::cli::AddBenchCommand(app, &run);
  allot::cli::AddLogsCommand(app, &run);
  allot::cli::AddSimCommand(app, &run);
  allot::cli::AddUsersCommand(app, &run);
  allot::cli::AddAuditCommand(app, &run);

  std::vector<char*> args = allot::cli::PrepareArgv(argc, argv);
  CLI11_PARSE(app, static_cast<int>(args.size() - 1), args.data());
  if (serve->parsed()) return RunServerCommand(server_flags);
  if (!run) return 0;
  try {
    return run();
  } catch (const allot::cli::ApiError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  } catch (const allot::cli::CliError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  }
}

}  // namespace

// Whatever escapes a command (an exception from a library, say) ends in a message and exit
// status 1, never in std::terminate.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "allot: unexpected error\n");
    return 1;
  }
}
