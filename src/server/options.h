#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "exec/executor.h"
#include "exec/sandbox.h"
#include "exec/slurm_executor.h"

namespace allot::server {

struct Options {
  std::string data_dir = "./allot-data";
  std::string host = "127.0.0.1";
  int port = 8742;
  std::string region = "local";
  std::string account = "000000000000";
  Duration stop_grace = Seconds(120);  // SIGTERM to SIGKILL for stopping jobs
  int http_threads = 32;
  // Event loops of the HTTP server; 0: one per two cores, at most 4 (--http-loops).
  int http_loops = 0;
  // Run hosts in the sealed sandbox (exec/sandbox.h); without a working bubblewrap the server
  // refuses to start unless this is false (--no-sandbox).
  bool sandbox = true;
  // The sealed sandbox's settings. Each quota share's jobs run as their own uid/gid from
  // [job_uid_first, job_uid_first + job_uid_count) (server/job_identity.h).
  std::uint32_t job_uid_first = 200000;
  std::uint32_t job_uid_count = 10000;
  // Per host, 0 = none; the host map may override them per instance type (instance_limits).
  exec::JobLimits job_limits{.memory_bytes = 0,
                             .pids = 4096,
                             .tmp_bytes = std::int64_t{1} << 30,
                             .disk_bytes = std::int64_t{100} << 30,
                             .files = 1'000'000};
  struct LimitOverrides {
    std::optional<std::int64_t> memory_bytes;
    std::optional<std::int64_t> pids;
    std::optional<std::int64_t> tmp_bytes;
    std::optional<std::int64_t> disk_bytes;
    std::optional<std::int64_t> files;
  };
  std::map<std::string, LimitOverrides> instance_limits;
  // The limits of a host of `instance_type`: job_limits, overridden by the host map's.
  exec::JobLimits LimitsFor(const std::string& instance_type) const {
    exec::JobLimits limits = job_limits;
    const auto it = instance_limits.find(instance_type);
    if (it == instance_limits.end()) return limits;
    const LimitOverrides& o = it->second;
    if (o.memory_bytes) limits.memory_bytes = *o.memory_bytes;
    if (o.pids) limits.pids = *o.pids;
    if (o.tmp_bytes) limits.tmp_bytes = *o.tmp_bytes;
    if (o.disk_bytes) limits.disk_bytes = *o.disk_bytes;
    if (o.files) limits.files = *o.files;
    return limits;
  }
  // Host paths every sandboxed job may read, bound read-only at the same place (a Python or
  // conda installation outside /usr, say).
  std::vector<std::string> job_readonly_paths;
  // The program each host runs as `<supervisor_exe> __supervise ...`; empty: this binary.
  std::string supervisor_exe;
  // Tests only: wraps the executor the controller made (to hold a launch up, say).
  std::function<std::unique_ptr<exec::Executor>(std::unique_ptr<exec::Executor>)> wrap_executor;
  // The directories under which file:// URIs of a payload (input channels,
  // CheckpointConfig.S3Uri, OutputDataConfig.S3OutputPath) may lead, canonical; none: every
  // file:// URI is refused. `allot server` refuses a root that is / or overlaps data_dir.
  std::vector<std::string> file_roots;
  // The master key that seals the users' secrets in the store (api/secret_box.h); empty:
  // <data_dir>/master.key. Created at first start when absent.
  std::string master_key_file;
  // Audit records older than this are dropped (checked at start and every 1,024 records).
  Duration audit_retention = Seconds(90LL * 24 * 3600);
  // Usage history (docs/observability.md, History and reports): a sample of every share every
  // interval; samples and job events older than the retention are dropped.
  Duration history_interval = Seconds(10);
  Duration history_retention = Seconds(90LL * 24 * 3600);
  // Finished jobs' trees in the jobs' file system (finished_trees.h): once it is more than the
  // high percent used, they are removed, the share holding the most first, until it is no more
  // than the low percent used (kubelet evicts at 90 % by default). 100: never removed.
  int job_files_high_percent = 90;
  int job_files_low_percent = 85;
  // Past this percent (and the high one), with no finished tree left to remove, the job with the
  // largest tree in the share holding the most is terminated, one at a time (kubelet evicts
  // under disk pressure): running jobs alone must not fill the disk the store writes to.
  // 100: never.
  int job_files_evict_percent = 95;
  Duration job_files_check_interval = Seconds(10);
  // Disk space the store holds in reserve (<data_dir>/store-reserve): released when a write
  // fails, so the rollback, the jobs' ends and an eviction can be recorded on a full disk, and
  // made again once the data directory's file system has room (docs/server.md, Durability).
  // 0: none.
  std::int64_t store_reserve_bytes = std::int64_t{32} << 20;
  // Tests only: the jobs' file system's used and total bytes, in place of what statvfs says.
  std::function<std::pair<std::int64_t, std::int64_t>()> job_files_usage;
  // Where jobs run: "local" (processes on this machine) or "slurm" (exec/slurm_executor.h).
  std::string executor = "local";
  // --executor slurm: each instance type's placement (--slurm-map), Slurm's configuration
  // (--slurm-conf; empty: SLURM_CONF of the environment) and the directory every node mounts at
  // the same path (--shared-dir), which then holds the jobs' directories instead of data_dir.
  std::map<std::string, exec::SlurmPlacement> slurm_map;
  std::string slurm_conf;
  std::string shared_dir;
  // --slurm-bin-dir: the directory of sbatch, squeue, scancel, sinfo, sacct and srun, on this
  // machine and on the nodes (the batch step runs srun from it); empty: each is found on PATH.
  std::string slurm_bin_dir;
  std::string log_level = "info";   // trace, debug, info, warn, error, off (server/log.h)
  std::string log_format = "text";  // text or json
  // The bearer token GET /metrics requires (docs/observability.md); empty:
  // <data_dir>/metrics-token, made at first start (mode 0600).
  std::string metrics_token_file;
  // The optional host map: per instance type, one entry per instance slot with its own GPUs
  // (CUDA_VISIBLE_DEVICES) and/or CPU set. A dispatched host takes the lowest free slot of its
  // type and gives it back when its attempt ends.
  struct Slot {
    std::string gpus;
    std::string cpus;
  };
  std::map<std::string, std::vector<Slot>> host_map;
  // The HTTP server's limits (src/server/http_server.cc). A request's headers must arrive within
  // http_header_timeout of its first byte, its body within http_body_timeout of its headers, and
  // its answer must be written within http_body_timeout; a keep-alive connection waits
  // http_idle_timeout for its next request. A connection beyond http_max_connections_per_address
  // from one client address (all of loopback is one), or beyond http_max_connections in all,
  // first closes an idle keep-alive connection to make room, then the oldest one still reading a
  // request, else is answered 503 and closed; connections still reading a request have a smaller
  // budget of their own (server/admission.h). http_threads is the number of workers that run
  // requests.
  Duration http_header_timeout = Seconds(10);
  Duration http_body_timeout = Seconds(30);
  Duration http_idle_timeout = Seconds(30);
  int http_max_connections_per_address = 64;
  int http_max_connections = 1024;
  // ListServiceJobs examines at most this many jobs per page: a filter that matches few of many
  // answers a short page with a nextToken instead of holding the server's lock for a scan.
  std::size_t list_scan_budget = 20'000;
};

}  // namespace allot::server
