#include "api/secret_box.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <memory>
#include <vector>

#include "common/strings.h"
#include "env/files.h"

namespace allot::api {

namespace {

constexpr std::string_view kVersion = "v1:";
constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx NewCtx() { return {EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free}; }

std::string Base64(const std::vector<unsigned char>& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// Strict: only whole groups of four, padding at the end only.
Result<std::vector<unsigned char>> Unbase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return InvalidArgument("not base64");
  std::vector<unsigned char> out(3 * text.size() / 4);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return InvalidArgument("not base64");
  std::size_t padding = 0;
  if (text.back() == '=') ++padding;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

Result<SecretBox::Key> ParseKeyFile(std::string_view text, const std::string& path) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  SecretBox::Key key{};
  if (text.size() != 2 * key.size()) {
    return InvalidArgument("the master key file " + path + " must hold 64 hex digits, got " +
                           std::to_string(text.size()) + " characters");
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    const int hi = HexDigitValue(text[2 * i]);
    const int lo = HexDigitValue(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return InvalidArgument("the master key file " + path + " holds a character that is not hex");
    }
    key[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return key;
}

Result<SecretBox::Key> CreateKeyFile(const std::string& path) {
  SecretBox::Key key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    return Internal("the random generator failed to make a master key");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : key) {
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 15]);
  }
  text.push_back('\n');
  Status s = env::WriteFileAtomically(path, text, S_IRUSR | S_IWUSR);
  OPENSSL_cleanse(text.data(), text.size());
  if (!s.ok()) return s;
  return key;
}

}  // namespace

Result<SecretBox> SecretBox::OpenOrCreate(const std::string& path) {
  Result<std::string> read = env::ReadFile(path);
  if (!read.ok() && read.status().code() == StatusCode::kNotFound) {
    Result<Key> key = CreateKeyFile(path);
    if (!key.ok()) return key.status();
    return SecretBox(*key);
  }
  if (!read.ok()) return read.status();
  std::string text = std::move(read).value();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return InvalidArgument("the master key file " + path +
                           " is readable by group or others; make it mode 0600");
  }
  Result<Key> key = ParseKeyFile(text, path);
  OPENSSL_cleanse(text.data(), text.size());
  if (!key.ok()) return key.status();
  return SecretBox(*key);
}

Result<std::string> SecretBox::Seal(std::string_view plain, std::string_view context) const {
  std::vector<unsigned char> out(kNonceBytes + plain.size() + kTagBytes);
  if (RAND_bytes(out.data(), static_cast<int>(kNonceBytes)) != 1) {
    return Internal("the random generator failed to make a nonce");
  }
  CipherCtx ctx = NewCtx();
  int len = 0;
  bool ok =
      ctx != nullptr &&
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), out.data()) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &len,
                        reinterpret_cast<const unsigned char*>(context.data()),
                        static_cast<int>(context.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), out.data() + kNonceBytes, &len,
                        reinterpret_cast<const unsigned char*>(plain.data()),
                        static_cast<int>(plain.size())) == 1;
  ok = ok && EVP_EncryptFinal_ex(ctx.get(), out.data() + kNonceBytes + len, &len) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                                 out.data() + kNonceBytes + plain.size()) == 1;
  if (!ok) return Internal("AES-256-GCM sealing failed");
  return std::string(kVersion) + Base64(out);
}

Result<std::string> SecretBox::Open(std::string_view sealed, std::string_view context) const {
  if (!sealed.starts_with(kVersion)) return InvalidArgument("a sealed secret must start with v1:");
  Result<std::vector<unsigned char>> decoded = Unbase64(sealed.substr(kVersion.size()));
  if (!decoded.ok() || decoded->size() < kNonceBytes + kTagBytes) {
    return InvalidArgument("a sealed secret is malformed");
  }
  std::vector<unsigned char> b = std::move(decoded).value();
  const std::size_t n = b.size() - kNonceBytes - kTagBytes;
  std::string plain(n, '\0');
  CipherCtx ctx = NewCtx();
  int len = 0;
  bool ok = ctx != nullptr &&
            EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), b.data()) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &len,
                              reinterpret_cast<const unsigned char*>(context.data()),
                              static_cast<int>(context.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &len,
                              b.data() + kNonceBytes, static_cast<int>(n)) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes),
                                 b.data() + kNonceBytes + n) == 1;
  ok = ok && EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + len,
                                 &len) == 1;
  if (!ok) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return InvalidArgument("a sealed secret does not open under this master key");
  }
  return plain;
}

}  // namespace allot::api
