// Fuzzes allot::api::Verify (the server side of SigV4) and Sign with requests built from the
// input, which reads like HTTP/1.1:
//   <METHOD> <request target>\n          (the target is split with SplitRequestTarget)
//   <Name>: <value>\n                    (any number of headers; "\r\n" works too)
//   \n
//   <body bytes>
// The only known key is the AWS test-suite key AKIDEXAMPLE, and the clock stands at the
// seeds' signing time, 2015-08-30T12:36:00Z, so signed seeds verify and mutations of them reach
// every refusal. Properties checked (a violation is a finding):
//   - nothing throws or crashes;
//   - a refusal is one of the four AWS errors with its status, and its message is valid UTF-8
//     (the server dumps it strictly into the error body);
//   - an accepted request names AKIDEXAMPLE, the batch service and a time within the skew;
//   - a request that an HTTP client could send (header names are RFC 9110 tokens, values hold no
//     control characters, a Host header) verifies once Sign has signed it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/sigv4.h"
#include "fuzz_target.h"

namespace {

using allot::api::HttpRequest;
using allot::fuzz::Finding;

constexpr std::string_view kKeyId = "AKIDEXAMPLE";
constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kAmzDate = "20150830T123600Z";

std::optional<std::string> Lookup(std::string_view id) {
  if (id == kKeyId) return std::string(kSecret);
  return std::nullopt;
}

// The next line of `in` without its "\n" or "\r\n"; `in` moves past it.
std::string_view NextLine(std::string_view& in) {
  std::size_t end = in.find('\n');
  std::string_view line = in.substr(0, end);
  in = end == std::string_view::npos ? std::string_view() : in.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

HttpRequest Build(std::string_view in) {
  HttpRequest req;
  std::string_view first = NextLine(in);
  std::size_t space = first.find(' ');
  req.method = std::string(first.substr(0, space));
  if (space != std::string_view::npos) {
    std::tie(req.path, req.query) = allot::api::SplitRequestTarget(first.substr(space + 1));
  }
  while (!in.empty()) {
    std::string_view line = NextLine(in);
    if (line.empty()) break;
    std::size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    req.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  req.body = std::string(in);
  return req;
}

bool IsTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// What an HTTP client can put on the wire: token header names, values without control bytes.
bool IsSendable(const HttpRequest& req) {
  if (!allot::api::FindHeader(req, "host")) return false;
  for (const auto& [name, value] : req.headers) {
    if (name.empty()) return false;
    for (char c : name) {
      if (!IsTokenChar(c)) return false;
    }
    for (char c : value) {
      if ((c >= 0 && c < 0x20 && c != '\t') || c == 0x7f) return false;
    }
  }
  return true;
}

void CheckRefusal(const allot::api::AuthError& e) {
  const bool known =
      (e.error_code == "MissingAuthenticationTokenException" && e.http_status == 403) ||
      (e.error_code == "IncompleteSignatureException" && e.http_status == 400) ||
      (e.error_code == "UnrecognizedClientException" && e.http_status == 403) ||
      (e.error_code == "InvalidSignatureException" && e.http_status == 403);
  if (!known) Finding("unexpected refusal " + e.error_code + " " + std::to_string(e.http_status));
  if (!allot::fuzz::IsValidUtf8(e.message)) {
    Finding(e.error_code + " message is not valid UTF-8 (the server's strict dump would throw)");
  }
}

void CheckSignThenVerify(HttpRequest req, allot::Timestamp now) {
  if (!IsSendable(req)) return;
  allot::api::SignOptions options;
  options.add_content_sha256_header =
      allot::api::FindHeader(req, "x-amz-content-sha256").has_value();
  const allot::api::Credentials creds{std::string(kKeyId), std::string(kSecret)};
  if (!allot::api::Sign(req, creds, "us-west-2", "batch", kAmzDate, options).ok()) {
    Finding("Sign refused a sendable request with a Host header");
  }
  allot::api::VerifyResult result = allot::api::Verify(req, Lookup, now);
  if (!result.ok()) Finding("a request Sign signed does not verify: " + result.error().message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const allot::Timestamp kNow = *allot::api::ParseAmzDate(kAmzDate);
  HttpRequest req = Build(std::string_view(reinterpret_cast<const char*>(data), size));
  allot::api::VerifyResult result = allot::api::Verify(req, Lookup, kNow);
  if (result.ok()) {
    if (result->access_key_id != kKeyId) Finding("accepted an unknown access key");
    if (result->service != "batch") Finding("accepted a scope for another service");
    const allot::Timestamp skew = result->request_time - kNow;
    if (skew > allot::api::kDefaultMaxSkew || -skew > allot::api::kDefaultMaxSkew) {
      Finding("accepted a request outside the clock skew");
    }
  } else {
    CheckRefusal(result.error());
  }
  CheckSignThenVerify(std::move(req), kNow);
  return 0;
}
