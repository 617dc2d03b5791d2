// ExplainResponse and WhatIfResponse as documents (api/explain_responses.h).

#include "api/encode_bodies.h"

namespace allot::api::bodies {

nlohmann::json Body(const ExplainResponse& r) { return r.document; }
nlohmann::json Body(const WhatIfResponse& r) { return r.document; }

}  // namespace allot::api::bodies
