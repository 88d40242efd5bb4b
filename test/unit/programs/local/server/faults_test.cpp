#include "programs/local/server/faults.hpp"

#include <gtest/gtest.h>

namespace tinker::local::front {
namespace {

FaultRule rule(std::string endpoint, FaultKind kind) {
  return FaultRule(std::move(endpoint), kind);
}

std::vector<bool> fire_pattern(FaultPlan& plan, std::string_view path, int calls) {
  std::vector<bool> pattern;
  for (int i = 0; i < calls; ++i) pattern.push_back(plan.on_request(path).has_value());
  return pattern;
}

TEST(FaultMatchTest, EndpointSuffixOnASegmentBoundary) {
  const FaultRule forward = rule("forward", FaultKind::status);
  EXPECT_TRUE(fault_matches(forward, "/api/v1/forward"));
  EXPECT_FALSE(fault_matches(forward, "/api/v1/forward_backward"));
  const FaultRule backward = rule("backward", FaultKind::status);
  EXPECT_FALSE(fault_matches(backward, "/api/v1/forward_backward"));
  const FaultRule runs = rule("training_runs", FaultKind::status);
  EXPECT_TRUE(fault_matches(runs, "/api/v1/training_runs"));
  EXPECT_FALSE(fault_matches(runs, "/api/v1/training_runs/r:train:0"));
  const FaultRule archive = rule("archive", FaultKind::status);
  EXPECT_TRUE(fault_matches(archive, "/api/v1/training_runs/r/checkpoints/weights/a/archive"));
  const FaultRule slash = rule("/client/config", FaultKind::status);
  EXPECT_TRUE(fault_matches(slash, "/api/v1/client/config"));
}

TEST(FaultMatchTest, StarMatchesTheApiOnlyAndDownloadsNeedTheirOwnRule) {
  const FaultRule star = rule("*", FaultKind::status);
  EXPECT_TRUE(fault_matches(star, "/api/v1/healthz"));
  EXPECT_TRUE(fault_matches(star, "/api/v1/training_runs/x/checkpoints"));
  EXPECT_FALSE(fault_matches(star, "/_admin/audit"));
  EXPECT_FALSE(fault_matches(star, "/_downloads/t"));
  const FaultRule downloads = rule("_downloads", FaultKind::truncated_body);
  EXPECT_TRUE(fault_matches(downloads, "/_downloads/t.tar"));
  EXPECT_FALSE(fault_matches(downloads, "/api/v1/healthz"));
  const FaultRule admin = rule("audit", FaultKind::status);
  EXPECT_FALSE(fault_matches(admin, "/_admin/audit"));
  EXPECT_TRUE(fault_matches(admin, "/api/v1/audit"));
}

TEST(FaultPlanTest, ScheduleFiresOnTheListedCallsOfTheRule) {
  FaultRule r = rule("retrieve_future", FaultKind::status);
  r.on_calls = {1, 3};
  FaultPlan plan(7, {r});
  // Other endpoints do not count as calls of the rule.
  EXPECT_FALSE(plan.on_request("/api/v1/asample").has_value());
  const std::vector<bool> expected{true, false, true, false, false};
  EXPECT_EQ(fire_pattern(plan, "/api/v1/retrieve_future", 5), expected);
}

TEST(FaultPlanTest, MaxFiresLimitsFiring) {
  FaultRule r = rule("*", FaultKind::reset_before);
  r.probability = 1.0;
  r.max_fires = 2;
  FaultPlan plan(1, {r});
  const std::vector<bool> expected{true, true, false, false};
  EXPECT_EQ(fire_pattern(plan, "/api/v1/healthz", 4), expected);
  FaultRule never = rule("*", FaultKind::reset_before);
  never.probability = 1.0;
  never.max_fires = 0;
  plan.replace({never});
  EXPECT_FALSE(plan.on_request("/api/v1/healthz").has_value());
}

TEST(FaultPlanTest, ProbabilityIsReproducibleFromTheSeed) {
  FaultRule r = rule("asample", FaultKind::status);
  r.status = 429;
  r.probability = 0.3;
  FaultPlan a(42, {r});
  FaultPlan b(42, {r});
  FaultPlan c(43, {r});
  const auto pattern_a = fire_pattern(a, "/api/v1/asample", 200);
  const auto pattern_b = fire_pattern(b, "/api/v1/asample", 200);
  const auto pattern_c = fire_pattern(c, "/api/v1/asample", 200);
  EXPECT_EQ(pattern_a, pattern_b);
  EXPECT_NE(pattern_a, pattern_c);
  const auto fired = std::count(pattern_a.begin(), pattern_a.end(), true);
  EXPECT_GT(fired, 30);  // ~60 expected
  EXPECT_LT(fired, 95);
  // Replacing the rules restarts counters and generator: the same pattern again.
  a.replace({r});
  EXPECT_EQ(fire_pattern(a, "/api/v1/asample", 200), pattern_a);
}

TEST(FaultPlanTest, FirstFiringRuleWinsAndOthersStillCountTheCall) {
  FaultRule first = rule("healthz", FaultKind::status);
  first.status = 503;
  first.on_calls = {1};
  FaultRule second = rule("*", FaultKind::status);
  second.status = 429;
  second.on_calls = {1, 2};
  FaultPlan plan(1, {first, second});
  const auto one = plan.on_request("/api/v1/healthz");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->status, 503);
  const auto two = plan.on_request("/api/v1/healthz");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->status, 429);  // its second call
  EXPECT_FALSE(plan.on_request("/api/v1/healthz").has_value());
}

TEST(FaultPlanTest, PauseQueueRulesOnlyAnswerTheSubmitHook) {
  FaultRule pause = rule("forward_backward", FaultKind::pause_queue);
  pause.delay = std::chrono::milliseconds(1500);
  pause.queue_state = "paused_rate_limit";
  pause.on_calls = {2};
  FaultPlan plan(1, {pause});
  EXPECT_FALSE(plan.on_request("/api/v1/forward_backward").has_value());
  EXPECT_FALSE(plan.on_submit("forward_backward").has_value());
  const auto paused = plan.on_submit("forward_backward");
  ASSERT_TRUE(paused.has_value());
  EXPECT_EQ(paused->queue_state, "paused_rate_limit");
  EXPECT_EQ(paused->duration, std::chrono::milliseconds(1500));
  EXPECT_FALSE(plan.on_submit("asample").has_value());
}

TEST(FaultNameTest, NamesKindAndStatus) {
  FaultRule status = rule("x", FaultKind::status);
  status.status = 429;
  EXPECT_EQ(fault_name(status), "status_429");
  EXPECT_EQ(fault_name(rule("x", FaultKind::truncated_body)), "truncated_body");
}

TEST(FaultSpecTest, ParsesTheDocumentedExample) {
  std::string error;
  const auto parsed = parse_fault_spec("retrieve_future:status=429,retry_after=seconds:2,prob=0.2", error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->endpoint, "retrieve_future");
  EXPECT_EQ(parsed->kind, FaultKind::status);
  EXPECT_EQ(parsed->status, 429);
  EXPECT_EQ(parsed->retry_after, RetryAfterForm::seconds);
  EXPECT_EQ(parsed->retry_after_value, std::chrono::milliseconds(2000));
  EXPECT_DOUBLE_EQ(parsed->probability, 0.2);
  EXPECT_TRUE(parsed->on_calls.empty());
}

TEST(FaultSpecTest, ParsesEveryKindAndOption) {
  std::string error;
  auto delay = parse_fault_spec("*:delay=250ms,calls=1+3+5,max=2", error);
  ASSERT_TRUE(delay.has_value()) << error;
  EXPECT_EQ(delay->kind, FaultKind::delay);
  EXPECT_EQ(delay->delay, std::chrono::milliseconds(250));
  EXPECT_EQ(delay->on_calls, (std::vector<std::int64_t>{1, 3, 5}));
  EXPECT_EQ(delay->max_fires, 2);

  auto pause = parse_fault_spec("asample:pause_queue=2s,state=paused_rate_limit", error);
  ASSERT_TRUE(pause.has_value()) << error;
  EXPECT_EQ(pause->kind, FaultKind::pause_queue);
  EXPECT_EQ(pause->delay, std::chrono::milliseconds(2000));
  EXPECT_EQ(pause->queue_state, "paused_rate_limit");
  EXPECT_DOUBLE_EQ(pause->probability, 1.0);  // no trigger given: every call

  auto ms = parse_fault_spec("optim_step:status=503,retry_after=ms:1500,should_retry=false", error);
  ASSERT_TRUE(ms.has_value()) << error;
  EXPECT_EQ(ms->retry_after, RetryAfterForm::milliseconds);
  EXPECT_EQ(ms->retry_after_value, std::chrono::milliseconds(1500));
  EXPECT_EQ(ms->should_retry, false);

  auto date = parse_fault_spec("x:status=429,retry_after=http_date:3", error);
  ASSERT_TRUE(date.has_value()) << error;
  EXPECT_EQ(date->retry_after, RetryAfterForm::http_date);
  EXPECT_EQ(date->retry_after_value, std::chrono::milliseconds(3000));

  for (const char* simple : {"a:reset_before", "a:reset_mid_body", "a:truncated_body", "a:malformed_json"}) {
    EXPECT_TRUE(parse_fault_spec(simple, error).has_value()) << simple << ": " << error;
  }
}

TEST(FaultSpecTest, RejectsBadSpecsNamingThePart) {
  std::string error;
  EXPECT_FALSE(parse_fault_spec("no-colon", error).has_value());
  EXPECT_FALSE(parse_fault_spec("x:explode", error).has_value());
  EXPECT_NE(error.find("explode"), std::string::npos) << error;
  EXPECT_FALSE(parse_fault_spec("x:status=abc", error).has_value());
  EXPECT_NE(error.find("status"), std::string::npos) << error;
  EXPECT_FALSE(parse_fault_spec("x:status=429,prob=1.5", error).has_value());
  EXPECT_NE(error.find("prob"), std::string::npos) << error;
  EXPECT_FALSE(parse_fault_spec("x:status=429,calls=0", error).has_value());
  EXPECT_FALSE(parse_fault_spec("x:status=429,retry_after=weeks:2", error).has_value());
  EXPECT_FALSE(parse_fault_spec("x:status=429,bogus=1", error).has_value());
  EXPECT_NE(error.find("bogus"), std::string::npos) << error;
  EXPECT_FALSE(parse_fault_spec("x:delay", error).has_value());
  EXPECT_FALSE(parse_fault_spec("x:reset_before=3", error).has_value());
}

TEST(FaultSpecTest, Durations) {
  EXPECT_EQ(parse_duration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(parse_duration("2s"), std::chrono::milliseconds(2000));
  EXPECT_EQ(parse_duration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(parse_duration("40"), std::chrono::milliseconds(40));
  EXPECT_FALSE(parse_duration("").has_value());
  EXPECT_FALSE(parse_duration("-1s").has_value());
  EXPECT_FALSE(parse_duration("fast").has_value());
  EXPECT_EQ(parse_duration("86400s"), std::chrono::milliseconds(86'400'000));
  EXPECT_FALSE(parse_duration("86401s").has_value());
  EXPECT_FALSE(parse_duration("1e300s").has_value());
  EXPECT_FALSE(parse_duration("nan").has_value());
}

// The fuzzer's finding: an HTTP-date Retry-After of 1e16 s overflowed `now + value` in the clock's
// nanoseconds. Amounts past a day are refused with the bound in the message.
TEST(FaultSpecTest, RetryAfterAmountIsBounded) {
  std::string error;
  EXPECT_FALSE(parse_fault_spec("x:status=429,retry_after=http_date:1e16", error).has_value());
  EXPECT_NE(error.find("24 hours"), std::string::npos) << error;
  EXPECT_TRUE(parse_fault_spec("x:status=429,retry_after=http_date:86400", error).has_value());
  EXPECT_FALSE(parse_fault_spec("x:delay=1e300s", error).has_value());
  EXPECT_NE(error.find("24 h"), std::string::npos) << error;
}

}  // namespace
}  // namespace tinker::local::front
