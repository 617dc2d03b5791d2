#pragma once

// Where the file:// URIs of a job's payload lead, checked on this machine's file system at
// submission and again at launch: only under the --file-root directories, never into the data
// directory.

#include <optional>
#include <string>
#include <vector>

#include "api/payload.h"
#include "common/status.h"
#include "exec/sandbox.h"

namespace allot::server {

// The names in link targets a resolution may look at (a path's own names are bounded by the
// request's size); one budget may serve all the paths of a request, so that its cost is
// bounded, not each path's.
struct PathBudget {
  int names_left = 4096;
};

// `path` (absolute, without '.' or '..' segments) with every symbolic link in the part of it
// that exists resolved; the part that does not exist yet is kept as written. nullopt when that
// cannot be decided: a dangling or looping link, a directory the server may not search; then
// `error` (if given) gets the errno (EACCES for a directory that may not be searched; 0 for a
// dangling link; ELOOP past 40 links or past `budget`, a fresh one if none is given). Each
// lookup is made from the descriptor of the directory before it, as the calling thread's file
// system user (env/acting_as.h).
std::optional<std::string> CanonicalPath(const std::string& path, int* error = nullptr,
                                         PathBudget* budget = nullptr);

// The --file-root directories, canonical (CanonicalPath). An error (kInvalidArgument, naming the
// flag) for a root that is not an absolute path to an existing directory, that is /, or that
// overlaps `data_dir`: equal to it, inside it or containing it.
Result<std::vector<std::string>> CanonicalFileRoots(const std::vector<std::string>& roots,
                                                    const std::string& data_dir);

// Where the payload's file:// paths lead, each resolved once as `as` (every symbolic link
// resolved), checked to lie under the roots and outside the data directory (the refusals of
// CheckLocalPaths below, but for whether each is there and may be used: CheckLocalUse), so
// that what is claimed (checkpoint_claims.h) and what the executor binds or copies is what was
// checked, whatever a link on the way is changed to afterwards (the executor refuses a channel
// on which a link appears).
Result<api::LaunchInfo> ResolveLocalPaths(const api::ParsedPayload& parsed,
                                          const std::vector<std::string>& file_roots,
                                          const std::string& data_dir,
                                          const std::optional<exec::JobUser>& as);

// The rest of the checks, on the paths as ResolveLocalPaths resolved them (`resolved`), asked as
// `as`: with `channels_exist`, each channel must be there (at launch the executor asks); with
// `as`, the checkpoint location must be a directory that user may read and write, or one it may
// make in the nearest directory that is there (its copies run as that user). A submission runs
// these after the checkpoint claims, so nothing of another share's location is told.
Status CheckLocalUse(const api::ParsedPayload& parsed, const api::LaunchInfo& resolved,
                     const std::optional<exec::JobUser>& as, bool channels_exist);

// The submission-time checks of the local paths a payload names: each input channel source,
// CheckpointConfig.S3Uri and OutputDataConfig.S3OutputPath must lie, once symbolic links are
// resolved, in one of `file_roots` (Options::file_roots; none: every file:// URI is refused) and
// outside `data_dir`; with `channels_exist`, an input channel's source must exist. A refusal
// (kInvalidArgument) names the field and the --file-root setting. The roots are resolved again at
// each check. (ResolveLocalPaths, then CheckLocalUse: a submission checks the checkpoint claims,
// server/checkpoint_claims.h, by the paths as written before it resolves them, and on where they
// led before it asks whether they are there, so nothing inside another share's location is
// told, whatever that location's mode.)
//
// With `as` (the user the share's jobs run as: a root server with the sandbox), each path is
// resolved, and a channel's existence asked, as that user (env/acting_as.h; the roots and the
// data directory as the server): a path below a directory that user may not search is refused
// as one its jobs may not reach, saying nothing of what lies past that directory, so a share
// learns of another team's closed directory no more than its own jobs could.
Status CheckLocalPaths(const api::ParsedPayload& parsed, const std::vector<std::string>& file_roots,
                       const std::string& data_dir, bool channels_exist,
                       const std::optional<exec::JobUser>& as);

// Whether the payload names any local path (a file:// URI): the checks above touch the file
// system only then.
bool HasLocalPaths(const api::ParsedPayload& parsed);

}  // namespace allot::server
