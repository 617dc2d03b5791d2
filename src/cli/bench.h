#pragma once

// `allot bench submit`: a load generator for SubmitServiceJob. N clients, each with its own
// keep-alive connection and one call in flight, sign every request like a real client (api::Sign)
// and submit M jobs in total. Over http:// one thread drives all the connections with poll()
// (--threads); --threads 0 (and https://, through cpp-httplib) gives each client a thread of its
// own, blocked on its connection. The last line printed is
//   submitted M jobs in S s: R jobs/s, mean A ms, p50 X ms, p90 Z ms, p99 Y ms
// Without --queue the jobs go to a dedicated queue (allot-bench) whose service environment has
// no capacity, so they stay RUNNABLE and nothing is launched.

#include <cstdint>
#include <string>
#include <vector>

namespace allot::cli {

// The mean is there because, with C clients and one call each in flight, the rate is C divided by
// the mean latency: the tail (p90 and up) moves the rate more than the median does.
struct LatencySummary {
  double mean_ms = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
};

// The mean and nearest-rank percentiles of the latencies (microseconds); sorts them.
LatencySummary Summarize(std::vector<std::int64_t>& latencies_us);

// "submitted 200 jobs in 1.23 s: 162.6 jobs/s, mean 5.92 ms, p50 5.10 ms, p90 8.01 ms,
// p99 9.87 ms"
std::string BenchLine(std::int64_t jobs, double seconds, const LatencySummary& s);

}  // namespace allot::cli
