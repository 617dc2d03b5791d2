#include "api/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "common/civil_time.h"
#include "common/strings.h"

namespace allot::api {
namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr std::string_view kHexDigitsUpper = "0123456789ABCDEF";

// The headers botocore never signs (SIGNED_HEADERS_BLACKLIST in botocore/auth.py).
constexpr std::array<std::string_view, 11> kUnsignedHeaders = {"connection",
                                                               "expect",
                                                               "keep-alive",
                                                               "proxy-authenticate",
                                                               "proxy-authorization",
                                                               "te",
                                                               "trailer",
                                                               "transfer-encoding",
                                                               "upgrade",
                                                               "user-agent",
                                                               "x-amzn-trace-id"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python's str.split() / str.strip() whitespace, restricted to ASCII (botocore trims with it).
constexpr std::string_view kPythonSpace = " \t\n\r\v\f\x1c\x1d\x1e\x1f";

bool IsSpace(char c) { return kPythonSpace.find(c) != std::string_view::npos; }

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// Python's urllib.parse.quote(s, safe=...) on bytes: unreserved characters and `extra_safe` stay,
// everything else becomes %XX (uppercase hex).
std::string PercentEncode(std::string_view s, std::string_view extra_safe) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || extra_safe.find(ch) != std::string_view::npos) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHexDigitsUpper[c >> 4]);
      out.push_back(kHexDigitsUpper[c & 0xF]);
    }
  }
  return out;
}

// %XX sequences decoded; a '%' not followed by two hex digits stays as it is. '+' stays '+'.
std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexDigitValue(s[i + 1]);
      int lo = HexDigitValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// RFC 3986 section 5.2.4 plus the removal of empty segments, as botocore.utils.remove_dot_segments.
std::string RemoveDotSegments(std::string_view path) {
  if (path.empty()) return "";
  std::vector<std::string_view> out;
  for (std::string_view segment : Split(path, '/')) {
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") {
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(segment);
    }
  }
  std::string result = path.front() == '/' ? "/" : "";
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i > 0) result.push_back('/');
    result.append(out[i]);
  }
  if (path.back() == '/' && !out.empty()) result.push_back('/');
  return result;
}

using QueryPairs = std::vector<std::pair<std::string, std::string>>;

std::string JoinQueryPairs(QueryPairs pairs) {
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0) out.push_back('&');
    out.append(pairs[i].first);
    out.push_back('=');
    out.append(pairs[i].second);
  }
  return out;
}

std::optional<Timestamp> MakeTimestamp(std::int64_t y, std::int64_t mo, std::int64_t d,
                                       std::int64_t h, std::int64_t mi, std::int64_t s) {
  const CivilTime t{.year = y, .month = mo, .day = d, .hour = h, .minute = mi, .second = s};
  if (!IsValidCivilTime(t)) return std::nullopt;
  return TimestampFromCivil(t);
}

std::int64_t Digits(std::string_view s) {
  std::int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

// The HTTP Date header: "Sun, 30 Aug 2015 12:36:00 GMT" (also "-0000", "+0000", "UTC", and
// without the weekday), as Python's email.utils.formatdate writes it when botocore signs with it.
std::optional<Timestamp> ParseHttpDate(std::string_view value) {
  std::string_view s = Trim(value, kPythonSpace);
  if (std::size_t comma = s.find(','); comma != std::string_view::npos) {
    s = Trim(s.substr(comma + 1), kPythonSpace);
  }
  std::vector<std::string_view> tokens;
  for (std::string_view t : Split(s, ' ')) {
    if (!t.empty()) tokens.push_back(t);
  }
  if (tokens.size() != 5) return std::nullopt;
  static constexpr std::array<std::string_view, 12> kMonths = {
      "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  std::int64_t month = 0;
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (EqualsIgnoreCase(tokens[1], kMonths[i])) month = static_cast<std::int64_t>(i) + 1;
  }
  std::string_view zone = tokens[4];
  bool utc = zone == "GMT" || zone == "UTC" || zone == "Z" || zone == "-0000" || zone == "+0000";
  std::string_view day = tokens[0], year = tokens[2], time = tokens[3];
  if (month == 0 || !utc || !AllDigits(day) || day.size() > 2 || !AllDigits(year) ||
      year.size() != 4 || time.size() != 8 || time[2] != ':' || time[5] != ':' ||
      !AllDigits(time.substr(0, 2)) || !AllDigits(time.substr(3, 2)) ||
      !AllDigits(time.substr(6, 2))) {
    return std::nullopt;
  }
  return MakeTimestamp(Digits(year), month, Digits(day), Digits(time.substr(0, 2)),
                       Digits(time.substr(3, 2)), Digits(time.substr(6, 2)));
}

std::string CanonicalRequestWithQuery(const HttpRequestView& req,
                                      const std::vector<std::string>& signed_headers,
                                      std::string_view canonical_query) {
  std::string cr = AsciiUpper(req.method);
  cr.push_back('\n');
  cr.append(CanonicalUri(req.path));
  cr.push_back('\n');
  cr.append(canonical_query);
  cr.push_back('\n');
  for (const std::string& name : signed_headers) {
    cr.append(name);
    cr.push_back(':');
    bool first = true;
    for (const auto& [header, value] : req.headers) {
      if (!EqualsIgnoreCase(header, name)) continue;
      if (!first) cr.push_back(',');
      cr.append(CanonicalHeaderValue(value));
      first = false;
    }
    cr.push_back('\n');
  }
  cr.push_back('\n');
  for (std::size_t i = 0; i < signed_headers.size(); ++i) {
    if (i > 0) cr.push_back(';');
    cr.append(signed_headers[i]);
  }
  cr.push_back('\n');
  std::optional<std::string> declared = FindHeader(req, "x-amz-content-sha256");
  cr.append(declared ? *declared : Sha256Hex(req.body));
  return cr;
}

void RemoveHeader(HttpRequest& req, std::string_view name) {
  std::erase_if(req.headers, [&](const auto& h) { return EqualsIgnoreCase(h.first, name); });
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;  // the length of a signature is no secret
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

AuthError Incomplete(std::string message) {
  return {400, "IncompleteSignatureException", std::move(message)};
}

AuthError InvalidSignature(std::string message) {
  return {403, "InvalidSignatureException", std::move(message)};
}

std::string SkewText(Duration max_skew) {
  if (max_skew % (60 * kMillisPerSecond) == 0) {
    return std::to_string(max_skew / (60 * kMillisPerSecond)) + " min.";
  }
  return std::to_string(max_skew / kMillisPerSecond) + " sec.";
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    out.push_back(kHexDigits[c >> 4]);
    out.push_back(kHexDigits[c & 0xF]);
  }
  return out;
}

namespace {

// SHA-256 through OpenSSL's EVP interface with the algorithm fetched once: EVP_sha256() with
// EVP_Digest or HMAC() looks the implementation up again (locks, a property query) on every
// call, which cost more than the hashing itself for SigV4's short inputs.
const EVP_MD* Sha256Md() {
  static const EVP_MD* const kSha256 = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return kSha256;
}

using Digest = std::array<unsigned char, 32>;

// SHA-256 of the concatenation of `parts`, with one context per thread.
Digest Sha256Of(std::initializer_list<std::string_view> parts) {
  struct Ctx {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Ctx() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Ctx c;
  ALLOT_CHECK(c.ctx != nullptr && EVP_DigestInit_ex2(c.ctx, Sha256Md(), nullptr) == 1);
  for (std::string_view part : parts) {
    ALLOT_CHECK(EVP_DigestUpdate(c.ctx, part.data(), part.size()) == 1);
  }
  Digest out{};
  unsigned int len = 0;
  ALLOT_CHECK(EVP_DigestFinal_ex(c.ctx, out.data(), &len) == 1 && len == out.size());
  return out;
}

std::string_view View(const Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

// HMAC-SHA256 (RFC 2104) over Sha256Of; the padded keys are wiped afterwards.
Digest HmacOf(std::string_view key, std::string_view data) {
  constexpr std::size_t kBlock = 64;
  std::array<unsigned char, kBlock> k{};
  if (key.size() > kBlock) {
    const Digest hashed = Sha256Of({key});
    std::copy(hashed.begin(), hashed.end(), k.begin());
  } else {
    std::copy(key.begin(), key.end(), k.begin());
  }
  std::array<unsigned char, kBlock> pad{};
  for (std::size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x36U;
  const auto pad_view = std::string_view(reinterpret_cast<const char*>(pad.data()), kBlock);
  Digest inner = Sha256Of({pad_view, data});
  for (std::size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x5cU;
  Digest out = Sha256Of({pad_view, View(inner)});
  OPENSSL_cleanse(k.data(), k.size());
  OPENSSL_cleanse(pad.data(), pad.size());
  OPENSSL_cleanse(inner.data(), inner.size());
  return out;
}

// DeriveSigningKey with a small per-thread cache: a signing key is valid for one day, region and
// service, and a server sees the same few callers all day. Entries are found by a SHA-256 of
// the secret and the scope, so the cache holds no secret; a replaced key is wiped.
std::string CachedSigningKey(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service) {
  struct Entry {
    Digest id{};
    std::string key;
  };
  struct Cache {
    std::array<Entry, 8> entries;
    std::size_t next = 0;
    ~Cache() {
      for (Entry& e : entries) OPENSSL_cleanse(e.key.data(), e.key.size());
    }
  };
  thread_local Cache cache;
  // Each part's length first, so no two different tuples hash the same bytes.
  std::array<std::uint32_t, 4> lengths = {
      static_cast<std::uint32_t>(secret.size()), static_cast<std::uint32_t>(date.size()),
      static_cast<std::uint32_t>(region.size()), static_cast<std::uint32_t>(service.size())};
  const Digest id =
      Sha256Of({std::string_view(reinterpret_cast<const char*>(lengths.data()), sizeof lengths),
                secret, date, region, service});
  for (const Entry& e : cache.entries) {
    if (!e.key.empty() && e.id == id) return e.key;
  }
  Entry& e = cache.entries[cache.next];
  cache.next = (cache.next + 1) % cache.entries.size();
  OPENSSL_cleanse(e.key.data(), e.key.size());
  e.id = id;
  e.key = DeriveSigningKey(secret, date, region, service);
  return e.key;
}

}  // namespace

std::string Sha256Hex(std::string_view data) { return HexEncode(View(Sha256Of({data}))); }

std::string HmacSha256(std::string_view key, std::string_view data) {
  return std::string(View(HmacOf(key, data)));
}

std::string FormatAmzDate(Timestamp t) {
  const CivilTime c = CivilFromTimestamp(t);
  auto put = [](std::string& out, std::int64_t v, int width) {
    std::string digits(static_cast<std::size_t>(width), '0');
    for (int i = width - 1; i >= 0 && v > 0; --i, v /= 10) {
      digits[static_cast<std::size_t>(i)] = static_cast<char>('0' + v % 10);
    }
    out.append(digits);
  };
  std::string out;
  put(out, c.year, 4);
  put(out, c.month, 2);
  put(out, c.day, 2);
  out.push_back('T');
  put(out, c.hour, 2);
  put(out, c.minute, 2);
  put(out, c.second, 2);
  out.push_back('Z');
  return out;
}

std::optional<Timestamp> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z' || !AllDigits(s.substr(0, 8)) ||
      !AllDigits(s.substr(9, 6))) {
    return std::nullopt;
  }
  return MakeTimestamp(Digits(s.substr(0, 4)), Digits(s.substr(4, 2)), Digits(s.substr(6, 2)),
                       Digits(s.substr(9, 2)), Digits(s.substr(11, 2)), Digits(s.substr(13, 2)));
}

std::pair<std::string, std::string> SplitRequestTarget(std::string_view target) {
  target = target.substr(0, target.find('#'));
  std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {std::string(target), ""};
  return {std::string(target.substr(0, q)), std::string(target.substr(q + 1))};
}

std::optional<std::string> FindHeader(const HttpRequestView& req, std::string_view name) {
  for (const auto& [header, value] : req.headers) {
    if (EqualsIgnoreCase(header, name)) return value;
  }
  return std::nullopt;
}

std::string CanonicalUri(std::string_view raw_path) {
  std::string normalized = raw_path.empty() ? "/" : RemoveDotSegments(raw_path);
  return PercentEncode(normalized, "/~");
}

std::string CanonicalQueryString(std::string_view raw_query) {
  if (raw_query.empty()) return "";
  QueryPairs pairs;
  for (std::string_view piece : Split(raw_query, '&')) {
    std::size_t eq = piece.find('=');
    if (eq == std::string_view::npos) {
      pairs.emplace_back(std::string(piece), "");
    } else {
      pairs.emplace_back(std::string(piece.substr(0, eq)), std::string(piece.substr(eq + 1)));
    }
  }
  return JoinQueryPairs(std::move(pairs));
}

std::string NormalizedQueryString(std::string_view raw_query) {
  if (raw_query.empty()) return "";
  QueryPairs pairs;
  for (std::string_view piece : Split(raw_query, '&')) {
    std::size_t eq = piece.find('=');
    std::string_view key = piece.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : piece.substr(eq + 1);
    pairs.emplace_back(PercentEncode(PercentDecode(key), ""),
                       PercentEncode(PercentDecode(value), ""));
  }
  return JoinQueryPairs(std::move(pairs));
}

std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> HeadersToSign(const HttpRequestView& req) {
  std::vector<std::string> names;
  for (const auto& header : req.headers) {
    std::string name = AsciiLower(Trim(header.first, kPythonSpace));
    if (std::find(kUnsignedHeaders.begin(), kUnsignedHeaders.end(), name) !=
        kUnsignedHeaders.end()) {
      continue;
    }
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string CanonicalRequest(const HttpRequestView& req,
                             const std::vector<std::string>& signed_headers) {
  return CanonicalRequestWithQuery(req, signed_headers, CanonicalQueryString(req.query));
}

std::string CredentialScope(std::string_view date, std::string_view region,
                            std::string_view service) {
  std::string scope(date);
  scope.append("/").append(region).append("/").append(service).append("/aws4_request");
  return scope;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string sts(kSigV4Algorithm);
  sts.append("\n").append(amz_date).append("\n").append(scope).append("\n");
  sts.append(Sha256Hex(canonical_request));
  return sts;
}

std::string DeriveSigningKey(std::string_view secret_access_key, std::string_view date,
                             std::string_view region, std::string_view service) {
  std::string k_secret = "AWS4";
  k_secret.append(secret_access_key);
  std::string k_date = HmacSha256(k_secret, date);
  std::string k_region = HmacSha256(k_date, region);
  std::string k_service = HmacSha256(k_region, service);
  OPENSSL_cleanse(k_secret.data(), k_secret.size());
  return HmacSha256(k_service, "aws4_request");
}

std::string ComputeSignature(std::string_view signing_key, std::string_view string_to_sign) {
  return HexEncode(HmacSha256(signing_key, string_to_sign));
}

Status Sign(HttpRequest& req, const Credentials& creds, std::string_view region,
            std::string_view service, std::string_view amz_date, const SignOptions& options) {
  if (!ParseAmzDate(amz_date)) {
    return InvalidArgument("Sign: amz_date must be YYYYMMDDTHHMMSSZ, got '" +
                           std::string(amz_date) + "'");
  }
  if (region.empty() || service.empty()) {
    return InvalidArgument("Sign: region and service must not be empty");
  }
  if (creds.access_key_id.empty() || creds.secret_access_key.empty()) {
    return InvalidArgument("Sign: credentials must not be empty");
  }
  if (!FindHeader(req, "host")) return InvalidArgument("Sign: the request has no Host header");

  RemoveHeader(req, "authorization");
  RemoveHeader(req, "x-amz-date");
  req.headers.emplace_back("X-Amz-Date", std::string(amz_date));
  if (options.add_content_sha256_header) {
    RemoveHeader(req, "x-amz-content-sha256");
    req.headers.emplace_back("X-Amz-Content-Sha256", Sha256Hex(req.body));
  }

  std::vector<std::string> signed_headers = HeadersToSign(req);
  std::string date = std::string(amz_date.substr(0, 8));
  std::string scope = CredentialScope(date, region, service);
  std::string sts = StringToSign(amz_date, scope, CanonicalRequest(req, signed_headers));
  std::string key = CachedSigningKey(creds.secret_access_key, date, region, service);
  std::string signature = ComputeSignature(key, sts);

  std::string auth(kSigV4Algorithm);
  auth.append(" Credential=").append(creds.access_key_id).append("/").append(scope);
  auth.append(", SignedHeaders=");
  for (std::size_t i = 0; i < signed_headers.size(); ++i) {
    if (i > 0) auth.push_back(';');
    auth.append(signed_headers[i]);
  }
  auth.append(", Signature=").append(signature);
  req.headers.emplace_back("Authorization", std::move(auth));
  return Status::Ok();
}

namespace {

// Refusals echo wire bytes (the Authorization header, dates, the canonical request) and the server
// writes them into a JSON body, so every byte outside printable ASCII, newlines aside, is written
// as \xNN: the message is always valid UTF-8 and shows the caller exactly what was received.
std::string PrintableAscii(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == '\n' || (c >= 0x20 && c < 0x7f)) {
      out.push_back(ch);
    } else {
      out.append("\\x").push_back(kHexDigitsUpper[c >> 4]);
      out.push_back(kHexDigitsUpper[c & 0xF]);
    }
  }
  return out;
}

// The parameters of an Authorization header: "<algorithm> Credential=..., SignedHeaders=...,
// Signature=...". The views point into the header text; the first of each parameter counts.
struct AuthParams {
  std::string_view algorithm;
  std::optional<std::string_view> credential, signed_headers_text, signature;
};

AuthParams SplitAuthorization(std::string_view auth) {
  AuthParams params;
  std::string_view rest = Trim(auth, kPythonSpace);
  std::size_t space = rest.find(' ');
  params.algorithm = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  for (std::string_view part : Split(rest, ',')) {
    part = Trim(part, kPythonSpace);
    std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(part.substr(0, eq), kPythonSpace);
    std::string_view value = Trim(part.substr(eq + 1), kPythonSpace);
    if (key == "Credential" && !params.credential) params.credential = value;
    if (key == "SignedHeaders" && !params.signed_headers_text) params.signed_headers_text = value;
    if (key == "Signature" && !params.signature) params.signature = value;
  }
  return params;
}

// The request time: X-Amz-Date, else the Date header (then amz_date is made from it). Both are
// unset when the request carries neither.
struct RequestTime {
  std::optional<std::string> amz_date;
  std::optional<Timestamp> time;
};

std::optional<AuthError> ReadRequestTime(const HttpRequestView& req, RequestTime& out) {
  out.amz_date = FindHeader(req, "x-amz-date");
  if (out.amz_date) {
    *out.amz_date = std::string(Trim(*out.amz_date, kPythonSpace));
    out.time = ParseAmzDate(*out.amz_date);
    if (!out.time) {
      return Incomplete("Date must be in ISO-8601 'basic format'. Got '" + *out.amz_date +
                        "'. See http://en.wikipedia.org/wiki/ISO_8601");
    }
  } else if (std::optional<std::string> http_date = FindHeader(req, "date")) {
    out.time = ParseHttpDate(*http_date);
    if (!out.time) {
      return Incomplete("Date must be in RFC 1123 format. Got '" + *http_date + "'.");
    }
    out.amz_date = FormatAmzDate(*out.time);
  }
  return std::nullopt;
}

// Every required parameter missing, in one message, as AWS lists them.
std::optional<AuthError> CheckRequiredParams(const AuthParams& params, bool has_date,
                                             std::string_view auth) {
  std::string missing;
  if (!params.credential || params.credential->empty()) {
    missing += "Authorization header requires 'Credential' parameter. ";
  }
  if (!params.signature || params.signature->empty()) {
    missing += "Authorization header requires 'Signature' parameter. ";
  }
  if (!params.signed_headers_text || params.signed_headers_text->empty()) {
    missing += "Authorization header requires 'SignedHeaders' parameter. ";
  }
  if (!has_date) {
    missing +=
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
        "header. ";
  }
  if (missing.empty()) return std::nullopt;
  return Incomplete(missing + "Authorization=" + std::string(auth));
}

// The credential scope "<access key id>/<YYYYMMDD>/<region>/<service>/aws4_request": five
// non-empty parts, for `service`, dated the day of the request.
std::optional<AuthError> CheckCredentialScope(const std::vector<std::string_view>& scope,
                                              std::string_view credential, std::string_view service,
                                              const std::string& amz_date) {
  if (scope.size() != 5 ||
      std::any_of(scope.begin(), scope.end(), [](std::string_view p) { return p.empty(); })) {
    return Incomplete(
        "Credential should be '<access key id>/<YYYYMMDD>/<region>/<service>/"
        "aws4_request', not '" +
        std::string(credential) + "'.");
  }
  if (scope[4] != "aws4_request") {
    return Incomplete(
        "Credential should be scoped with a valid terminator: 'aws4_request', "
        "not '" +
        std::string(scope[4]) + "'.");
  }
  if (scope[3] != service) {
    return InvalidSignature("Credential should be scoped to correct service: '" +
                            std::string(service) + "'.");
  }
  if (scope[1] != std::string_view{amz_date}.substr(0, 8)) {
    return InvalidSignature(
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from "
        "HTTP: '" +
        std::string(scope[1]) + "' != '" + amz_date.substr(0, 8) + "', from '" + amz_date + "'.");
  }
  return std::nullopt;
}

// SignedHeaders: non-empty names separated by ';', one of them Host.
std::optional<AuthError> ReadSignedHeaders(std::string_view text,
                                           std::vector<std::string>& signed_headers) {
  bool host_signed = false;
  for (std::string_view name : Split(text, ';')) {
    if (name.empty()) return Incomplete("Authorization header has an empty 'SignedHeaders' name.");
    host_signed = host_signed || EqualsIgnoreCase(name, "host");
    signed_headers.emplace_back(name);
  }
  if (!host_signed) {
    return Incomplete("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  }
  return std::nullopt;
}

std::optional<AuthError> CheckClockSkew(Timestamp request_time, const std::string& amz_date,
                                        Timestamp now, Duration max_skew) {
  if (request_time < now - max_skew) {
    return InvalidSignature("Signature expired: " + amz_date + " is now earlier than " +
                            FormatAmzDate(now - max_skew) + " (" + FormatAmzDate(now) + " - " +
                            SkewText(max_skew) + ")");
  }
  if (request_time > now + max_skew) {
    return InvalidSignature("Signature not yet current: " + amz_date + " is still later than " +
                            FormatAmzDate(now + max_skew) + " (" + FormatAmzDate(now) + " + " +
                            SkewText(max_skew) + ")");
  }
  return std::nullopt;
}

// What a signature is checked against: the request, its signed headers, time and scope.
struct SignedRequest {
  const HttpRequestView& req;
  const std::vector<std::string>& signed_headers;
  const std::string& amz_date;
  const std::vector<std::string_view>& scope;
  std::string_view signature;
};

// Compares the signature with the one made from `secret` (which it wipes, as it does the derived
// key), over botocore's raw query and then over the AWS-normalized one.
std::optional<AuthError> CheckSignature(const SignedRequest& signed_request, std::string& secret) {
  const HttpRequestView& req = signed_request.req;
  const std::vector<std::string_view>& scope = signed_request.scope;
  std::string scope_text = CredentialScope(scope[1], scope[2], scope[3]);
  std::string key = CachedSigningKey(secret, scope[1], scope[2], scope[3]);
  OPENSSL_cleanse(secret.data(), secret.size());
  std::string canonical_query = CanonicalQueryString(req.query);
  std::string cr = CanonicalRequestWithQuery(req, signed_request.signed_headers, canonical_query);
  std::string sts = StringToSign(signed_request.amz_date, scope_text, cr);
  bool match = ConstantTimeEquals(ComputeSignature(key, sts), signed_request.signature);
  if (!match) {
    std::string normalized_query = NormalizedQueryString(req.query);
    if (normalized_query != canonical_query) {
      std::string alt_sts = StringToSign(
          signed_request.amz_date, scope_text,
          CanonicalRequestWithQuery(req, signed_request.signed_headers, normalized_query));
      match = ConstantTimeEquals(ComputeSignature(key, alt_sts), signed_request.signature);
    }
  }
  OPENSSL_cleanse(key.data(), key.size());
  if (match) return std::nullopt;
  return InvalidSignature(
      "The request signature we calculated does not match the signature you provided. Check "
      "your AWS Secret Access Key and signing method. Consult the service documentation for "
      "details.\n\nThe Canonical String for this request should have been\n'" +
      cr + "'\n\nThe String-to-Sign should have been\n'" + sts + "'\n");
}

std::optional<AuthError> CheckPayloadHash(const HttpRequestView& req) {
  if (std::optional<std::string> declared = FindHeader(req, "x-amz-content-sha256")) {
    if (!EqualsIgnoreCase(Trim(*declared, kPythonSpace), Sha256Hex(req.body))) {
      return InvalidSignature(
          "The provided 'x-amz-content-sha256' header does not match what was computed"
          " (unsigned and streaming payloads are not accepted).");
    }
  }
  return std::nullopt;
}

// The steps of Verify, in AWS's order, each answering the first error it finds; messages are
// returned unescaped (Verify escapes them).
VerifyResult VerifyUnescaped(const HttpRequestView& req, const KeyLookup& lookup, Timestamp now,
                             Duration max_skew, std::string_view service) {
  // 1. The Authorization header and its algorithm.
  std::optional<std::string> auth_header = FindHeader(req, "authorization");
  if (!auth_header) {
    return AuthError{403, "MissingAuthenticationTokenException", "Missing Authentication Token"};
  }
  const std::string& auth = *auth_header;
  AuthParams params = SplitAuthorization(auth);
  if (params.algorithm != kSigV4Algorithm) {
    return Incomplete("Unsupported AWS 'algorithm': '" + std::string(params.algorithm) +
                      "'. Authorization=" + auth);
  }
  // 2. The request time, then every required parameter.
  RequestTime time;
  if (std::optional<AuthError> error = ReadRequestTime(req, time)) return *std::move(error);
  if (std::optional<AuthError> error =
          CheckRequiredParams(params, time.amz_date.has_value(), auth)) {
    return *std::move(error);
  }
  const std::string& amz_date = *time.amz_date;
  // 3. The credential scope, the signed headers and the clock skew.
  std::vector<std::string_view> scope = Split(*params.credential, '/');
  if (std::optional<AuthError> error =
          CheckCredentialScope(scope, *params.credential, service, amz_date)) {
    return *std::move(error);
  }
  std::vector<std::string> signed_headers;
  if (std::optional<AuthError> error =
          ReadSignedHeaders(*params.signed_headers_text, signed_headers)) {
    return *std::move(error);
  }
  if (std::optional<AuthError> error = CheckClockSkew(*time.time, amz_date, now, max_skew)) {
    return *std::move(error);
  }
  // 4. The caller's secret and the signature made with it, then the payload hash.
  std::string access_key_id(scope[0]);
  std::optional<std::string> secret = lookup ? lookup(access_key_id) : std::nullopt;
  if (!secret) {
    return AuthError{403, "UnrecognizedClientException",
                     "The security token included in the request is invalid."};
  }
  SignedRequest signed_request{req, signed_headers, amz_date, scope, *params.signature};
  if (std::optional<AuthError> error = CheckSignature(signed_request, *secret)) {
    return *std::move(error);
  }
  if (std::optional<AuthError> error = CheckPayloadHash(req)) return *std::move(error);

  return VerifiedCaller{.access_key_id = std::move(access_key_id),
                        .region = std::string(scope[2]),
                        .service = std::string(scope[3]),
                        .amz_date = amz_date,
                        .request_time = *time.time};
}

}  // namespace

VerifyResult Verify(const HttpRequestView& req, const KeyLookup& lookup, Timestamp now,
                    Duration max_skew, std::string_view service) {
  VerifyResult result = VerifyUnescaped(req, lookup, now, max_skew, service);
  if (result.ok()) return result;
  AuthError error = result.error();
  error.message = PrintableAscii(error.message);
  return error;
}

}  // namespace allot::api
