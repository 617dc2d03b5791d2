#pragma once

// The answers of GET /allot/v1/jobs/{id}/explain and POST /allot/v1/whatif, typed: why a job
// waits or was preempted, and what the engine would decide for a change. encode_explain.cc
// writes them as docs/observability.md documents them.

#include <nlohmann/json.hpp>

namespace allot::api {

struct ExplainResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

struct WhatIfResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

}  // namespace allot::api
