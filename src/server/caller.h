#pragma once

// Who makes a call: the user its access key belongs to, with that user's policy, and where the
// call came from. The HTTP layer builds it from the verified signature; in-process drivers (the
// benchmarks, the controller's own tests) use Caller::System(), which every policy check lets
// through.

#include <memory>
#include <string>
#include <vector>

#include "auth/policy.h"

namespace allot::server {

struct Caller {
  std::string user;  // "admin", "alice"
  std::string arn;   // arn:aws:iam::<account>:user/<name>
  // The user's policies; none (or null): every call is denied.
  std::shared_ptr<const std::vector<auth::Policy>> policies;
  std::string source;      // the client's address
  std::string request_id;  // x-amzn-RequestId of the answer
  bool system = false;     // an in-process driver: every action allowed

  static Caller System() {
    Caller c;
    c.user = "allot";
    c.arn = "allot:system";
    c.source = "in-process";
    c.system = true;
    return c;
  }
};

}  // namespace allot::server
