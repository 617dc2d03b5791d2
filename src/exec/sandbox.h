#pragma once

// The sealed sandbox of one host (DESIGN.md §3, "Every job is hostile"): what bubblewrap is told
// to build, the job's own user, its resource limits and their cgroups. The pure parts (argument
// lists, parsing, formatting) are here so they can be tested without running anything; the
// supervisor (supervisor.h) and the in-sandbox exec step (`allot __jobexec`, job_exec.h) apply
// them.
//
// The sandbox, as the local executor builds it where bubblewrap works (run as root):
//   - bwrap runs as root with a clean environment and makes new PID, IPC and UTS namespaces
//     (hostname = the host name), a new session, and dies with the supervisor. The network
//     namespace is the machine's: the hosts of an attempt talk over loopback.
//   - The file system is a fresh tmpfs root holding: /usr and the /bin, /sbin, /lib* entries
//     read-only (symbolic links where the machine has merged /usr), a few files of /etc
//     (kEtcFiles) plus generated passwd, group and hosts, the admin's extra read-only paths,
//     /dev (plus GPU device nodes), /proc of its own PID namespace, a private size-capped /tmp
//     and /dev/shm, /opt/ml (its host directory; channels read-only) and its checkpoint
//     directory. Never the data directory, another job's files, /root or /home.
//   - The command bwrap starts is `/run/allot/exec __jobexec` (the allot binary bound read-only),
//     which reads the job's environment from /run/allot/environment, drops to the job's uid/gid
//     with no supplementary groups, an empty capability bounding set and no_new_privs, and execs
//     the job's command. The payload's Environment reaches only that command.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace allot::exec {

// The unprivileged user a job runs as: its quota share's (server/job_identity.h).
struct JobUser {
  uid_t uid = 0;
  gid_t gid = 0;
  bool operator==(const JobUser&) const = default;
};
// nobody/nogroup: the user of a sandboxed job that was given none while the server is root.
inline constexpr JobUser kNobodyUser{65534, 65534};

// Per-host limits; 0 means none.
struct JobLimits {
  std::int64_t memory_bytes = 0;  // memory cgroup limit (with swap where the kernel counts it)
  std::int64_t pids = 0;          // pids cgroup: processes and threads
  std::int64_t tmp_bytes = 0;     // the size of the private /tmp (a tmpfs, counted as memory)
  // /opt/ml, the host's logs and the checkpoint directory, checked while it runs and at its end;
  // no single file the job writes may be larger (RLIMIT_FSIZE), so no burst outruns the check.
  std::int64_t disk_bytes = 0;
  std::int64_t files = 0;  // files and directories in those trees, checked with disk_bytes
  bool operator==(const JobLimits&) const = default;
};

// "1 GiB", "512 MiB", "10 GiB", "1536 KiB", "100 B": the largest binary unit that divides it.
std::string FormatBytes(std::int64_t bytes);

// A size: digits with an optional unit K, M, G, T (powers of 1024; "KiB", "KB", "k" alike), e.g.
// "8G", "512MiB", "1048576". InvalidArgument otherwise.
Result<std::int64_t> ParseBytes(std::string_view text);

// "uid=200001 gid=200001 memory=8 GiB pids=4096 tmp=1 GiB disk=10 GiB", each limit only when
// set; "memory=none" style never appears. For logs and the job's record.
std::string DescribeLimits(const std::optional<JobUser>& user, const JobLimits& limits);

// The job's environment as a file: NUL-terminated "NAME=value" entries. Names with '=' or NUL
// and values with NUL cannot be encoded (InvalidArgument).
Result<std::string> EncodeEnvironment(const std::map<std::string, std::string>& environment);
std::map<std::string, std::string> DecodeEnvironment(std::string_view text);

// The environment every job starts from before its payload's Environment and the SM_* variables.
std::map<std::string, std::string> BaseJobEnvironment();

// The fixed, clean environment of the supervisor and bwrap: nothing from the server's or the
// payload's environment.
std::map<std::string, std::string> CleanEnvironment();

// One entry of the machine's root the sandbox may show: /usr, /bin, /lib64...
struct RootEntry {
  std::string name;         // "bin"
  std::string link_target;  // "usr/bin" where it is a symbolic link; empty for a directory
};

// The entries of kSystemDirs that exist on this machine, as the machine has them.
std::vector<RootEntry> SystemRootEntries();

// Where the sandbox finds its exec step and the job's environment.
inline constexpr char kSandboxExec[] = "/run/allot/exec";
inline constexpr char kSandboxEnvironment[] = "/run/allot/environment";

// Everything bwrap needs for one host. Paths are host paths unless named `*_seen`.
struct BwrapPlan {
  std::string bwrap = "/usr/bin/bwrap";
  std::string hostname;  // algo-K
  bool die_with_parent = true;
  std::vector<RootEntry> system;       // SystemRootEntries()
  std::vector<std::string> etc_files;  // absolute /etc paths bound read-only if present
  std::vector<std::pair<std::string, std::string>> generated;  // host file -> /etc/... (ro)
  std::vector<std::string> readonly_paths;  // the admin's extra paths, same place, ro
  std::vector<std::string> devices;         // /dev/nvidia0 ... bound with device access
  std::int64_t tmp_bytes = 0;               // 0: an uncapped tmpfs
  std::string ml_dir;                       // -> /opt/ml (rw)
  std::string checkpoint_dir;               // -> checkpoint_seen (rw)
  std::string checkpoint_seen;
  std::vector<std::pair<std::string, std::string>> channels;  // host dir -> seen dir (ro)
  std::string exec;                  // the allot binary -> kSandboxExec (ro)
  std::string environment_file;      // -> kSandboxEnvironment (ro)
  std::optional<JobUser> user;       // dropped to by the exec step; none: keep bwrap's user
  std::vector<std::string> command;  // the job's command (taskset prefix included)
};

// The full argument list, bwrap first, ending in
// `-- /run/allot/exec __jobexec --env-file ... [--uid U --gid G] -- <command...>`.
std::vector<std::string> BwrapArgs(const BwrapPlan& plan);

// The index of the first `--ro-bind source DEST` before bwrap's own `--`, or npos. The
// supervisor makes each such pair `--ro-bind-fd FD DEST`, from a descriptor it opened: bwrap then
// mounts what the descriptor holds and checks that the mount is that directory, so a link put on
// the path after the supervisor opened it changes nothing.
std::size_t FindReadOnlyBind(const std::vector<std::string>& bwrap_args, const std::string& source);

// The /etc files a job sees besides the generated passwd, group and hosts.
const std::vector<std::string>& EtcFiles();

// /etc/passwd and /etc/group for the sandbox: root, the job's user ("job", home /tmp) and nobody.
std::string PasswdFor(const JobUser& user);
std::string GroupFor(const JobUser& user);

// --- cgroups --------------------------------------------------------------------------------

// Which cgroup hierarchy a machine gives the limits.
enum class CgroupKind { kNone, kV1, kV2 };

// The cgroups of one host, created under the supervisor's own cgroup (so limits an admin put on
// the server hold for its jobs too): v1 <mount>/<controller>/<own>/allot-jobs/<name> for memory
// and pids, v2 <mount>/<own>/allot-jobs/<name>.
struct CgroupPlan {
  CgroupKind kind = CgroupKind::kNone;
  std::vector<std::string> parents;  // created if missing (v2: with +memory +pids delegated)
  std::vector<std::string> dirs;     // the host's own groups, created fresh
  std::vector<std::pair<std::string, std::string>> writes;  // file, value
  std::vector<std::string> procs;  // cgroup.procs files the job's process joins
  std::string oom_events;          // v1 memory.oom_control / v2 memory.events ("oom_kill N")
};

// The processes in the plan's own groups (`dirs`) now: every process of the job's host, however
// it left the process tree (a daemon, an orphan).
std::vector<pid_t> CgroupMembers(const CgroupPlan& plan);

// `own_cgroups` is /proc/self/cgroup's text; `v2_controllers` the root's cgroup.controllers
// ("" where there is none); `mount` the cgroup mount point (/sys/fs/cgroup). kNone where neither
// v1 memory/pids nor a v2 hierarchy with memory and pids is there, or no limit is set.
CgroupPlan PlanCgroups(std::string_view own_cgroups, bool v1_memory, bool v1_pids,
                       std::string_view v2_controllers, const std::string& mount,
                       const std::string& name, const JobLimits& limits);

// The "oom_kill N" count in memory.oom_control / memory.events text; 0 if absent.
std::int64_t OomKills(std::string_view events);

}  // namespace allot::exec

namespace allot::exec {

// --- applying them (the supervisor, as root) ------------------------------------------------

// PlanCgroups for this process on this machine (/proc/self/cgroup, /sys/fs/cgroup).
CgroupPlan PlanOwnCgroups(const std::string& name, const JobLimits& limits);

// Creates the plan's groups and writes its limits. An error leaves nothing behind.
Status CreateCgroups(const CgroupPlan& plan);

// SIGKILLs whatever is left in the plan's groups, then removes them (and their allot-jobs
// parents once empty). Best effort: a group that will not go is left.
void RemoveCgroups(const CgroupPlan& plan);

// The OOM kills counted in the plan's memory group; 0 without one.
std::int64_t CgroupOomKills(const CgroupPlan& plan);

// What the trees under some paths hold: the bytes allocated to their files and directories
// (st_blocks), and how many there are (each takes an inode, which a byte count does not see).
// Links are not followed.
struct DiskUsed {
  std::int64_t bytes = 0;
  std::int64_t files = 0;
  // A directory deeper than kMaxDiskWalkDepth below a path, or one that could not be opened: what
  // it holds is not counted, so the caller takes the tree as over its limits.
  bool uncounted = false;
};
inline constexpr int kMaxDiskWalkDepth = 256;
// The walk stops early once `stop_at` is passed (either figure, where positive): the caller needs
// to know no more, and a job cannot make the walk of its trees longer than its limits.
//
// The files that the processes `holders` keep open or mapped after deleting them count too,
// where they lie on the file system of one of `paths` and belong to the holder's user: no walk
// sees them, and they take the disk until they are closed (each once, however many descriptors
// name it). Their number is the job's to choose (bounded by its descriptors), so the caller
// paces these checks by how long they take. A file in flight on a socket is not seen, nor one
// held by a process the caller does not name: each is bounded by RLIMIT_FSIZE alone.
//
// A file under one of `by_length` counts its length where that is more than its blocks: a
// checkpoint directory, whose copies are budgeted by length (CopyBudget). Elsewhere a sparse
// file counts what it takes (a database mapped with a large size, say).
//
// A walk that `cancel` (if given) ends early leaves the rest uncounted (a server that stops).
DiskUsed DiskUsage(const std::vector<std::string>& paths, const DiskUsed& stop_at = {},
                   const std::vector<pid_t>& holders = {},
                   const std::vector<std::string>& by_length = {},
                   const std::atomic<bool>* cancel = nullptr);

}  // namespace allot::exec
