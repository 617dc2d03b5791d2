// Fuzzes allot::server::ParsePayload, the decoder of SubmitServiceJob's serviceRequestPayload (a
// SageMaker CreateTrainingJob request as a JSON string), with arbitrary bytes. It may refuse with
// allot::api::ClientError, and only with that: any other exception, or a crash, is a finding.
// A refusal's message must be valid UTF-8 (the server dumps it strictly into the error body), and
// an accepted payload must describe at least one instance and a non-empty command.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_target.h"
#include "server/api_error.h"
#include "server/local_paths.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  try {
    allot::api::ParsedPayload parsed = allot::api::ParsePayload(payload, "fuzz-job");
    if (parsed.launch.argv.empty()) allot::fuzz::Finding("accepted a payload with no command");
    if (parsed.launch.instance_count < 1) allot::fuzz::Finding("accepted fewer than 1 instance");
  } catch (const allot::api::ClientError& e) {
    if (!allot::fuzz::IsValidUtf8(e.what())) {
      allot::fuzz::Finding(std::string("ClientError message is not valid UTF-8: ") + e.what());
    }
  } catch (const std::exception& e) {
    allot::fuzz::Finding(std::string("ParsePayload threw something other than ClientError: ") +
                         e.what());
  }
  return 0;
}
