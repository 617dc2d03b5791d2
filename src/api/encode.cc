#include "api/encode.h"

#include "api/encode_bodies.h"

namespace allot::api {

using Json = nlohmann::json;

// The answers that are one entry alone, beside encode_bodies.h's (static: qualified lookup of
// bodies::Body would not see an unnamed namespace's overloads beside the header's).
namespace bodies {

static Json Body(const EmptyResponse& /*r*/) { return Json::object(); }
static Json Body(const QuotaShareDetail& r) { return Encode(r); }
static Json Body(const ServiceJobDetail& r) { return Encode(r); }
static Json Body(const ListTagsForResourceResponse& r) { return {{"tags", EncodeTags(r.tags)}}; }

}  // namespace bodies

Json EncodeResponse(const Response& response) {
  return std::visit([](const auto& r) { return bodies::Body(r); }, response);
}

}  // namespace allot::api
