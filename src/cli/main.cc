// `allot`: one binary for the server and the command line.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string_view>

#include "cli/commands.h"
#include "exec/supervisor.h"
#include "server/run.h"

int main(int argc, char** argv) {
  // Each host of an attempt runs under `allot __supervise ...` (hidden: started by the executor).
  if (argc > 1 && std::string_view(argv[1]) == "__supervise") {
    return allot::exec::SuperviseMain(argc - 2, argv + 2);
  }
  CLI::App app{"Allot: a self-hosted job queue with quota shares, speaking the AWS Batch API"};
  app.require_subcommand(1);

  allot::server::Options server;
  std::string listen = "127.0.0.1:8742";
  int grace_seconds = 120;
  CLI::App* serve = app.add_subcommand("server", "run the server");
  serve->add_option("--data-dir", server.data_dir, "data directory")->capture_default_str();
  serve->add_option("--listen", listen, "host:port to listen on (port 0 = any free port)")
      ->capture_default_str();
  serve->add_option("--region", server.region, "region in ARNs")->capture_default_str();
  serve->add_option("--account", server.account, "account in ARNs")->capture_default_str();
  serve->add_option("--stop-grace-seconds", grace_seconds, "SIGTERM to SIGKILL grace for stopping jobs")
      ->capture_default_str();
  std::string host_map_file;
  serve->add_option("--host-map", host_map_file,
                    "YAML file: per instance type, a list of slots {gpus: \"0\", cpus: \"0-3\"}; "
                    "each host of a job gets its own slot's GPUs (CUDA_VISIBLE_DEVICES) and CPUs");
  serve->add_option("--log-level", server.log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  serve->add_option("--log-format", server.log_format,
                    "text (key=value) or json (one object a line)")
      ->capture_default_str();
  bool no_sandbox = false;
  serve->add_flag("--no-sandbox", no_sandbox,
                  "run jobs without bubblewrap even where it is installed (the /opt/ml tree then "
                  "lives under the data directory and SM_* variables point there)");

  allot::cli::Runner run;
  allot::cli::AddApplyCommand(app, &run);
  allot::cli::AddJobCommands(app, &run);
  allot::cli::AddSharesCommand(app, &run);
  allot::cli::AddBenchCommand(app, &run);
  allot::cli::AddLogsCommand(app, &run);
  allot::cli::AddSimCommand(app, &run);

  std::vector<char*> args = allot::cli::PrepareArgv(argc, argv);
  CLI11_PARSE(app, static_cast<int>(args.size() - 1), args.data());
  if (serve->parsed()) {
    const auto colon = listen.rfind(':');
    server.host = colon == std::string::npos ? listen : listen.substr(0, colon);
    server.port = colon == std::string::npos ? 8742 : std::stoi(listen.substr(colon + 1));
    server.stop_grace = allot::Seconds(grace_seconds);
    server.sandbox = !no_sandbox;
    if (!host_map_file.empty()) {
      try {
        server.host_map = allot::cli::ReadHostMap(host_map_file);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "allot server: --host-map %s: %s\n", host_map_file.c_str(), e.what());
        return 1;
      }
    }
    return allot::server::RunServer(server);
  }
  if (!run) return 0;
  try {
    return run();
  } catch (const allot::cli::ApiError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  } catch (const allot::cli::CliError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return 1;
  }
}
