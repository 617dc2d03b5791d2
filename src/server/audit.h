#pragma once

// The audit trail: one record per mutating call, allowed or denied, written in the same store
// batch as the change it made (store::Kind::kAudit). Keys are the record's sequence number,
// zero-padded, so the store's key order is the order of the calls and a page of the newest is a
// range read backwards. The stored value is compact JSON, JSON being only the stored and wire
// form; a record is typed everywhere else.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/tenancy_requests.h"
#include "api/tenancy_responses.h"
#include "common/status.h"
#include "common/time.h"
#include "server/durable.h"

namespace allot::server {

// One changed value, old and new as JSON text ("1", "[{...}]"); empty when there was none.
struct AuditChange {
  std::string field;
  std::string old_value;
  std::string new_value;
};

struct AuditRecord {
  std::uint64_t seq = 0;
  Timestamp time = 0;
  std::string user;        // "alice"
  std::string principal;   // arn:aws:iam::<account>:user/alice
  std::string source;      // the client's address
  std::string action;      // "batch:UpdateServiceJob", "allot:CreateUser"
  std::string resource;    // the ARN the call named (the new job's, for a submission)
  std::string outcome;     // "Allowed", "AccessDenied", or "<error type>: <message>"
  std::string request_id;  // x-amzn-RequestId of the answer
  std::vector<AuditChange> changes;
};

std::string AuditKey(std::uint64_t seq);
std::string EncodeAudit(const AuditRecord& record);
Result<AuditRecord> DecodeAudit(const std::string& key, const std::string& stored);
// GET /allot/v1/audit's entry.
api::AuditRecordDetail DescribeAudit(const AuditRecord& record);
// Whether the record is one the query asks for (its principal, resource, action and times).
bool AuditMatches(const api::AuditRequest& query, const AuditRecord& record);

// A refused mutating call answers once its audit record is durable, so the trail a caller reads
// next holds it. Controller::Call and the other entry points wait for that write themselves,
// unless the calling thread holds a DeferRefusalWrite: then they leave the wait to it, and
// TakeRefusalWrite() hands it the write to wait for (invalid when there is none). The HTTP
// server parks such an answer as it parks an accepted one, instead of blocking its loop.
class DeferRefusalWrite {
 public:
  DeferRefusalWrite();
  ~DeferRefusalWrite();
  DeferRefusalWrite(const DeferRefusalWrite&) = delete;
  DeferRefusalWrite& operator=(const DeferRefusalWrite&) = delete;
};
Durable TakeRefusalWrite();
// For the controller: waits for `written`, or hands it to the thread's DeferRefusalWrite.
void AwaitRefusalWrite(Durable written);

}  // namespace allot::server
