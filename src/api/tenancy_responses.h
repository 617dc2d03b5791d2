#pragma once

// The answers of Allot's tenancy endpoints (/allot/v1/users, /allot/v1/audit) and of
// GET /allot/v1/jobs/{id}/logs, typed. encode_tenancy.cc writes them as docs/server.md
// documents them.

#include <nlohmann/json.hpp>

namespace allot::api {

struct TenancyResponse {
  nlohmann::json document;  // TODO(issue 9): typed fields; this is the step before
};

}  // namespace allot::api
