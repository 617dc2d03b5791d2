// Fuzzes allot::api::ParseWireJson, QuoteForMessage and DumpWire with arbitrary bytes.
// Properties checked (a violation is a finding):
//   - nothing throws or crashes, whatever the depth or the bytes;
//   - a refusal's message is valid UTF-8 (the server dumps it strictly into the error body);
//   - an accepted value nests at most 64 levels, and one accepted with a cap of 2 at most 2;
//   - DumpWire of an accepted value parses back to an equal value;
//   - QuoteForMessage is printable ASCII and at most max_chars + 3 long.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/wire_json.h"
#include "fuzz_target.h"

namespace {

using Json = nlohmann::json;
using allot::fuzz::Finding;

// Bounded by ParseWireJson's cap, so this recursion is safe here.
int DepthOf(const Json& v) {
  int deepest = 0;
  if (v.is_array() || v.is_object()) {
    for (const Json& child : v) deepest = std::max(deepest, DepthOf(child));
    return deepest + 1;
  }
  return 0;
}

void CheckQuote(const Json& v, std::size_t max_chars) {
  const std::string q = allot::api::QuoteForMessage(v, max_chars);
  if (q.size() > max_chars + 3 && !(v.is_array() || v.is_object())) {
    Finding("QuoteForMessage longer than max_chars + 3");
  }
  for (char c : q) {
    if (c < 0x20 || c > 0x7e) Finding("QuoteForMessage is not printable ASCII");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  allot::Result<Json> parsed = allot::api::ParseWireJson(text, "the fuzz input");
  allot::Result<Json> shallow = allot::api::ParseWireJson(text, "the fuzz input", 2);
  if (!parsed.ok()) {
    if (!allot::fuzz::IsValidUtf8(parsed.status().message())) {
      Finding("refusal message is not valid UTF-8");
    }
    if (shallow.ok()) Finding("accepted with cap 2 but refused with cap 64");
    return 0;
  }
  const Json& value = *parsed;
  const int depth = DepthOf(value);
  if (depth > allot::api::kMaxWireJsonDepth) Finding("accepted a value deeper than the cap");
  // Only one way: with a repeated key the last value wins, so the text may nest deeper than the
  // value it gives (the cap counts the text, which is what bounds the parser's work).
  if (shallow.ok() && depth > 2) Finding("cap 2 accepted a value deeper than 2");

  const std::string dumped = allot::api::DumpWire(value);
  allot::Result<Json> again = allot::api::ParseWireJson(dumped, "the dump");
  if (!again.ok()) Finding("DumpWire output does not parse: " + again.status().message());
  if (*again != value) Finding("DumpWire output parses to a different value");

  CheckQuote(value, 64);
  CheckQuote(value, size % 16);
  if (value.is_array() || value.is_object()) {
    for (const Json& child : value) CheckQuote(child, 64);
  }
  return 0;
}
