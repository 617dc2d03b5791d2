#pragma once

// The pieces of `allot users` worth testing without a server: the paths it calls, the policy
// file, the key in an answer, and what it prints.

#include <ostream>
#include <string>
#include <string_view>

#include "api/credentials.h"
#include "cli/client.h"

namespace allot::cli {

// "/allot/v1/users/<name, percent-encoded><rest>"; "/allot/v1/users" for an empty name.
std::string UserPath(std::string_view name, std::string_view rest = "");

// The JSON object in file `path` ("-" = standard input): an IAM policy document. Throws
// CliError naming the file when it cannot be read, is not JSON or is not an object.
Json ReadPolicyFile(const std::string& path);

// answer["accessKey"] of a create or rotate answer. Throws CliError when it is missing.
api::Credentials AccessKeyFromAnswer(const Json& answer);

// `allot users list`: NAME, ARN, ACCESS KEYS (comma-separated), CREATED, POLICY (yes/no), one
// user a line in the order given; "no users" when there are none.
void PrintUsersTable(const Json& users, std::ostream& out);

// Where a user's new key went and how to reach the server with it.
struct SavedKey {
  std::string user_name;
  std::string access_key_id;
  std::string credentials_file;  // where the profile was written
  std::string default_file;      // SharedCredentialsPath(): the file read when none is named
  std::string endpoint_url;
  std::string region;
};

// "wrote access key AKIA... of user alice as profile [alice] of FILE (mode 0600)" and two
// example command lines, `allot jobs --profile alice` and `AWS_PROFILE=alice aws batch ...`,
// each prefixed with AWS_SHARED_CREDENTIALS_FILE=FILE when FILE is not the default one.
void PrintSavedKey(const SavedKey& key, std::ostream& out);

}  // namespace allot::cli
