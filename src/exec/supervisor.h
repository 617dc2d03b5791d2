#pragma once

// The supervisor of one host of an attempt: `allot __supervise ...`, a hidden subcommand. The
// local executor starts it in its own session with the host's environment, stdin from /dev/null
// and stdout/stderr already redirected to the host's log files; it does not die with the server.
//
//   allot __supervise --dir <host_dir> --output-dir <host-side /opt/ml/output>
//                     [--grace-ms N] [--ready-fd N] [--sandboxed] [--bind-by-fd DIR...]
//                     [--bind-as UID:GID]
//                     [limits: see the usage line] -- <command...>
//
// --bind-by-fd DIR (sandboxed; one per channel): before the start the supervisor opens DIR and
// makes each `--ro-bind DIR DEST` of bwrap's arguments `--ro-bind-fd FD DEST`, so bwrap mounts the
// directory the supervisor holds, not whatever the path leads to by then. DIR comes from the
// server with its links resolved (it checked it against its file roots), and is opened one
// component at a time with no link followed: if a link was put on the path since, the start
// fails (127, reported on --ready-fd), saying nothing of where the link leads.
//
// --bind-as UID:GID (with --bind-by-fd; the server is root): the channels are opened as the job's
// user would open them (its fsuid and fsgid, no supplementary group), so bwrap, which mounts as
// root, binds no directory the job's uid could not reach by itself: a team's 0700 directory under
// a file root keeps its world-readable contents from another team's job. A channel below a
// directory that uid may not pass fails the start (127; FailedPrecondition on --ready-fd).
//
// It starts the command in its own process group (the supervisor's session, the command's group,
// inheriting the environment and the logs), then writes <host_dir>/supervisor.json (host_files.h)
// and, with --ready-fd, reports "0" (or "<status code> <message>" when the command could not be
// started, e.g. "1 cannot run 'x': No such file or directory") on that descriptor and closes it.
//
// Stopping: the supervisor owns the kill deadline, so the grace holds while no server runs. On
// SIGTERM (or SIGINT) it reads <host_dir>/stop.json {reason, grace_ms} (missing: "termination"
// and --grace-ms, default 120000), writes the reason word to <output-dir>/stop-reason (once, the
// first reason stays), SIGTERMs the command's group (once) and SIGKILLs it when the grace ran
// out; a later SIGTERM with a shorter grace brings the deadline forward, never back. With
// --sandboxed (the command is bwrap) the SIGTERM goes to every process of the group but its
// leader: bwrap would die of it and take the job along (--die-with-parent); the SIGKILL goes to
// all.
//
// When the command exits, whatever is left in its group is SIGKILLed, <host_dir>/status.json is
// written and the supervisor exits 0. While status.json cannot be written (a full disk) the
// supervisor keeps the status in memory and retries (50 ms, doubling up to 2 s; said once on
// stderr), so it never exits without one; it gives up with 1 only once <host_dir> is gone. Other
// exits: 1 if supervisor.json could not be written, 2 for bad arguments, 127 if the command could
// not be started. SIGHUP and SIGPIPE are ignored.

namespace allot::exec {

// argv holds the arguments after "__supervise" (argv[0] is the first option, e.g. "--dir").
int SuperviseMain(int argc, char** argv);

}  // namespace allot::exec
