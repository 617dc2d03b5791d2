#pragma once

// What a job may reach of other processes' IPC on the machine beyond its sandbox: its abstract
// UNIX sockets and its signals, scoped to the job with Landlock (Linux 6.12, ABI 6). The sandbox
// shares the machine's network namespace (a job's hosts talk over TCP, and jobs reach the
// network), and abstract sockets live in it with no file permission to guard them: another
// team's job found a listener's name in /proc/net/unix, connected, read its data and wrote into
// it. Scoped, a job connects only to abstract sockets made by its own processes (NCCL's and
// PyTorch's within the job keep working), and signals only its own processes.
//
// Applied by the exec step (`allot __jobexec`) after no_new_privs, before the system call
// filter, so it binds the job and everything it starts. On a kernel without the scopes the job
// runs without them; the server says so once, at its start.

#include "common/status.h"

namespace allot::exec {

// Scopes the calling thread (and what it starts after) to itself. True when scoped, false where
// this kernel has no Landlock scopes (older than 6.12, or Landlock not enabled); an error when
// the kernel has them and refused.
Result<bool> ScopeJobIpc();

// Whether this kernel offers the scopes (Landlock ABI 6 or later).
bool JobIpcScopeAvailable();

}  // namespace allot::exec
