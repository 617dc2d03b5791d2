// The report and the histories as documents (api/history_responses.h).

#include "api/encode_bodies.h"

namespace allot::api::bodies {

nlohmann::json Body(const UsageReportResponse& r) { return r.document; }
nlohmann::json Body(const UsageHistoryResponse& r) { return r.document; }
nlohmann::json Body(const JobHistoryResponse& r) { return r.document; }

}  // namespace allot::api::bodies
