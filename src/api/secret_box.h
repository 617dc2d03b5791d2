#pragma once

// Secrets at rest. SigV4 needs each secret access key itself to check a signature, so the store
// cannot keep a one-way hash of it: it keeps the secret sealed with AES-256-GCM under a master
// key that lives in its own file (mode 0600), which an operator may keep outside the data
// directory. A copy of the database alone reveals no secret, and a sealed value moved to another
// record (another access key id) does not open: the record's key is authenticated data.

#include <array>
#include <string>
#include <string_view>

#include "common/status.h"

namespace allot::api {

class SecretBox {
 public:
  static constexpr std::size_t kKeyBytes = 32;
  using Key = std::array<unsigned char, kKeyBytes>;

  // Reads the master key from `path` (32 bytes, hex-encoded, 64 characters plus an optional
  // newline), or creates it with fresh random bytes (mode 0600, written atomically) when the file
  // does not exist. A file of another size or with other characters is InvalidArgument naming it;
  // a file readable by group or others is refused too.
  static Result<SecretBox> OpenOrCreate(const std::string& path);
  explicit SecretBox(const Key& key) : key_(key) {}

  // "v1:" + base64(nonce[12] | ciphertext | tag[16]); `context` is authenticated, not stored.
  Result<std::string> Seal(std::string_view plain, std::string_view context) const;
  // InvalidArgument when `sealed` is malformed, was sealed under another key or context, or was
  // altered.
  Result<std::string> Open(std::string_view sealed, std::string_view context) const;

 private:
  Key key_{};
};

}  // namespace allot::api
