// The dashboard's static files (server/ui_assets.h): the embedded bundle, content types, the
// security headers, the redirect, the index for a page's address, and refusals of paths that
// climb out of /ui/.

#include "server/ui_assets.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace allot::server {
namespace {

std::string Header(const UiAnswer& a, std::string_view name) {
  for (const auto& [k, v] : a.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(UiAssets, TheBundleHoldsThePageItsScriptAndItsStyle) {
  for (const char* name : {"index.html", "app.js", "app.css"}) {
    bool found = false;
    for (const UiFile& f : UiBundle()) found = found || (f.path == name && !f.body.empty());
    EXPECT_TRUE(found) << name;
  }
}

TEST(UiAssets, ServesFilesWithTheirTypeAndAStrictPolicy) {
  const UiAnswer index = ServeUi("/ui/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("/ui/app.js"), std::string_view::npos);
  const std::string csp = Header(index, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe"), std::string::npos);
  EXPECT_EQ(Header(index, "X-Content-Type-Options"), "nosniff");

  const UiAnswer script = ServeUi("/ui/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(ServeUi("/ui/app.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(ServeUi("/ui/index.html").body, index.body);
}

TEST(UiAssets, RedirectsTheBarePathAndFallsBackToTheIndexForPages) {
  const UiAnswer bare = ServeUi("/ui");
  EXPECT_EQ(bare.status, 301);
  EXPECT_EQ(Header(bare, "Location"), "/ui/");
  const UiAnswer page = ServeUi("/ui/jobs/0f6c");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(ServeUi("/ui/missing.js").status, 404);
  EXPECT_EQ(ServeUi("/ui/./app.js").status, 404);
}

TEST(UiAssets, RefusesPathsThatClimbOut) {
  for (const char* path :
       {"/ui/..", "/ui/../credentials", "/ui/a/../../allot.db", "/ui/a\\b", "/ui/..\\x"}) {
    EXPECT_EQ(ServeUi(path).status, 400) << path;
  }
  EXPECT_EQ(ServeUi(std::string_view("/ui/a\0b", 7)).status, 400);
  // A name that merely contains two dots is a file name like any other.
  EXPECT_EQ(ServeUi("/ui/a..b.js").status, 404);
}

TEST(UiAssets, ContentTypesByExtension) {
  EXPECT_EQ(UiContentType("x.svg"), "image/svg+xml");
  EXPECT_EQ(UiContentType("x.png"), "image/png");
  EXPECT_EQ(UiContentType("x.json"), "application/json");
  EXPECT_EQ(UiContentType("x"), "application/octet-stream");
}

}  // namespace
}  // namespace allot::server
