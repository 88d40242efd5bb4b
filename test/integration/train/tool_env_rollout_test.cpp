// ToolEnv rolled out by the RL library (do_group_rollout with a SamplingTokenCompleter) against
// tinker-local's tiny model: every episode ends, and every transition's reward is what the env's
// rules give for the sampled turn (the format penalty for an unreadable one, the reward callback
// for a final answer, 0 for a turn whose calls ran).
#include "integration/support/local_service.hpp"

#include <tinker/renderers.hpp>
#include <tinker/train/rl_env.hpp>
#include <tinker/train/tool_env.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

constexpr double answer_reward = 0.25;  // what the callback gives every graded episode

class Rollout {
 public:
  train::TrajectoryGroup group;
  std::shared_ptr<const renderers::Renderer> renderer;
};

asio::awaitable<Rollout> roll_out_tool_group(ServiceClient& service, int max_tokens) {
  const SamplingClient sampler = co_await base_sampler(service);
  auto tokenizer = co_await sampler.async_get_tokenizer(use_awaitable);
  Rollout rollout;
  rollout.renderer = renderers::make_renderer("qwen3_instruct", tokenizer);
  train::Tool echo(renderers::ToolSpec("echo", "Repeats its text"),
                   [](const train::ToolArguments& arguments) { return arguments.text(); });
  train::ToolEnvOptions options;
  options.max_turns = 3;
  train::ToolEnvGroupBuilder builder(
      rollout.renderer, {echo}, {renderers::Message("user", "Say something.")},
      [](const train::ToolEpisode&) { return answer_reward; }, 6, options);
  train::SamplingTokenCompleter policy(sampler, max_tokens, 1.0);
  rollout.group = co_await train::do_group_rollout(builder, policy);
  co_return rollout;
}

class ToolEnvRolloutTest : public LocalService {};

TEST_F(ToolEnvRolloutTest, EveryEpisodeEndsWithTheRewardItsTurnsEarn) {
  auto service = make_service_client();
  // 12 tokens: some turns reach the end-of-turn marker, some are cut (the tiny model's mix).
  const Rollout rollout = run(roll_out_tool_group(*service, 12));
  ASSERT_EQ(rollout.group.trajectories.size(), 6u);
  int graded = 0;
  int penalised = 0;
  for (const train::Trajectory& trajectory : rollout.group.trajectories) {
    ASSERT_FALSE(trajectory.transitions.empty());
    ASSERT_LE(trajectory.transitions.size(), 3u);
    EXPECT_TRUE(trajectory.transitions.back().episode_done);
    for (const train::Transition& transition : trajectory.transitions) {
      const renderers::ParsedResponse parsed = rollout.renderer->parse_response(transition.action.tokens);
      const bool unreadable = parsed.termination == renderers::ParseTermination::malformed ||
                              (parsed.message.tool_calls.empty() && !parsed.message.unparsed_tool_calls.empty());
      if (unreadable) {
        EXPECT_EQ(transition.reward, -0.1);
        EXPECT_TRUE(transition.episode_done);
        ++penalised;
      } else if (transition.episode_done) {
        EXPECT_EQ(transition.reward, answer_reward);
        ++graded;
      } else {
        EXPECT_EQ(transition.reward, 0.0);
        EXPECT_FALSE(parsed.message.tool_calls.empty());
      }
    }
  }
  EXPECT_EQ(graded + penalised, 6);
}

}  // namespace
}  // namespace tinker::test
