#include "api/credentials.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/strings.h"
#include "env/files.h"

namespace allot::api {
namespace {

constexpr std::string_view kBase32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Errno(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// Blanks around a credentials-file line, its key and its value: spaces, tabs and the \r of a CRLF
// line end.
constexpr std::string_view kBlanks = " \t\r";

std::vector<std::string_view> Lines(std::string_view contents) {
  std::vector<std::string_view> lines;
  while (!contents.empty()) {
    std::size_t nl = contents.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back(contents);
      break;
    }
    lines.push_back(contents.substr(0, nl));
    contents.remove_prefix(nl + 1);
  }
  return lines;
}

// The section name when `line` is a section header "[name]".
std::optional<std::string_view> SectionName(std::string_view line) {
  std::string_view t = Trim(line, kBlanks);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return std::nullopt;
  return Trim(t.substr(1, t.size() - 2), kBlanks);
}

bool IsComment(std::string_view line) {
  std::string_view t = Trim(line, kBlanks);
  return t.empty() || t.front() == '#' || t.front() == ';';
}

Result<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(Errno("cannot open", path));
    return Status(StatusCode::kInternal, Errno("cannot open", path));
  }
  std::string contents;
  std::array<char, 4096> buffer{};
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      Status status = Internal(Errno("cannot read", path));
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    contents.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return contents;
}

// mkdir -p of the folders above `path`, each new one with mode 0700.
Status MakeParents(const std::string& path) {
  for (std::size_t pos = path.find('/', 1); pos != std::string::npos;
       pos = path.find('/', pos + 1)) {
    std::string dir = path.substr(0, pos);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Internal(Errno("cannot create folder", dir));
    }
  }
  return Status::Ok();
}

bool ValidProfileName(std::string_view profile) {
  if (profile.empty() || Trim(profile, kBlanks) != profile) return false;
  for (char c : profile) {
    if (c == '[' || c == ']' || c == '\n' || c == '\r') return false;
  }
  return true;
}

}  // namespace

Result<Credentials> GenerateCredentials() {
  std::array<unsigned char, 56> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Internal("RAND_bytes failed to produce random bytes");
  }
  Credentials creds;
  creds.access_key_id = "AKIA";
  // 256 is a multiple of both 32 and 64, so masking keeps every character equally likely.
  for (std::size_t i = 0; i < 16; ++i) creds.access_key_id.push_back(kBase32[random[i] & 31U]);
  for (std::size_t i = 16; i < 56; ++i) {
    creds.secret_access_key.push_back(kBase64[random[i] & 63U]);
  }
  OPENSSL_cleanse(random.data(), random.size());
  return creds;
}

Result<Credentials> ParseSharedCredentials(std::string_view contents, std::string_view profile,
                                           std::string_view origin) {
  bool in_section = false, found = false;
  std::optional<std::string> access_key_id, secret_access_key;
  for (std::string_view line : Lines(contents)) {
    if (std::optional<std::string_view> name = SectionName(line)) {
      in_section = *name == profile;
      found = found || in_section;
      continue;
    }
    if (!in_section || IsComment(line)) continue;
    std::size_t sep = line.find_first_of("=:");
    if (sep == std::string_view::npos) continue;
    std::string key = AsciiLower(Trim(line.substr(0, sep), kBlanks));
    std::string value(Trim(line.substr(sep + 1), kBlanks));
    if (key == "aws_access_key_id") {
      access_key_id = std::move(value);
    } else if (key == "aws_secret_access_key") {
      secret_access_key = std::move(value);
    }
  }
  std::string where = "profile '" + std::string(profile) + "' in " + std::string(origin);
  if (!found) return NotFound("no " + where);
  if (!access_key_id || access_key_id->empty()) {
    return InvalidArgument("no aws_access_key_id in " + where);
  }
  if (!secret_access_key || secret_access_key->empty()) {
    return InvalidArgument("no aws_secret_access_key in " + where);
  }
  return Credentials{std::move(*access_key_id), std::move(*secret_access_key)};
}

Result<Credentials> ReadSharedCredentialsFile(const std::string& path, std::string_view profile) {
  Result<std::string> contents = ReadFile(path);
  if (!contents.ok()) return contents.status();
  return ParseSharedCredentials(*contents, profile, path);
}

Status WriteSharedCredentialsFile(const std::string& path, const Credentials& creds,
                                  std::string_view profile) {
  if (path.empty()) return InvalidArgument("the credentials file path is empty");
  if (!ValidProfileName(profile)) {
    return InvalidArgument("invalid profile name '" + std::string(profile) + "'");
  }
  for (const std::string* field : {&creds.access_key_id, &creds.secret_access_key}) {
    if (field->empty() || field->find_first_of("\r\n") != std::string::npos ||
        Trim(*field, kBlanks) != *field) {
      return InvalidArgument("credentials must be non-empty single-line values");
    }
  }

  // Keep everything but the old [profile] section.
  std::string kept;
  Result<std::string> existing = ReadFile(path);
  if (existing.ok()) {
    bool skipping = false;
    for (std::string_view line : Lines(*existing)) {
      if (std::optional<std::string_view> name = SectionName(line)) skipping = *name == profile;
      if (skipping) continue;
      kept.append(line);
      kept.push_back('\n');
    }
    while (!kept.empty() &&
           (kept.back() == '\n' || kBlanks.find(kept.back()) != std::string_view::npos)) {
      kept.pop_back();
    }
    if (!kept.empty()) kept.append("\n\n");  // a blank line between sections
  } else if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  std::string contents = kept;
  contents.append("[").append(profile).append("]\n");
  contents.append("aws_access_key_id = ").append(creds.access_key_id).append("\n");
  contents.append("aws_secret_access_key = ").append(creds.secret_access_key).append("\n");

  ALLOT_RETURN_IF_ERROR(MakeParents(path));
  Status status = env::WriteFileAtomically(path, contents, S_IRUSR | S_IWUSR);
  OPENSSL_cleanse(contents.data(), contents.size());
  return status;
}

}  // namespace allot::api
