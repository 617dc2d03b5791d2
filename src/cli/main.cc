// `allot`: one binary for the server and the command line.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>

#include "cli/commands.h"
#include "cli/host_map.h"
#include "cli/slurm_map.h"
#include "cli/usage.h"
#include "env/malloc.h"
#include "exec/job_exec.h"
#include "exec/sagemaker_layout.h"
#include "exec/sandbox.h"
#include "exec/slurm_node.h"
#include "exec/supervisor.h"
#include "exec/syscall_filter.h"
#include "server/job_identity.h"
#include "server/local_paths.h"
#include "server/run.h"

namespace {

// `allot server`'s flags, turned into server::Options by RunServerCommand.
struct ServerFlags {
  allot::server::Options server;
  std::string listen = "127.0.0.1:8742";
  int grace_seconds = 120;
  std::string host_map_file;
  std::string slurm_map_file;
  bool no_sandbox = false;
  int http_header_timeout_seconds = 10;
  int http_body_timeout_seconds = 30;
  int http_idle_timeout_seconds = 30;
  int audit_retention_days = 90;
  int history_retention_days = 90;
  int history_interval_seconds = 10;
  // The sealed sandbox (exec/sandbox.h).
  std::string job_uid_range = "200000:10000";
  std::string job_memory_limit = "auto";
  std::int64_t job_pids_limit = 4096;
  std::string job_tmp_size = "1G";
  std::string job_disk_limit = "100G";
  std::string store_reserve = "32M";
};

// The sandbox's flags: whom jobs run as and what each host may use.
void AddSandboxFlags(CLI::App* serve, ServerFlags& f) {
  serve
      ->add_option("--job-uid-range", f.job_uid_range,
                   "FIRST:COUNT: each quota share's jobs run as their own uid/gid from this range "
                   "(allocated on first use, kept in the store); keep it clear of /etc/passwd "
                   "and /etc/subuid ranges")
      ->capture_default_str();
  serve
      ->add_option("--job-memory-limit", f.job_memory_limit,
                   "memory per host (cgroup), e.g. 16G; auto = 3/4 of the machine's memory; 0 = "
                   "none")
      ->capture_default_str();
  serve
      ->add_option("--job-pids-limit", f.job_pids_limit, "processes and threads per host; 0 = none")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 22))
      ->capture_default_str();
  serve
      ->add_option("--job-tmp-size", f.job_tmp_size,
                   "size of each host's private /tmp; 0 = uncapped")
      ->capture_default_str();
  serve
      ->add_option("--job-disk-limit", f.job_disk_limit,
                   "disk per host in /opt/ml, its logs and the checkpoint directory, checked every "
                   "2 s and at its end; no single file may be larger; 0 = none")
      ->capture_default_str();
  serve
      ->add_option("--job-file-limit", f.server.job_limits.files,
                   "files and directories per host in /opt/ml, its logs and the checkpoint "
                   "directory, checked with the disk limit; 0 = none")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  serve->add_option("--job-readonly-path", f.server.job_readonly_paths,
                    "a host path every sandboxed job may read, at the same place (e.g. a Python "
                    "installation outside /usr); repeat for more");
}

// Sizes of the sandbox flags (and the store's reserve) into server::Options; false (said on
// stderr) for a bad value.
bool ApplySandboxFlags(ServerFlags& f) {
  allot::server::Options& server = f.server;
  const auto range = allot::server::ParseJobUidRange(f.job_uid_range);
  if (!range.ok()) {
    std::fprintf(stderr, "allot server: --job-uid-range %s\n", range.status().message().c_str());
    return false;
  }
  server.job_uid_first = range->first;
  server.job_uid_count = range->count;
  server.job_limits.pids = f.job_pids_limit;
  const struct {
    const char* flag;
    const std::string& text;
    std::int64_t& out;
  } sizes[] = {{"--job-memory-limit", f.job_memory_limit, server.job_limits.memory_bytes},
               {"--job-tmp-size", f.job_tmp_size, server.job_limits.tmp_bytes},
               {"--job-disk-limit", f.job_disk_limit, server.job_limits.disk_bytes},
               {"--store-reserve", f.store_reserve, server.store_reserve_bytes}};
  for (const auto& size : sizes) {
    if (size.text == "auto" && &size.out == &server.job_limits.memory_bytes) {
      const long pages = ::sysconf(_SC_PHYS_PAGES);
      const long page = ::sysconf(_SC_PAGESIZE);
      size.out = pages > 0 && page > 0 ? std::int64_t{pages} * page / 4 * 3 : 0;
      continue;
    }
    const auto bytes = allot::exec::ParseBytes(size.text);
    if (!bytes.ok()) {
      std::fprintf(stderr, "allot server: %s %s\n", size.flag, bytes.status().message().c_str());
      return false;
    }
    size.out = *bytes;
  }
  return true;
}

// No sandbox, no jobs: without a working bubblewrap the server does not start unless
// --no-sandbox says jobs may run unsandboxed (as the server's user).
bool CheckSandbox(const allot::server::Options& server) {
  if (!server.sandbox) return true;
  allot::exec::LayoutOptions layout;
  if (!allot::exec::SandboxAvailable(layout)) {
    std::fprintf(stderr,
                 "allot server: no sandbox: bubblewrap (%s) is missing or does not work here, "
                 "and no job runs outside the sandbox; install bubblewrap or start with "
                 "--no-sandbox to run jobs unsandboxed as the server's user\n",
                 layout.bwrap.c_str());
    return false;
  }
  // Every sandboxed job loads the filter last; one that does not load fails the job. Said once
  // here rather than by every job.
  if (const allot::Status filter = allot::exec::ProbeJobSyscallFilter(); !filter.ok()) {
    std::fprintf(stderr,
                 "allot server: no sandbox: %s; no job runs without its system call filter "
                 "(libseccomp 2.5 or later, and a kernel with seccomp filters, are needed); "
                 "start with --no-sandbox to run jobs unsandboxed as the server's user\n",
                 filter.message().c_str());
    return false;
  }
  return true;
}

// What the server keeps and shows of itself: audit, history and metrics
// (docs/security.md, docs/observability.md).
void AddRecordFlags(CLI::App* serve, ServerFlags& f) {
  serve->add_option("--metrics-token-file", f.server.metrics_token_file,
                    "the bearer token GET /metrics requires (Authorization: Bearer <token>); "
                    "default <data-dir>/metrics-token (made at first start, mode 0600)");
  serve
      ->add_option("--audit-retention-days", f.audit_retention_days,
                   "audit records older than this are dropped")
      ->check(CLI::Range(1, 36500))
      ->capture_default_str();
  serve
      ->add_option("--history-retention-days", f.history_retention_days,
                   "usage samples and job events older than this are dropped (allot report)")
      ->check(CLI::Range(1, 36500))
      ->capture_default_str();
  serve
      ->add_option("--history-interval-seconds", f.history_interval_seconds,
                   "how often each share's usage is sampled into the history")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve
      ->add_option("--job-files-high-percent", f.server.job_files_high_percent,
                   "when the jobs' file system is more than this used, finished jobs' files "
                   "are removed, the share holding the most first (100: never)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  serve
      ->add_option("--job-files-low-percent", f.server.job_files_low_percent,
                   "... until it is no more than this used")
      ->check(CLI::Range(0, 99))
      ->capture_default_str();
  serve
      ->add_option("--job-files-evict-percent", f.server.job_files_evict_percent,
                   "when it is still more than this used (and than the high percent) with no "
                   "finished job's files left, the job with the most files in the share holding "
                   "the most is terminated, one at a time (100: never)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  serve
      ->add_option("--store-reserve", f.store_reserve,
                   "disk space the data directory holds in reserve, released when a write fails "
                   "so that the server can record, on a full disk, what frees it; 0 = none")
      ->capture_default_str();
}

// The executor's flags (docs/slurm.md).
void AddSlurmFlags(CLI::App* serve, ServerFlags& f) {
  serve
      ->add_option("--executor", f.server.executor,
                   "where jobs run: local (processes on this machine) or slurm (a Slurm cluster; "
                   "needs --slurm-map and --shared-dir)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  serve->add_option("--slurm-map", f.slurm_map_file,
                    "YAML file: per instance type, its Slurm placement {partition, constraint, "
                    "gres, cpus, memory}; one instance is one node");
  serve->add_option("--slurm-conf", f.server.slurm_conf,
                    "Slurm's slurm.conf for sbatch, squeue and scancel (default: SLURM_CONF)");
  serve
      ->add_option("--slurm-bin-dir", f.server.slurm_bin_dir,
                   "the directory of Slurm's commands (sbatch, squeue, scancel, sinfo, sacct, "
                   "srun), the same on the nodes (default: found on PATH)")
      ->check(CLI::ExistingDirectory);
  serve->add_option("--shared-dir", f.server.shared_dir,
                    "with --executor slurm: a directory every node mounts at the same path; the "
                    "jobs' directories (SageMaker layout, checkpoints, logs, status) live there");
}

// --executor slurm's map and directories; false (said on stderr) when they do not fit.
bool ApplySlurmFlags(ServerFlags& f) {
  allot::server::Options& server = f.server;
  if (server.executor != "slurm") {
    if (!f.slurm_map_file.empty() || !server.slurm_conf.empty() || !server.shared_dir.empty() ||
        !server.slurm_bin_dir.empty()) {
      std::fprintf(stderr,
                   "allot server: --slurm-map, --slurm-conf, --slurm-bin-dir and --shared-dir "
                   "need --executor slurm\n");
      return false;
    }
    return true;
  }
  if (f.slurm_map_file.empty() || server.shared_dir.empty()) {
    std::fprintf(stderr, "allot server: --executor slurm needs --slurm-map and --shared-dir\n");
    return false;
  }
  try {
    server.slurm_map = allot::cli::ReadSlurmMap(f.slurm_map_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allot server: --slurm-map %s: %s\n", f.slurm_map_file.c_str(), e.what());
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(server.shared_dir, ec);
  const std::filesystem::path shared = std::filesystem::canonical(server.shared_dir, ec);
  if (ec) {
    std::fprintf(stderr, "allot server: --shared-dir %s: %s\n", server.shared_dir.c_str(),
                 ec.message().c_str());
    return false;
  }
  server.shared_dir = shared.string();
  if (!server.slurm_bin_dir.empty()) {
    // The batch step runs srun by this path on the nodes: a relative one would name the attempt's
    // directory there.
    server.slurm_bin_dir = std::filesystem::absolute(server.slurm_bin_dir, ec).string();
    if (ec) {
      std::fprintf(stderr, "allot server: --slurm-bin-dir %s: %s\n", server.slurm_bin_dir.c_str(),
                   ec.message().c_str());
      return false;
    }
  }
  // Jobs' directories there are root's; a file root over them would let jobs read each other's.
  auto roots = allot::server::CanonicalFileRoots(server.file_roots, server.shared_dir);
  if (!roots.ok()) {
    std::fprintf(stderr, "allot server: --shared-dir: %s\n", roots.status().message().c_str());
    return false;
  }
  return true;
}

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
      ->add_option("--http-loops", f.server.http_loops,
                   "event loops that read requests; 0: one per two cores, at most 4")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  serve
      ->add_option("--http-max-connections", f.server.http_max_connections,
                   "open connections in all; beyond, an idle one or the oldest still reading a "
                   "request is closed, else the new one is answered 503")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  serve
      ->add_option("--http-max-connections-per-address", f.server.http_max_connections_per_address,
                   "open connections per client address (all of loopback is one address)")
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
  serve
      ->add_option("--file-root", f.server.file_roots,
                   "a directory under which file:// URIs (input channels, checkpoint and output "
                   "locations) are allowed; repeat for more; none: file:// URIs are refused")
      ->allow_extra_args(false);
  // Tenancy (docs/security.md).
  serve->add_option("--master-key-file", f.server.master_key_file,
                    "the key that seals users' secrets in the store; default <data-dir>/master.key "
                    "(made at first start); keep it outside the data dir's backups");
  AddRecordFlags(serve, f);
  AddSandboxFlags(serve, f);
  AddSlurmFlags(serve, f);
  serve->add_flag("--no-sandbox", f.no_sandbox,
                  "run jobs without bubblewrap even where it is installed (the /opt/ml tree then "
                  "lives under the data directory, SM_* variables point there and jobs run as "
                  "the server's user); without it, a server without a working bubblewrap does "
                  "not start");
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
  server.audit_retention = allot::Seconds(std::int64_t{f.audit_retention_days} * 24 * 3600);
  server.history_retention = allot::Seconds(std::int64_t{f.history_retention_days} * 24 * 3600);
  server.history_interval = allot::Seconds(f.history_interval_seconds);
  if (server.job_files_low_percent >= server.job_files_high_percent) {
    std::fprintf(stderr,
                 "allot server: --job-files-low-percent (%d) must be below "
                 "--job-files-high-percent (%d)\n",
                 server.job_files_low_percent, server.job_files_high_percent);
    return 1;
  }
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
  if (!ApplySandboxFlags(f) || !CheckSandbox(server) || !ApplySlurmFlags(f)) return 1;
  if (!f.host_map_file.empty()) {
    try {
      server.host_map = allot::cli::ReadHostMap(f.host_map_file);
      server.instance_limits = allot::cli::ReadHostMapLimits(f.host_map_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "allot server: --host-map %s: %s\n", f.host_map_file.c_str(), e.what());
      return 1;
    }
  }
  auto roots = allot::server::CanonicalFileRoots(server.file_roots, server.data_dir);
  if (!roots.ok()) {
    std::fprintf(stderr, "allot server: %s\n", roots.status().message().c_str());
    return 1;
  }
  server.file_roots = std::move(roots).value();
  return allot::server::RunServer(server);
}

int Main(int argc, char** argv) {
  // Each host of an attempt runs under `allot __supervise ...` (hidden: started by the executor).
  if (argc > 1 && std::string_view(argv[1]) == "__supervise") {
    return allot::exec::SuperviseMain(argc - 2, argv + 2);
  }
  // A checkpoint copy as a job's user (hidden: started by the executor, sagemaker_layout.h).
  if (argc > 1 && std::string_view(argv[1]) == "__copyas") {
    return allot::exec::CopyAsMain(argc - 2, argv + 2);
  }
  // A sandboxed job's last step before its command (hidden: started by bwrap in the sandbox).
  if (argc > 1 && std::string_view(argv[1]) == "__jobexec") {
    return allot::exec::JobExecMain(argc - 2, argv + 2);
  }
  // The Slurm executor's batch step and per-node task (hidden: run by Slurm, slurm_node.h).
  if (argc > 1 && std::string_view(argv[1]) == "__slurmbatch") {
    return allot::exec::SlurmBatchMain(argc - 2, argv + 2);
  }
  if (argc > 1 && std::string_view(argv[1]) == "__slurmhost") {
    return allot::exec::SlurmHostMain(argc - 2, argv + 2);
  }
  CLI::App app{"Allot: a self-hosted job queue with quota shares, speaking the AWS Batch API"};
  app.require_subcommand(1);
  ServerFlags server_flags;
  CLI::App* serve = AddServerCommand(app, server_flags);

  allot::cli::Runner run;
  allot::cli::AddApplyCommand(app, &run);
  allot::cli::AddDeleteCommand(app, &run);
  allot::cli::AddJobCommands(app, &run);
  allot::cli::AddSharesCommand(app, &run);
  allot::cli::AddBenchCommand(app, &run);
  allot::cli::AddLogsCommand(app, &run);
  allot::cli::AddSimCommand(app, &run);
  allot::cli::AddUsersCommand(app, &run);
  allot::cli::AddAuditCommand(app, &run);
  allot::cli::AddExplainCommands(app, &run);
  allot::cli::AddReportCommands(app, &run);

  app.footer(
      "Exit status: 0 success, 1 error, 2 usage error (an unknown command or option, a "
      "missing argument).");
  std::vector<char*> args = allot::cli::PrepareArgv(argc, argv);
  if (std::optional<int> done = allot::cli::ParseCommandLine(app, args)) return *done;
  if (serve->parsed()) return RunServerCommand(server_flags);
  if (!run) return allot::cli::kExitOk;
  try {
    return run();
  } catch (const allot::cli::UsageError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return allot::cli::kExitUsage;
  } catch (const allot::cli::ApiError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return allot::cli::kExitError;
  } catch (const allot::cli::CliError& e) {
    std::fprintf(stderr, "allot: %s\n", e.what());
    return allot::cli::kExitError;
  }
}

}  // namespace

// Whatever escapes a command (an exception from a library, say) ends in a message and exit
// status 1, never in std::terminate.
int main(int argc, char** argv) {
  if (argc > 1 && std::string_view{argv[1]} == "server") {
    // Not fatal: the server only runs with more page faults (env/malloc.h).
    if (allot::Status prepared = allot::env::PrepareServerMalloc(argv); !prepared.ok()) {
      std::fprintf(stderr, "allot: %s\n", prepared.ToString().c_str());
    }
  }
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
