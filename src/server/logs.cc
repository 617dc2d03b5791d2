// Logs of an attempt's hosts, served from the data directory.

#include <fstream>
#include <limits>

#include "server/api_error.h"
#include "server/controller.h"

namespace allot::server {

namespace {

constexpr std::uint64_t kMaxChunk = 1 << 20;
// A file offset is a signed 64-bit std::streamoff: anything larger would seek backwards.
constexpr auto kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

}  // namespace

Result<Controller::Reply> Controller::Logs(const api::LogsRequest& request, const Caller& caller) {
  return GuardedResult([&] { return ReadLogs(request, caller); });
}

// Reading a job's logs needs allot:GetJobLogs and batch:DescribeServiceJob on the job.
Result<Controller::Reply> Controller::ReadLogs(const api::LogsRequest& request,
                                               const Caller& caller) {
  const std::string& job_id = request.job_id;
  const std::string& host = request.host;
  const std::string& stream = request.stream;
  const std::uint64_t offset = request.offset;
  int attempt = request.attempt;
  if (offset > kMaxOffset) {
    return InvalidArgument("offset must be a whole number from 0 to " + std::to_string(kMaxOffset) +
                           ", got " + std::to_string(offset));
  }
  std::string path;
  bool complete = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* named = FindJob(job_id);
    const std::string arn = named ? arns_.Job(named->id) : arns_.Job(job_id);
    for (const char* action : {"allot:GetJobLogs", "batch:DescribeServiceJob"}) {
      ALLOT_RETURN_IF_ERROR(Allowed(caller, action, arn, named, std::nullopt));
    }
    if (named == nullptr) return InvalidArgument("jobId " + job_id + " does not exist");
    const JobRecord& job = *named;
    if (job.history && job.history->files_removed_at != 0) {
      return InvalidArgument(RemovedFilesMessage(job, options_));
    }
    const int attempts = static_cast<int>(job.attempts().size());
    if (attempts == 0) return InvalidArgument("job " + job.id + " has not started an attempt yet");
    if (attempt == 0) attempt = attempts;
    if (attempt < 1 || attempt > attempts) {
      return InvalidArgument("attempt must be between 1 and " + std::to_string(attempts) +
                             " (0 or none: the latest), got " + std::to_string(attempt));
    }
    if (stream != "stdout" && stream != "stderr") {
      return InvalidArgument("stream must be stdout or stderr, got \"" + stream + "\"");
    }
    const int hosts = job.InstanceCount();
    bool known = false;
    for (int k = 1; k <= hosts; ++k) known = known || host == "algo-" + std::to_string(k);
    if (!known) {
      return InvalidArgument("host must be one of algo-1 .. algo-" + std::to_string(hosts) +
                             ", got \"" + host + "\"");
    }
    complete = job.attempts()[static_cast<std::size_t>(attempt - 1)].stopped_at != 0;
    path = AttemptDir(job.id, attempt) + "/" + host + "/" + stream;
  }
  api::LogChunkResponse chunk;
  chunk.complete = complete;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    chunk.next_offset = offset;
    return Reply{std::move(chunk), {}};
  }
  in.seekg(static_cast<std::streamoff>(offset));
  chunk.text.resize(kMaxChunk);
  in.read(chunk.text.data(), static_cast<std::streamsize>(kMaxChunk));
  chunk.text.resize(static_cast<std::size_t>(in.gcount()));
  chunk.next_offset = offset + chunk.text.size();
  if (chunk.text.size() == kMaxChunk) chunk.complete = false;  // more to read
  return Reply{std::move(chunk), {}};
}

}  // namespace allot::server
