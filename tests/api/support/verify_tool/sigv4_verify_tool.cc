// Verifies one request with allot::api::Verify, for tests/api/botocore_sigv4_test.py.
// stdin: one field per line, every value hex-encoded (so any byte survives):
//   access_key <hex>      the known access key id (its secret follows)
//   secret <hex>
//   now_ms <decimal>      the server's clock
//   method <hex> | path <hex> | query <hex> | body <hex>
//   header <hex name> <hex value>    (repeatable, in wire order)
// stdout: "OK <access key> <region> <service>" or "<error code> <http status>"; the error message
// goes to stderr. Exit status 2 when the input is unreadable.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "api/sigv4.h"

namespace {

std::optional<std::string> Unhex(const std::string& hex) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex == "-") return std::string();
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = value(hex[i]), lo = value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace

int main() {
  allot::api::HttpRequestView req;
  std::string access_key, secret;
  allot::Timestamp now = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string field, a, b;
    in >> field >> a >> b;
    if (field == "now_ms") {
      now = std::stoll(a);
      continue;
    }
    std::optional<std::string> va = Unhex(a.empty() ? "-" : a);
    std::optional<std::string> vb = Unhex(b.empty() ? "-" : b);
    if (!va || !vb) {
      std::cerr << "bad hex in line: " << line << "\n";
      return 2;
    }
    if (field == "access_key")
      access_key = *va;
    else if (field == "secret")
      secret = *va;
    else if (field == "method")
      req.method = *va;
    else if (field == "path")
      req.path = *va;
    else if (field == "query")
      req.query = *va;
    else if (field == "body")
      req.body = *va;
    else if (field == "header")
      req.headers.emplace_back(*va, *vb);
    else {
      std::cerr << "unknown field: " << field << "\n";
      return 2;
    }
  }
  allot::api::KeyLookup lookup = [&](std::string_view id) -> std::optional<std::string> {
    if (id == access_key) return secret;
    return std::nullopt;
  };
  allot::api::VerifyResult result = allot::api::Verify(req, lookup, now);
  if (result.ok()) {
    std::cout << "OK " << result->access_key_id << " " << result->region << " " << result->service
              << "\n";
  } else {
    std::cout << result.error().error_code << " " << result.error().http_status << "\n";
    std::cerr << result.error().message << "\n";
  }
  return 0;
}
