#include "common/status.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace allot {
namespace {

TEST(Status, DefaultIsOk) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(Status, HelpersSetCodeMessageAndText) {
  struct Case {
    Status status;
    StatusCode code;
    std::string text;
  };
  const Case cases[] = {
      {InvalidArgument("bad"), StatusCode::kInvalidArgument, "INVALID_ARGUMENT: bad"},
      {NotFound("no job 7"), StatusCode::kNotFound, "NOT_FOUND: no job 7"},
      {AlreadyExists("dup"), StatusCode::kAlreadyExists, "ALREADY_EXISTS: dup"},
      {FailedPrecondition("enabled"), StatusCode::kFailedPrecondition,
       "FAILED_PRECONDITION: enabled"},
      {ResourceExhausted("21st share"), StatusCode::kResourceExhausted,
       "RESOURCE_EXHAUSTED: 21st share"},
      {PermissionDenied("policy"), StatusCode::kPermissionDenied, "PERMISSION_DENIED: policy"},
      {Internal("bug"), StatusCode::kInternal, "INTERNAL: bug"},
      {Status(StatusCode::kUnavailable, "later"), StatusCode::kUnavailable, "UNAVAILABLE: later"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.ToString(), c.text);
  }
}

TEST(StatusCodeName, EveryCode) {
  struct Case {
    StatusCode code;
    std::string_view name;
  };
  const Case cases[] = {
      {StatusCode::kOk, "OK"},
      {StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
      {StatusCode::kNotFound, "NOT_FOUND"},
      {StatusCode::kAlreadyExists, "ALREADY_EXISTS"},
      {StatusCode::kFailedPrecondition, "FAILED_PRECONDITION"},
      {StatusCode::kResourceExhausted, "RESOURCE_EXHAUSTED"},
      {StatusCode::kPermissionDenied, "PERMISSION_DENIED"},
      {StatusCode::kUnavailable, "UNAVAILABLE"},
      {StatusCode::kInternal, "INTERNAL"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_EQ(StatusCodeName(c.code), c.name);
  }
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(good.status().ok());
  EXPECT_EQ(good.value(), 42);
  EXPECT_EQ(*good, 42);

  Result<std::string> text = std::string("abc");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->size(), 3u);
  std::string moved = std::move(text).value();
  EXPECT_EQ(moved, "abc");

  Result<int> bad = NotFound("missing");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(), "missing");
}

TEST(Result, ConstructingFromOkStatusAborts) {
  EXPECT_DEATH(
      {
        Result<int> r = Status::Ok();
        (void)r;
      },
      "check failed");
}

TEST(Result, ValueOfErrorAborts) {
  EXPECT_DEATH(
      {
        const Result<int> r = Internal("x");
        (void)r.value();
      },
      "check failed");
}

Status FailIfNegative(int x) {
  if (x < 0) return InvalidArgument("negative");
  return Status::Ok();
}

Status Chain(int x, bool* reached_end) {
  ALLOT_RETURN_IF_ERROR(FailIfNegative(x));
  *reached_end = true;
  return Status::Ok();
}

TEST(ReturnIfError, ReturnsFirstErrorAndPassesOk) {
  bool reached = false;
  EXPECT_TRUE(Chain(1, &reached).ok());
  EXPECT_TRUE(reached);
  reached = false;
  const Status s = Chain(-1, &reached);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(reached);
}

}  // namespace
}  // namespace allot
