#pragma once

// JSON in the server: the documents of its answers (job_wire, config_wire) and the stored forms
// of its records (the codecs). Requests are decoded into typed structs before they reach the
// controller (api/requests.h).

#include <nlohmann/json.hpp>

namespace allot::server {

using Json = nlohmann::json;

}  // namespace allot::server
