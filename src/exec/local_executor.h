#pragma once

// The local executor: every host of an attempt is a child process of this one, in its own session
// (so its process group can be signalled as a whole and it survives the server).
//
// Threads: one reaper thread polls the executor's own children (waitid on their pids only, with
// WNOHANG every few milliseconds; no signal handler is installed and no other child is reaped), and
// one callback thread delivers `started` and `ended`, in order, one at a time. Callbacks never run
// on the thread that called Launch() or Stop(), so the caller may hold its own locks while calling
// in. `started` for an attempt always comes before its `ended`.
//
// When a host's main process exits, whatever it left behind in its process group is SIGKILLed (as
// when a container's init exits); the executor signals a group only while it has not yet reaped
// the group's leader, so a recycled pid is never signalled.
//
// Detach() (and the destructor) stop both threads; pending callbacks are dropped and, once it
// returns, no callback runs. Processes keep running and are not reaped any more. Detach() may be
// called from a callback; the destructor must not run on the callback thread.
//
// The server must not set SIGCHLD to SIG_IGN (children would be reaped by the kernel and their
// exit codes lost) and must not reap with waitpid(-1, ...).

#include <string>

#include "exec/executor.h"

namespace allot::exec {

// NewLocalExecutor() (declared in executor.h) creates the local executor; these helpers are the
// conventions it follows, exposed for tests and for the server's messages.

// "algo-<index>", index from 1.
std::string HostName(int index);

// SM_HOSTS for `count` hosts: ["algo-1","algo-2"].
std::string HostsJson(int count);

// The AttemptExit reason for a host that ended with `exit_code` (negative: killed by that signal):
// "Received status from SageMaker: AlgorithmError: algo-2 exited with code 3" or
// "Received status from SageMaker: AlgorithmError: algo-2 was killed by signal 9".
std::string HostFailureReason(const std::string& host, int exit_code);

}  // namespace allot::exec
