// The tenancy endpoints' and the logs' answers as documents (api/tenancy_responses.h).

#include "api/encode_bodies.h"

namespace allot::api::bodies {

nlohmann::json Body(const TenancyResponse& r) { return r.document; }

}  // namespace allot::api::bodies
