#pragma once

// Access keys in the AWS shape, and the shared-credentials file (~/.aws/credentials) that boto3,
// the AWS CLI and our own CLI read:
//
//   [default]
//   aws_access_key_id = AKIA...
//   aws_secret_access_key = ...

#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::api {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;

  friend bool operator==(const Credentials&, const Credentials&) = default;
};

// A fresh random key pair from OpenSSL's RAND_bytes: the access key id is "AKIA" followed by 16
// characters of A-Z2-7 (20 in all, like AWS), the secret 40 characters of A-Za-z0-9+/.
// Fails (Internal) only when the random generator does.
Result<Credentials> GenerateCredentials();

// Writes `creds` as section [profile] of the shared-credentials file at `path`, keeping every
// other section (and comment) of an existing file as it was and replacing that section if it was
// there. Missing parent folders are created with mode 0700. The file is written to a temporary
// file with mode 0600 in the same folder, flushed, and renamed over `path`, so it is never
// readable by others nor seen half-written.
Status WriteSharedCredentialsFile(const std::string& path, const Credentials& creds,
                                  std::string_view profile = "default");

// Reads aws_access_key_id and aws_secret_access_key from section [profile] (key names are
// case-insensitive; '=' or ':' separates key and value; lines starting with '#' or ';' are
// comments; other keys such as aws_session_token or region are ignored).
// NotFound when the file or the profile does not exist; InvalidArgument when a key is missing.
// Environment variables (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...) are the caller's business.
Result<Credentials> ReadSharedCredentialsFile(const std::string& path,
                                              std::string_view profile = "default");

// Parses the contents of a shared-credentials file (what ReadSharedCredentialsFile does after
// reading it); `origin` names the source in error messages.
Result<Credentials> ParseSharedCredentials(std::string_view contents, std::string_view profile,
                                           std::string_view origin = "credentials file");

}  // namespace allot::api
