// The admin paths of tinker-local (doc/local.md#admin-paths: observability for tests), outside
// /api/v1/, no key, loopback peers only:
//   GET    /_admin/audit          {"ok", "models": [ModelAudit...], "requests": [RequestRecord...]}
//   GET    /_admin/requests       {"requests": [RequestRecord...]}
//   POST   /_admin/faults         body: JSON array of rules (objects, or strings in the --fault
//                                 syntax); replaces the rules. Answers {"rules": <count>}.
//   DELETE /_admin/faults         removes every rule. Answers {"rules": 0}.
//   POST   /_admin/clock/advance  body {"seconds": n} (n >= 0); moves the server clock (TTLs,
//                                 session expiry, JWT expiry). Answers {"now": <RFC 3339>}.
//   POST   /_admin/sessions/cancel body {"session_id": "...", "detail": "..."?}; cancels the session
//                                 as the console does (status cancelled). Answers {}.
// A rule object: {"endpoint": "retrieve_future", "kind": "status", "status": 429,
//   "retry_after": "none|seconds|http_date|milliseconds", "retry_after_ms": 2000,
//   "delay_ms": 0, "queue_state": "paused_capacity", "probability": 0.2, "on_calls": [1, 3],
//   "max_fires": -1, "should_retry": true}; only endpoint and kind are required.
// A RequestRecord object: index, arrived (RFC 3339 UTC with microseconds), method, path,
// status (0 = closed by a fault), seq_id, model_id, request_id (null when unknown),
// idempotency_key, retry_count, request_iteration, content_type, content_encoding, accept,
// fault ("" when none).
#pragma once

#include <tinker/local/server.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::front {

std::string audit_json(const AuditReport& report);
std::string requests_json(const std::vector<RequestRecord>& requests);

/// Parses the POST /_admin/faults body. Throws std::runtime_error naming the element and field
/// ("[1].status: expected an integer") on a bad rule.
std::vector<FaultRule> parse_fault_rules_json(std::string_view text);

}  // namespace tinker::local::front
