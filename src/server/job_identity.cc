#include "server/job_identity.h"

#include <charconv>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace allot::server {
namespace {

constexpr std::string_view kPrefix = "job-uid/";
constexpr std::uint32_t kNobody = 65534;
constexpr std::uint64_t kMaxId = 2147483646;  // below 2^31 - 1: safe for every tool

std::mutex& AllocationMutex() {
  static std::mutex mu;
  return mu;
}

std::optional<std::uint32_t> ParseUid(std::string_view text) {
  std::uint32_t value = 0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

exec::JobUser UserOf(std::uint32_t uid) {
  return exec::JobUser{static_cast<uid_t>(uid), static_cast<gid_t>(uid)};
}

// The lowest uid of the range no stored share holds.
Result<std::uint32_t> FreeUid(store::Store& store, const JobUidRange& range) {
  Result<std::vector<store::Record>> records = store.Load(store::Kind::kMeta);
  if (!records.ok()) return records.status();
  std::set<std::uint32_t> taken;
  for (const store::Record& record : *records) {
    if (record.key.rfind(kPrefix, 0) != 0) continue;
    if (const auto uid = ParseUid(record.value)) taken.insert(*uid);
  }
  for (std::uint64_t uid = range.first; uid < std::uint64_t{range.first} + range.count; ++uid) {
    if (uid != kNobody && taken.count(static_cast<std::uint32_t>(uid)) == 0) {
      return static_cast<std::uint32_t>(uid);
    }
  }
  return ResourceExhausted("no free job uid left in " + std::to_string(range.first) + ":" +
                           std::to_string(range.count) +
                           " (--job-uid-range): every one is a "
                           "quota share's");
}

}  // namespace

std::string JobUidKey(const std::string& queue, const std::string& share) {
  return std::string(kPrefix) + queue + "/" + share;
}

Result<JobUidRange> ParseJobUidRange(const std::string& text) {
  const std::size_t colon = text.find(':');
  std::optional<std::uint32_t> first;
  std::optional<std::uint32_t> count;
  const std::string_view view = text;
  if (colon != std::string::npos) {
    first = ParseUid(view.substr(0, colon));
    count = ParseUid(view.substr(colon + 1));
  }
  if (!first || !count) {
    return InvalidArgument("'" + text + "' is not FIRST:COUNT (e.g. 200000:10000)");
  }
  if (*first < 1000 || *count < 1 || std::uint64_t{*first} + *count - 1 > kMaxId) {
    return InvalidArgument("'" + text +
                           "': the range must start at 1000 or above, hold at least one uid "
                           "and end below 2147483647");
  }
  return JobUidRange{*first, *count};
}

Result<std::optional<exec::JobUser>> StoredShareUser(store::Store& store, const std::string& queue,
                                                     const std::string& share) {
  Result<std::optional<std::string>> stored =
      store.Get(store::Kind::kMeta, JobUidKey(queue, share));
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return std::optional<exec::JobUser>();
  const std::optional<std::uint32_t> uid = ParseUid(**stored);
  if (!uid || *uid == 0) {
    return Internal("the store holds a bad job uid '" + **stored + "' for " +
                    JobUidKey(queue, share));
  }
  return std::optional<exec::JobUser>(UserOf(*uid));
}

Result<exec::JobUser> ShareUser(store::Store& store, const JobUidRange& range,
                                const std::string& queue, const std::string& share) {
  std::lock_guard<std::mutex> lock(AllocationMutex());
  Result<std::optional<exec::JobUser>> stored = StoredShareUser(store, queue, share);
  if (!stored.ok()) return stored.status();
  if (stored->has_value()) return **stored;  // kept even when the range changed since
  Result<std::uint32_t> uid = FreeUid(store, range);
  if (!uid.ok()) return uid.status();
  store::Batch batch;
  batch.Put(store::Kind::kMeta, JobUidKey(queue, share), std::to_string(*uid));
  ALLOT_RETURN_IF_ERROR(store.Commit(std::move(batch)));
  return UserOf(*uid);
}

}  // namespace allot::server
