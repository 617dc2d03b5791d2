#pragma once

// Errors of the AWS wire contract. Inside src/server, request handling throws ClientError for
// anything the caller got wrong; the HTTP layer catches it (it never leaves this module) and
// answers 400 with x-amzn-ErrorType: ClientException and {"message": ...}.

#include <stdexcept>
#include <string>

namespace allot::server {

struct ApiError {
  int http_status = 400;
  std::string type = "ClientException";
  std::string message;
};

class ClientError : public std::runtime_error {
 public:
  explicit ClientError(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] inline void Refuse(const std::string& message) { throw ClientError(message); }

}  // namespace allot::server
