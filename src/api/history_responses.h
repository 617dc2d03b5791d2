#pragma once

// The answers of GET /allot/v1/report, /allot/v1/history/usage and /allot/v1/history/jobs,
// typed. encode_history.cc writes them as docs/observability.md documents them.

#include <nlohmann/json.hpp>

namespace allot::api {

struct UsageReportResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

struct UsageHistoryResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

struct JobHistoryResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

}  // namespace allot::api
