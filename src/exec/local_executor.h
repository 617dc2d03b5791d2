#pragma once

// The local executor: every host of an attempt runs under its own supervisor process
// (`<self_exe> __supervise`, supervisor.h), started in its own session, which starts the job's
// command in its own process group, owns the stop deadline and records the exit status in the
// host's directory (host_files.h). Supervisors do not die with the server; a restarted server
// re-adopts them with Adopt().
//
// Launch(): restores the checkpoints (RestoreCheckpoints), prepares every host (PrepareHost),
// starts the supervisors with the server's environment overlaid by the host's, stdout/stderr on
// <host_dir>/stdout|stderr and the host's working directory, and returns once each one runs the
// job's command (or the error that kept one from starting; the others are stopped). An empty
// LaunchSpec.self_exe means /proc/self/exe: right for the allot binary itself.
//
// Stop(): writes <host_dir>/stop.json {reason, grace} and SIGTERMs each supervisor, which writes
// the reason to /opt/ml/output/stop-reason, SIGTERMs the job's group and SIGKILLs it after the
// grace, server or no server. When one host fails on its own the others are stopped the same way
// ("termination", LocalOptions::failure_grace).
//
// Threads: one watcher thread polls pidfds of the supervisors (launched ones are children and are
// reaped; adopted ones are watched by pidfd and signalled through it, so a recycled pid is never
// signalled), scans the job's checkpoint directory every 500 ms while an attempt runs and reports
// `checkpoint` when its newest file time moved forward, and one callback thread delivers
// `started`, `checkpoint` and `ended`, in order, one at a time. When an attempt's last host is
// gone, a sync worker (attempt_end.h EndSyncs) copies the checkpoints (SyncCheckpoints), then the
// callback thread reports a last `checkpoint` if the newest file time moved, then `ended`.
// Callbacks never run on the thread that called in.
//
// A host whose supervisor is gone without status.json "vanished": its job's group is SIGKILLed
// if its leader still runs (pid and start time from supervisor.json) and the attempt fails.
// Adopt() of a host whose directory or supervisor.json is gone kills its supervisor and job's
// group by AdoptSpec::recorded_hosts, pid and start time verified (local_hosts.h KillRecorded).
//
// Detach() (and the destructor) stop both threads; pending callbacks are dropped, processes keep
// running. Detach() may be called from a callback; the destructor must not run on the callback
// thread. The server must not set SIGCHLD to SIG_IGN nor reap with waitpid(-1, ...).

#include <string>

#include "exec/executor.h"
#include "exec/sagemaker_layout.h"

namespace allot::exec {

// "algo-<index>", index from 1.
std::string HostName(int index);

// The AttemptExit reason for a host that ended with `exit_code` (negative: killed by that signal):
// "Received status from SageMaker: AlgorithmError: algo-2 exited with code 3" or
// "Received status from SageMaker: AlgorithmError: algo-2 was killed by signal 9".
std::string HostFailureReason(const std::string& host, int exit_code);

// "Received status from SageMaker: AlgorithmError: host algo-2 vanished without an exit status".
std::string HostVanishedReason(const std::string& host);

// "Received status from SageMaker: AlgorithmError: <text of /opt/ml/output/failure>".
std::string JobFailureReason(const std::string& failure);

// As NewLocalExecutor(options, callbacks) with the given layout (sandbox or not);
// die_with_parent is always set (the supervisor starts bwrap from its only thread).
std::unique_ptr<Executor> NewLocalExecutor(const LocalOptions& options, const LayoutOptions& layout,
                                           Callbacks callbacks);

}  // namespace allot::exec
