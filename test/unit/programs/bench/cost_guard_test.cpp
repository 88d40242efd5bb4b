// The cost guard's decisions (src/programs/bench/cost_guard.hpp): local targets need nothing; anything else states what
// it will spend and needs --yes or a "y" on a terminal.
#include "programs/bench/cost_guard.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tinker::bench {
namespace {

Target remote() {
  Target target;
  target.kind = "url";
  target.base_url = "https://tinker.example.com/services/tinker";
  target.base_model = "Qwen/Qwen3-8B";
  return target;
}

std::vector<Plan> sample_plans() {
  Invocation invocation;
  invocation.scenarios = {Scenario::sample};
  invocation.sample.requests = 1000;
  invocation.sample.prompt_tokens = 10;
  invocation.sample.num_samples = 2;
  invocation.sample.max_tokens = 5;
  return plans_of(invocation);
}

TEST(LoopbackUrl, OnlyTheThreeLoopbackSpellingsCount) {
  EXPECT_TRUE(is_loopback_url("http://127.0.0.1:8000"));
  EXPECT_TRUE(is_loopback_url("http://localhost:8000/services/tinker"));
  EXPECT_TRUE(is_loopback_url("http://[::1]:8000"));
  EXPECT_TRUE(is_loopback_url("http://user@localhost"));
  EXPECT_FALSE(is_loopback_url("https://tinker.thinkingmachines.dev/services/tinker-prod"));
  EXPECT_FALSE(is_loopback_url("http://localhost.example.com"));
  EXPECT_FALSE(is_loopback_url("http://127.0.0.2:8000"));
}

TEST(Plans, CountOperationsRequestsAndTokens) {
  const std::vector<Plan> plans = sample_plans();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].operations, 1000);
  EXPECT_EQ(plans[0].http_requests, 2000);
  EXPECT_EQ(plans[0].tokens, 1000 * (10 + 2 * 5));
}

TEST(Consent, ALocalTargetNeedsNoneAndSaysNothing) {
  Target local = remote();
  local.kind = "local";
  std::ostringstream err;
  EXPECT_EQ(ask_consent(local, sample_plans(), false, Asking(), err), Consent::not_needed);
  Target loopback = remote();
  loopback.base_url = "http://127.0.0.1:8000";
  EXPECT_EQ(ask_consent(loopback, sample_plans(), false, Asking(), err), Consent::not_needed);
  EXPECT_TRUE(err.str().empty());
}

TEST(Consent, WithoutATerminalOrYesItRefusesAfterSayingWhatItWouldSpend) {
  std::ostringstream err;
  EXPECT_EQ(ask_consent(remote(), sample_plans(), false, Asking(), err), Consent::refused);
  EXPECT_NE(err.str().find("1,000 operations, at least 2,000 HTTP requests, 20,000 tokens"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("--yes"), std::string::npos);
}

TEST(Consent, YesGivesIt) {
  std::ostringstream err;
  EXPECT_EQ(ask_consent(remote(), sample_plans(), true, Asking(), err), Consent::given);
  EXPECT_NE(err.str().find("20,000 tokens"), std::string::npos) << "stated even with --yes";
}

TEST(Consent, OnATerminalOnlyYesAnswersGiveIt) {
  for (const auto& [answer, expected] : std::vector<std::pair<std::string, Consent>>{{"y\n", Consent::given},
                                                                                     {"YES\n", Consent::given},
                                                                                     {"n\n", Consent::refused},
                                                                                     {"\n", Consent::refused},
                                                                                     {"", Consent::refused}}) {
    std::istringstream input(answer);
    Asking asking;
    asking.input = &input;
    asking.interactive = true;
    std::ostringstream err;
    EXPECT_EQ(ask_consent(remote(), sample_plans(), false, asking, err), expected) << answer;
    EXPECT_NE(err.str().find("Proceed? [y/N]"), std::string::npos);
  }
}

}  // namespace
}  // namespace tinker::bench
