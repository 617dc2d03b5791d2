#include "server/ui_assets.h"

#include <algorithm>
#include <array>

namespace allot::server {

namespace {

// Everything the page loads comes from this origin: scripts and styles only from files (no inline
// code or style element, no eval), API calls only to this server, no frames, no plugins. (Styles
// set through the DOM, as the charts and bars do, are not inline styles to CSP.)
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

constexpr std::string_view kIndex = "index.html";

std::vector<std::pair<std::string, std::string>> CommonHeaders() {
  return {{"Content-Security-Policy", std::string(kPolicy)},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          // The files change with the binary: a browser asks again rather than keep an old build.
          {"Cache-Control", "no-cache"}};
}

const UiFile* Find(std::string_view path) {
  const std::span<const UiFile> files = UiBundle();
  const auto it =
      std::find_if(files.begin(), files.end(), [path](const UiFile& f) { return f.path == path; });
  return it == files.end() ? nullptr : &*it;
}

// A path the dashboard never names: a `..` segment, a backslash or a NUL (percent-decoded).
bool Suspicious(std::string_view rest) {
  if (rest.find('\\') != std::string_view::npos) return true;
  if (rest.find('\0') != std::string_view::npos) return true;
  std::size_t start = 0;
  while (start <= rest.size()) {
    std::size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    if (rest.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

UiAnswer Plain(int status, std::string_view text) {
  UiAnswer a;
  a.status = status;
  a.content_type = "text/plain; charset=utf-8";
  a.body = text;
  a.headers = CommonHeaders();
  return a;
}

}  // namespace

std::string_view UiContentType(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".map", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
  }};
  for (const auto& [ext, type] : kTypes) {
    if (path.ends_with(ext)) return type;
  }
  return "application/octet-stream";
}

UiAnswer ServeUi(std::string_view path) {
  if (path == "/ui") {
    UiAnswer a = Plain(301, "");
    a.headers.emplace_back("Location", "/ui/");
    return a;
  }
  std::string_view rest = path.substr(std::string_view("/ui/").size());
  if (Suspicious(rest)) return Plain(400, "bad path\n");
  if (rest.empty()) rest = kIndex;
  const UiFile* file = Find(rest);
  if (file == nullptr) {
    // A page of the dashboard (no extension in its last segment) is the index: the page reads
    // its own address. A missing file is a 404, not the index in its place.
    const std::string_view last = rest.substr(rest.rfind('/') + 1);
    if (last.find('.') != std::string_view::npos) return Plain(404, "not found\n");
    file = Find(kIndex);
    if (file == nullptr) return Plain(404, "the dashboard was not built into this binary\n");
    rest = kIndex;
  }
  UiAnswer a;
  a.content_type = std::string(UiContentType(rest));
  a.body = file->body;
  a.headers = CommonHeaders();
  return a;
}

}  // namespace allot::server
