#pragma once

// The last step before a sandboxed job's command: `allot __jobexec`, a hidden subcommand that
// bubblewrap starts inside the sandbox (bound read-only at /run/allot/exec, sandbox.h).
//
//   allot __jobexec --env-file FILE [--uid U --gid G] -- COMMAND...
//
// Reads the job's environment from FILE (sandbox.h EncodeEnvironment), then, with --uid/--gid,
// clears the supplementary groups, empties the capability bounding set and the inheritable and
// ambient sets, and sets the real, effective and saved gid and uid; sets no_new_privs; checks
// that no capability is left; and execs COMMAND (looked up in the job's PATH) with exactly that
// environment. Exits 127 with a message on stderr when any step fails, 2 for bad arguments: a
// job never starts with more privilege than asked for.

#include "common/status.h"
#include "exec/sandbox.h"

namespace allot::exec {

// argv holds the arguments after "__jobexec".
int JobExecMain(int argc, char** argv);

// What JobExecMain does before its exec, for other steps that must run as the job's user (the
// checkpoint copies): no groups, no capabilities, the job's uid and gid, no_new_privs.
Status BecomeJobUser(const JobUser& user);

}  // namespace allot::exec
