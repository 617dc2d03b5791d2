// Fuzzes the request decoders of api/decode.h (DecodeRequest for the 24 actions, DecodeWhatIf).
// Input: the first byte picks the decoder, byte % 25: kRoutes[byte % 25], or DecodeWhatIf for 24;
// the rest is the request body, parsed with api::ParseWireJson as the server parses one (inputs
// it refuses stop there: wire_json_fuzz.cc covers the parser). Properties (a violation is a
// finding):
//   - nothing throws or crashes, whatever the body;
//   - a refusal is InvalidArgument and its message is valid UTF-8 (the server dumps it strictly);
//   - an accepted request is the route's action, and what it keeps for later (the asked changes
//     of an update, a submission's request hash) is valid UTF-8, the asked changes valid JSON;
//   - an accepted submission has a command and at least one instance;
//   - what-if decodes its inner request as the real call does: {"submit": body} is accepted
//     exactly when submitservicejob accepts body, and so on, with the same refusal.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "api/decode.h"
#include "api/wire_json.h"
#include "fuzz_target.h"

namespace {

using Json = nlohmann::json;
using allot::fuzz::Finding;
using allot::fuzz::IsValidUtf8;

// In api::Request's order; 24 (kWhatIf) is DecodeWhatIf.
constexpr std::string_view kRoutes[] = {
    "createserviceenvironment",
    "updateserviceenvironment",
    "describeserviceenvironments",
    "deleteserviceenvironment",
    "createschedulingpolicy",
    "updateschedulingpolicy",
    "describeschedulingpolicies",
    "listschedulingpolicies",
    "deleteschedulingpolicy",
    "createjobqueue",
    "updatejobqueue",
    "describejobqueues",
    "deletejobqueue",
    "createquotashare",
    "updatequotashare",
    "describequotashare",
    "listquotashares",
    "deletequotashare",
    "submitservicejob",
    "updateservicejob",
    "describeservicejob",
    "listservicejobs",
    "terminateservicejob",
    "getjobqueuesnapshot",
};
constexpr std::size_t kRouteCount = std::size(kRoutes);
constexpr std::size_t kWhatIf = kRouteCount;
static_assert(kRouteCount == std::variant_size_v<allot::api::Request>);

void CheckRefusal(const allot::Status& status, std::string_view who) {
  if (status.code() != allot::StatusCode::kInvalidArgument) {
    Finding(std::string(who) +
            " refused with a code other than InvalidArgument: " + status.message());
  }
  if (!IsValidUtf8(status.message())) Finding(std::string(who) + "'s refusal is not valid UTF-8");
}

template <typename R>
void CheckAccepted(const R& r) {
  if constexpr (std::is_same_v<R, allot::api::SubmitServiceJobRequest>) {
    if (!IsValidUtf8(r.request_hash)) Finding("the request hash is not valid UTF-8");
    if (r.client_token.has_value() == r.request_hash.empty()) {
      Finding("a request hash without a clientToken, or a clientToken without a hash");
    }
    if (r.parsed.launch.argv.empty()) Finding("accepted a submission with no command");
    if (r.parsed.demand.empty()) Finding("accepted a submission that asks for no instance");
  }
}

// route: one of kRoutes. Returns the decoder's Status (OK when it accepted).
allot::Status Decode(std::string_view route, const Json& body) {
  allot::Result<allot::api::Request> r = allot::api::DecodeRequest(route, body);
  if (!r.ok()) {
    CheckRefusal(r.status(), route);
    return r.status();
  }
  const std::optional<allot::api::ActionInfo> info = allot::api::FindAction(route);
  if (!info) Finding("DecodeRequest accepted a route FindAction does not know");
  if (allot::api::ActionOf(*r) != info->name) Finding("decoded as another action");
  std::visit([](const auto& request) { CheckAccepted(request); }, *r);
  return allot::Status::Ok();
}

allot::Status DecodeAsWhatIf(const Json& body) {
  allot::Result<allot::api::WhatIfRequest> r = allot::api::DecodeWhatIf(body);
  if (!r.ok()) {
    CheckRefusal(r.status(), "DecodeWhatIf");
    return r.status();
  }
  std::visit([](const auto& request) { CheckAccepted(request); }, *r);
  return allot::Status::Ok();
}

// The what-if kind that holds `route`'s request, or nullptr.
const char* WhatIfKindOf(std::string_view route) {
  if (route == "submitservicejob") return "submit";
  if (route == "updateservicejob") return "updatePriority";
  if (route == "updatequotashare") return "updateQuotaShare";
  return nullptr;
}

void Run(std::size_t which, const Json& body) {
  if (which == kWhatIf) {
    const allot::Status whatif = DecodeAsWhatIf(body);
    // An accepted what-if's inner request is accepted by its own route too.
    if (whatif.ok()) {
      for (std::string_view route : kRoutes) {
        const char* kind = WhatIfKindOf(route);
        if (kind != nullptr && body.contains(kind) && !Decode(route, body.at(kind)).ok()) {
          Finding("what-if accepted an inner request that its route refuses");
        }
      }
    }
    return;
  }
  const std::string_view route = kRoutes[which];
  if (!allot::api::FindAction(route)) Finding("a route of kRoutes is not an action");
  const allot::Status status = Decode(route, body);
  if (const char* kind = WhatIfKindOf(route); kind != nullptr && body.is_object()) {
    const allot::Status whatif = DecodeAsWhatIf(Json{{kind, body}});
    if (whatif.ok() != status.ok() || whatif.message() != status.message()) {
      Finding(std::string("what-if decodes ") + kind + " unlike " + std::string(route) + ": \"" +
              whatif.message() + "\" vs \"" + status.message() + "\"");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t which = data[0] % (kRouteCount + 1);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  allot::Result<Json> body = allot::api::ParseWireJson(text, "the request body");
  if (!body.ok()) return 0;
  try {
    Run(which, *body);
  } catch (const std::exception& e) {
    Finding(std::string("a decoder threw: ") + e.what());
  }
  return 0;
}
