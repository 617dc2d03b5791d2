// The audit record's stored form (audit.h): EncodeAudit writes it field by field, and must
// write exactly what dumping the same JSON object wrote before, so old and new records read alike.

#include "server/audit.h"

#include <gtest/gtest.h>

#include <string>

#include "server/json.h"

namespace allot::server {
namespace {

// The stored form as it was written before: a JSON object dumped with invalid UTF-8 replaced.
std::string ReferenceEncoding(const AuditRecord& r) {
  Json out = {{"v", 1},           {"t", r.time},     {"u", r.user},
              {"p", r.principal}, {"src", r.source}, {"a", r.action},
              {"r", r.resource},  {"o", r.outcome},  {"id", r.request_id}};
  if (!r.changes.empty()) {
    Json changes = Json::array();
    for (const AuditChange& c : r.changes) changes.push_back({c.field, c.old_value, c.new_value});
    out["c"] = changes;
  }
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

AuditRecord Sample() {
  AuditRecord r;
  r.seq = 42;
  r.time = 1764770000123;
  r.user = "alice";
  r.principal = "arn:aws:iam::000000000000:user/alice";
  r.source = "192.0.2.7";
  r.action = "batch:SubmitServiceJob";
  r.resource = "arn:aws:batch:local:000000000000:job/0b7f4c1e-0000-4000-8000-000000000001";
  r.outcome = "Allowed";
  r.request_id = "5f0c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f";
  return r;
}

TEST(AuditEncodingTest, WritesWhatTheJsonObjectDumped) {
  AuditRecord r = Sample();
  EXPECT_EQ(EncodeAudit(r), ReferenceEncoding(r));
  r.outcome = "ClientException: job queue \"q\\1\" does not exist\n\ttab";
  r.resource = "caf\xc3\xa9 \xe2\x82\xac \x01\x1f \x7f";
  r.user = "bad \xff\xfe utf-8 \xc3";  // invalid UTF-8: replaced by U+FFFD
  r.changes = {{"schedulingPriority", "1", "11"}, {"tags", "", "{\"a\":\"b\"}"}};
  EXPECT_EQ(EncodeAudit(r), ReferenceEncoding(r));
  r.user.clear();
  r.changes = {{"", "", ""}};
  EXPECT_EQ(EncodeAudit(r), ReferenceEncoding(r));
}

TEST(AuditEncodingTest, DecodesWhatItEncodes) {
  AuditRecord r = Sample();
  r.changes = {{"schedulingPriority", "1", "11"}};
  Result<AuditRecord> back = DecodeAudit(AuditKey(r.seq), EncodeAudit(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->seq, r.seq);
  EXPECT_EQ(back->time, r.time);
  EXPECT_EQ(back->user, r.user);
  EXPECT_EQ(back->principal, r.principal);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->action, r.action);
  EXPECT_EQ(back->resource, r.resource);
  EXPECT_EQ(back->outcome, r.outcome);
  EXPECT_EQ(back->request_id, r.request_id);
  ASSERT_EQ(back->changes.size(), 1U);
  EXPECT_EQ(back->changes[0].new_value, "11");
}

}  // namespace
}  // namespace allot::server
