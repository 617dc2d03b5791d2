#pragma once

// JSON in the server lives at its two edges only: the wire's (wire_call.*, http_server.cc: typed
// requests and answers are decoded and encoded in src/api) and the store's (the stored forms in
// job_codec.*, config_codec.*, history_codec.*, users.cc, audit.cc; an audit record's values are
// JSON text). The controller works on typed records.

#include <nlohmann/json.hpp>

namespace allot::server {

using Json = nlohmann::json;

}  // namespace allot::server
