// Fault injection of tinker-local (doc/local.md#fault-injection): which rule fires on a request,
// reproducibly from a seed, and the compact text syntax of the `--fault` command-line option.
//
// When a fault takes effect (documented for test writers):
//   status, reset_before  before the request reaches the engine: nothing is applied;
//   delay                 the request waits, then is served (and applied) normally;
//   reset_mid_body, truncated_body, malformed_json
//                         after the engine handled the request: it WAS applied, only the
//                         answer is damaged (the client must recover through seq_id dedup);
//   pause_queue           not on the request path: futures submitted through the endpoint report
//                         `queue_state` for `delay` before running (QueuePauseHook).
#pragma once

#include "programs/local/engine/engine.hpp"

#include <tinker/local/server.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::front {

/// True if `rule` applies to a request for `path` (without prefix and query): "*" matches every
/// /api/v1/ path; "_downloads" matches every /_downloads/ path; "_uploads" every external-weights
/// upload PUT (/_uploads/...); "_hub" every Hub file path
/// (/{org}/{name}/resolve/...); otherwise an /api/v1/ or Hub path must end with "/" + endpoint
/// (or endpoint itself when it starts with '/'), e.g. "tokenizer.json". Admin paths never match.
bool fault_matches(const FaultRule& rule, std::string_view path);

/// "status_429", "reset_before", "delay", ... (for logs and the arrival log).
std::string fault_name(const FaultRule& rule);

const char* to_string(FaultKind kind) noexcept;
const char* to_string(RetryAfterForm form) noexcept;
std::optional<FaultKind> fault_kind_from_string(std::string_view text) noexcept;
std::optional<RetryAfterForm> retry_after_form_from_string(std::string_view text) noexcept;

/// The rules in force, their per-rule call and fire counters and the seeded generator.
class FaultPlan {
 public:
  explicit FaultPlan(std::uint64_t seed, std::vector<FaultRule> rules = {});

  /// Replaces the rules; counters restart and the generator is re-seeded, so the same rules on
  /// the same request sequence fire identically however often they are installed.
  void replace(std::vector<FaultRule> rules);
  const std::vector<FaultRule>& rules() const noexcept { return rules_; }

  /// The fault to apply to a request for `path`, if any (pause_queue rules are not considered).
  /// Every matching rule counts the call; the first one (in rule order) that fires wins.
  std::optional<FaultRule> on_request(std::string_view path);

  /// For the engine's queue-pause hook: a pause for a future submitted through `endpoint`
  /// ("forward_backward", "asample", ...), from the pause_queue rules.
  std::optional<QueuePause> on_submit(std::string_view endpoint);

 private:
  bool fires(std::size_t index);

  std::uint64_t seed_;
  std::mt19937_64 generator_;
  std::vector<FaultRule> rules_;
  std::vector<std::int64_t> calls_;
  std::vector<std::int64_t> fired_;
};

/// Parses one `--fault` option:
///   <endpoint>:<kind>[=<value>][,<key>=<value>]...
/// kinds: status=<code> | reset_before | reset_mid_body | delay=<duration> | truncated_body |
///        malformed_json | pause_queue=<duration>
/// keys:  prob=<0..1>            fire with this probability (from --fault-seed)
///        calls=<n>[+<n>...]     fire on these calls (1-based, per rule), e.g. calls=1+3
///        max=<n>                fire at most n times
///        retry_after=<form>:<v> seconds:<s> | http_date:<s> | ms:<milliseconds> | none
///        should_retry=true|false
///        state=paused_capacity|paused_rate_limit   (pause_queue)
/// durations: 250ms, 2s, or a bare number of milliseconds.
/// Example: retrieve_future:status=429,retry_after=seconds:2,prob=0.2
/// Returns nullopt and fills `error` (naming the offending part) on a syntax error.
std::optional<FaultRule> parse_fault_spec(std::string_view spec, std::string& error);

// The longest delay or Retry-After a fault may carry. Faults exist to test retries, and a bound keeps
// `now + value` and the millisecond conversions far from the clock's range (the fuzzer found both).
inline constexpr std::chrono::milliseconds kLongestFaultDuration = std::chrono::hours(24);

/// Parses "250ms", "2s", "1.5s" or a bare number of milliseconds; nullopt when malformed, negative or
/// longer than kLongestFaultDuration.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace tinker::local::front
