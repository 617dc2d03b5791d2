// `allot logs JOB [--attempt N] [--host algo-2] [--stderr] [--follow]`: an attempt's output,
// from GET /allot/v1/jobs/{id}/logs.

#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/commands.h"

namespace allot::cli {

namespace {

struct LogsArgs {
  std::string job;
  int attempt = 0;  // 0 = the latest
  std::string host = "algo-1";
  bool stderr_stream = false;
  bool follow = false;
};

int RunLogs(const LogsArgs& a, const std::string& endpoint) {
  Client client(LoadClientConfig(endpoint));
  std::uint64_t offset = 0;
  for (;;) {
    const std::string query = "attempt=" + std::to_string(a.attempt) + "&host=" + a.host +
                              "&offset=" + std::to_string(offset) +
                              "&stream=" + (a.stderr_stream ? "stderr" : "stdout");
    const Json chunk = client.Get("/allot/v1/jobs/" + a.job + "/logs", query);
    const std::string text = chunk.value("text", "");
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    offset = chunk.value("nextOffset", offset);
    if (!text.empty()) continue;  // a full chunk: read on at once
    if (!a.follow || chunk.value("complete", false)) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

void AddLogsCommand(CLI::App& app, Runner* run) {
  auto args = std::make_shared<LogsArgs>();
  CLI::App* sub = app.add_subcommand("logs", "print a job's output (stdout of algo-1 by default)");
  // Like cat: the output is the job's, and what it prints (escape sequences too) reaches the
  // terminal; `allot describe` escapes what it shows, this does not.
  sub->footer(
      "The job's bytes are printed as it wrote them, control characters and terminal escape "
      "sequences included, as cat would print its file: pipe through `cat -v` or `less` to see "
      "them instead.");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("job", args->job, "job id or ARN")->required();
  sub->add_option("--attempt", args->attempt, "attempt number (default: the latest)");
  sub->add_option("--host", args->host, "host (algo-1, algo-2, ...)")->capture_default_str();
  sub->add_flag("--stderr", args->stderr_stream, "print stderr instead of stdout");
  sub->add_flag("--follow,-f", args->follow, "keep printing until the attempt ends");
  sub->callback(
      [run, args, endpoint] { *run = [args, endpoint] { return RunLogs(*args, *endpoint); }; });
}

}  // namespace allot::cli
