#include "server/checkpoint_claims.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "server/api_error.h"
#include "server/local_paths.h"

namespace allot::server {

namespace {

const char kField[] = "serviceRequestPayload.CheckpointConfig.S3Uri";

// The payload names a checkpoint location, or may (a payload with an escape sequence may spell
// the field name in escapes, so only one without any is ruled out by its text).
bool MayNameCheckpoint(const std::string& payload) {
  return payload.find('\\') != std::string::npos ||
         payload.find("CheckpointConfig") != std::string::npos;
}

}  // namespace

bool CheckpointClaims::Live(const Owner& owner, const Jobs& jobs) {
  auto it = jobs.find(owner.seq);
  return it != jobs.end() && it->second.id == owner.id && !model::IsTerminal(it->second.status);
}

Status CheckpointClaims::LoadRestored(const Jobs& jobs, store::Store& store) {
  Map restored;
  for (const auto& [seq, job] : jobs) {
    if (model::IsTerminal(job.status)) continue;
    Result<std::optional<std::string>> payload = store.Get(store::Kind::kJobPayload, job.id);
    if (!payload.ok()) {
      return Internal("cannot read the checkpoint locations of the stored jobs: " +
                      payload.status().message());
    }
    // None: a submission since the start whose batch is not written yet; it named no location,
    // or it would have come here before.
    if (!payload.value() || !MayNameCheckpoint(*payload.value())) continue;
    std::string dir;
    try {
      dir = api::ParsePayload(*payload.value(), job.name).launch.checkpoint_sync_dir;
    } catch (const ClientError&) {
      continue;  // no longer parses (the rules changed): it cannot launch, so it uses nothing
    }
    if (!dir.empty()) {
      restored.emplace(CanonicalPath(dir).value_or(dir), Owner{job.seq, job.id});
    }
  }
  claims_.merge(restored);
  loaded_ = true;
  return {};
}

Status CheckpointClaims::RefuseLive(Map::iterator first, Map::iterator last, const Jobs& jobs,
                                    const std::string& dir, const char* relation) {
  while (first != last) {
    if (!Live(first->second, jobs)) {
      first = claims_.erase(first);
      continue;
    }
    return InvalidArgument(std::string(kField) + ": file://" + dir + " " + relation + " job " +
                           first->second.id + ", which has not finished");
  }
  return {};
}

Status CheckpointClaims::Claim(const std::string& dir, const JobRecord& job, const Jobs& jobs,
                               store::Store& store) {
  if (dir.empty()) return {};
  if (!loaded_) ALLOT_RETURN_IF_ERROR(LoadRestored(jobs, store));
  const std::string real = CanonicalPath(dir).value_or(dir);
  // The same location, or one that holds it: `real` itself and each directory above it.
  for (std::size_t end = real.size(); end != std::string::npos && end > 0;
       end = real.rfind('/', end - 1)) {
    const std::string above = real.substr(0, end);
    auto [first, last] = claims_.equal_range(above);
    const char* relation =
        above == real ? "is the checkpoint location of" : "is inside the checkpoint location of";
    ALLOT_RETURN_IF_ERROR(RefuseLive(first, last, jobs, dir, relation));
  }
  // A location below it: the keys that start with "real/" sort together.
  const std::string below = real == "/" ? "/" : real + "/";
  auto first = claims_.lower_bound(below);
  auto last = first;
  while (last != claims_.end() && last->first.compare(0, below.size(), below) == 0) ++last;
  ALLOT_RETURN_IF_ERROR(RefuseLive(first, last, jobs, dir, "contains the checkpoint location of"));
  if (claims_.size() >= sweep_at_) Sweep(jobs);  // before the new claim: its job is not in `jobs`
  claims_.emplace(real, Owner{job.seq, job.id});
  return {};
}

void CheckpointClaims::Sweep(const Jobs& jobs) {
  std::erase_if(claims_, [&jobs](const auto& claim) { return !Live(claim.second, jobs); });
  sweep_at_ = std::max(kFirstSweep, 2 * claims_.size());
}

}  // namespace allot::server
