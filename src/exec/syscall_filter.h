#pragma once

// The system call filter of a sandboxed job (seccomp, through libseccomp): loaded by the exec
// step (`allot __jobexec`, job_exec.h) after it dropped to the job's user and set no_new_privs,
// just before it execs the job's command, so it binds the job and everything it starts.
//
// Every system call is allowed but the kernel interfaces an ML job has no need of and that
// widen what hostile code can reach in the kernel, as container runtimes' default profiles
// refuse them (Docker's, containerd's RuntimeDefault):
//   - io_uring: its requests run outside any filter, and it has been a steady source of kernel
//     exploits (refused with ENOSYS, so runtimes and libraries fall back to epoll);
//   - a new user namespace (unshare, clone; clone3, whose flags a filter cannot read, answers
//     ENOSYS so the C library falls back to clone): inside one, a job holds every capability
//     and reaches the kernel code behind them (mounts, netfilter, ...); joining one (setns);
//   - the key rings (not namespaced), BPF, perf events, userfaultfd;
//   - what needs a capability the job does not have anyway (modules, kexec, mounts, reboot,
//     swap, accounting, the kernel log), refused here a second time.
// The rules cover the 32-bit x86 and x32 system calls too (any other architecture's are
// refused by killing the process): a job cannot step around them through another ABI.

#include <linux/filter.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace allot::exec {

// Loads the filter into the calling thread (with no_new_privs set, as seccomp requires of a
// process without CAP_SYS_ADMIN). Thread: the caller and what it starts after.
Status LoadJobSyscallFilter();

// Whether the filter loads here and refuses what it should, asked at a server's start (a job
// whose filter does not load is not run; better the operator hears it once, at the start, than
// every team from every job): loaded on a thread of its own, which then tries a refused call or
// two and ends, taking the filter with it. The rest of the process is left unfiltered.
Status ProbeJobSyscallFilter();

// The filter as the classic BPF program the kernel runs, not loaded: for the tests, which run it
// over system calls of every ABI it covers, whatever this machine serves.
Result<std::vector<sock_filter>> JobSyscallFilterProgram();

// The system calls the filter refuses outright, by name, for the record and the tests.
const std::vector<std::string>& RefusedSyscalls();

}  // namespace allot::exec
