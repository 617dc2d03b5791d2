#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The dashboard at /ui/: static files bundled from web/ at build time (web/build.mjs) and
// embedded in the binary, so a server serves the dashboard of its own build wherever it runs.

namespace allot::server {

// One embedded file: its path under /ui/ ("index.html", "app.js") and its bytes.
struct UiFile {
  std::string_view path;
  std::string_view body;
};

// The embedded files, defined in the build's generated ui_bundle.cc (target allot_ui).
std::span<const UiFile> UiBundle();

// What GET /ui or /ui/<path> answers: 200 with the file (the index for a page path, so a link
// into the dashboard works), 301 to /ui/ for /ui, 404 for a missing asset, 400 for a path with
// a `..` segment, a backslash or a NUL.
struct UiAnswer {
  int status = 200;
  std::string content_type;
  std::string_view body;
  std::vector<std::pair<std::string, std::string>> headers;  // CSP, Location, caching
};

// `path` is the request's percent-decoded path, "/ui" or starting with "/ui/".
UiAnswer ServeUi(std::string_view path);

// The Content-Type of a file by its extension ("application/octet-stream" when unknown).
std::string_view UiContentType(std::string_view path);

}  // namespace allot::server
