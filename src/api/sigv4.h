#pragma once

// AWS Signature Version 4 (header form, AWS4-HMAC-SHA256): signing for our own CLI client and
// verification for the server. The canonical form matches what botocore's SigV4Auth signs
// (botocore/auth.py), which is what boto3 and the AWS CLI send:
//   - path: the path exactly as sent on the wire (still percent-encoded), dot segments and
//     repeated slashes removed, then percent-encoded once more (every byte except A-Z a-z 0-9
//     - _ . ~ /), so "/v1/tags/arn%3Aaws" is signed as "/v1/tags/arn%253Aaws";
//   - query: the raw query string split on '&', each piece split at its first '=', the (key, value)
//     pairs sorted byte-wise and joined back, without re-encoding;
//   - headers: lowercase names, values with leading/trailing whitespace removed and inner runs of
//     whitespace collapsed to one space, repeated headers joined with ',';
//   - payload: the value of the X-Amz-Content-Sha256 header when present, else hex SHA-256(body).
// Nothing here reads a clock: the caller passes the time in.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/credentials.h"
#include "common/status.h"
#include "common/time.h"

namespace allot::api {

inline constexpr std::string_view kSigV4Algorithm = "AWS4-HMAC-SHA256";
inline constexpr Duration kDefaultMaxSkew = 15 * Seconds(60);
// The service name in the credential scope of every request to Allot (botocore's signing name).
inline constexpr std::string_view kBatchService = "batch";

// One HTTP request as it is (or will be) on the wire. It owns its strings, so the same struct is
// both the server's read-only view and the client's mutable request to sign.
struct HttpRequestView {
  std::string method;  // "GET", "POST", ... (upper-cased for signing)
  std::string path;    // raw path as received/sent, still percent-encoded, without the query
  std::string query;   // raw query string without '?' (and without any '#fragment')
  std::vector<std::pair<std::string, std::string>> headers;  // names in any case, wire order
  std::string body;
};
using HttpRequest = HttpRequestView;

// ---- Building blocks (exposed for tests and debugging) ----

std::string HexEncode(std::string_view bytes);                        // lowercase hex
std::string Sha256Hex(std::string_view data);                         // lowercase hex SHA-256
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes

// Epoch milliseconds <-> the SigV4 basic ISO-8601 form "YYYYMMDDTHHMMSSZ" (UTC). Formatting drops
// the milliseconds; parsing rejects anything not exactly in that form or not a valid date.
std::string FormatAmzDate(Timestamp t);
std::optional<Timestamp> ParseAmzDate(std::string_view amz_date);

// Splits a raw HTTP request target ("/v1/tags/arn%3A...?tagKeys=a") into the raw path and raw
// query that HttpRequestView wants; a '#fragment' is dropped. With cpp-httplib pass req.target:
// req.path is percent-decoded and would not verify.
std::pair<std::string, std::string> SplitRequestTarget(std::string_view target);

// The first case-insensitive match of `name` among the headers, if any.
std::optional<std::string> FindHeader(const HttpRequestView& req, std::string_view name);

std::string CanonicalUri(std::string_view raw_path);
std::string CanonicalQueryString(std::string_view raw_query);   // botocore: raw pairs, sorted
std::string NormalizedQueryString(std::string_view raw_query);  // AWS spec: decoded, re-encoded
std::string CanonicalHeaderValue(std::string_view value);       // Trimall

// The headers a signer signs: every header except the hop-by-hop ones botocore leaves out
// (connection, expect, keep-alive, proxy-*, te, trailer, transfer-encoding, upgrade, user-agent,
// x-amzn-trace-id); lowercase, sorted, de-duplicated.
std::vector<std::string> HeadersToSign(const HttpRequestView& req);

// The canonical request for `signed_headers` (lowercase names, in the order given: botocore and
// Sign sort them). A signed header absent from the request contributes an empty value.
std::string CanonicalRequest(const HttpRequestView& req,
                             const std::vector<std::string>& signed_headers);

// "YYYYMMDD/region/service/aws4_request".
std::string CredentialScope(std::string_view date, std::string_view region,
                            std::string_view service);
// "AWS4-HMAC-SHA256\n<amz_date>\n<scope>\n<hex sha256(canonical_request)>".
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);
// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
std::string DeriveSigningKey(std::string_view secret_access_key, std::string_view date,
                             std::string_view region, std::string_view service);
// Lowercase hex HMAC(signing_key, string_to_sign).
std::string ComputeSignature(std::string_view signing_key, std::string_view string_to_sign);

// ---- Client side ----

struct SignOptions {
  // Also send X-Amz-Content-Sha256: <hex sha256(body)> (signed). botocore does not for Batch.
  bool add_content_sha256_header = false;
};

// Signs `req` in place, like botocore's SigV4Auth.add_auth: removes any Authorization,
// X-Amz-Date (and, with add_content_sha256_header, X-Amz-Content-Sha256) headers, appends
// X-Amz-Date: <amz_date> (and X-Amz-Content-Sha256), then appends
//   Authorization: AWS4-HMAC-SHA256 Credential=<akid>/<date>/<region>/<service>/aws4_request,
//                  SignedHeaders=<HeadersToSign joined by ';'>, Signature=<hex>
// `req` must carry a Host header (as the HTTP client will send it, e.g. "127.0.0.1:8742"), and
// its path/query must be exactly what will be sent: percent-encode path segments and query keys
// and values yourself (unreserved characters A-Z a-z 0-9 - _ . ~ stay as they are).
// Errors: InvalidArgument for a malformed amz_date, empty region/service/credentials, or no Host.
Status Sign(HttpRequest& req, const Credentials& creds, std::string_view region,
            std::string_view service, std::string_view amz_date, const SignOptions& options = {});

// ---- Server side ----

// Why a request was refused, in AWS terms. The server answers `http_status` with
// X-Amzn-ErrorType: <error_code> and {"__type": <error_code>, "message": <message>}.
//   MissingAuthenticationTokenException 403  no Authorization header at all
//   IncompleteSignatureException        400  Authorization present but malformed or incomplete
//   UnrecognizedClientException         403  unknown access key id
//   InvalidSignatureException           403  wrong signature, bad scope, clock skew, body hash
// The message echoes what was received as AWS does, with every byte outside printable ASCII
// (newlines aside) written as \xNN, so it is always valid UTF-8.
struct AuthError {
  int http_status = 403;
  std::string error_code;
  std::string message;
};

struct VerifiedCaller {
  std::string access_key_id;
  std::string region;          // from the credential scope (any region is accepted)
  std::string service;         // from the credential scope: always the `service` Verify was given
  std::string amz_date;        // the signed request time, "YYYYMMDDTHHMMSSZ"
  Timestamp request_time = 0;  // the same, epoch milliseconds
};

class [[nodiscard]] VerifyResult {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): implicit like Result's, to return either as is
  VerifyResult(VerifiedCaller caller) : rep_(std::move(caller)) {}
  // NOLINTNEXTLINE(google-explicit-constructor): implicit like Result's, to return either as is
  VerifyResult(AuthError error) : rep_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<VerifiedCaller>(rep_); }
  const VerifiedCaller& value() const {
    ALLOT_CHECK(ok());
    return std::get<VerifiedCaller>(rep_);
  }
  const AuthError& error() const {
    ALLOT_CHECK(!ok());
    return std::get<AuthError>(rep_);
  }
  const VerifiedCaller& operator*() const { return value(); }
  const VerifiedCaller* operator->() const { return &value(); }

 private:
  std::variant<VerifiedCaller, AuthError> rep_;
};

// Returns the secret access key for an access key id, or nullopt when the id is unknown.
using KeyLookup = std::function<std::optional<std::string>(std::string_view access_key_id)>;

// Verifies the Authorization header of `req` against the secret `lookup` returns. The request
// time comes from X-Amz-Date (else the Date header) and must be within max_skew of now. When
// X-Amz-Content-Sha256 is present it must equal SHA-256 of the body (UNSIGNED-PAYLOAD is
// refused). The signature is compared in constant time. For clients that sign an AWS-normalized
// query instead of botocore's raw one, that form is tried too. Presigned URLs (query-string
// authentication) are not supported and answer MissingAuthenticationTokenException. The credential
// scope must name `service` exactly (a signature made for another AWS service is refused with
// InvalidSignatureException "Credential should be scoped to correct service: 'batch'.").
VerifyResult Verify(const HttpRequestView& req, const KeyLookup& lookup, Timestamp now,
                    Duration max_skew = kDefaultMaxSkew, std::string_view service = kBatchService);

}  // namespace allot::api
