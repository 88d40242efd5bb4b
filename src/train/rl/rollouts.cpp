// The completers and rollouts of rl_env.hpp: a policy samples actions, an Env answers them, and a
// group's envs are rolled out concurrently on the io executor.
#include "train/rl/concurrency.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/train/rl_env.hpp>

#include <string>
#include <utility>

namespace tinker::train {

SamplingTokenCompleter::SamplingTokenCompleter(SamplingClient sampler, std::int64_t max_tokens, double temperature)
    : sampler_(std::move(sampler)), max_tokens_(max_tokens), temperature_(temperature) {
  if (max_tokens_ < 1) {
    throw error(errc::invalid_argument,
                "SamplingTokenCompleter: max_tokens must be >= 1, got " + std::to_string(max_tokens_));
  }
}

boost::asio::awaitable<TokensWithLogprobs> SamplingTokenCompleter::complete(const Observation& observation) {
  SamplingParams params(max_tokens_, temperature_);
  params.stop = observation.stop;
  ModelInput prompt = observation.input;
  const SampleOptions options;
  Future<SampleResponse> pending =
      co_await sampler_.async_sample(std::move(prompt), 1, std::move(params), options, use_awaitable);
  SampleResponse response = co_await pending.async_get(use_awaitable);
  if (response.sequences.empty()) {
    throw error(errc::invalid_argument, "SamplingTokenCompleter: the sampler answered no sequence");
  }
  SampledSequence& sequence = response.sequences.front();
  if (!sequence.logprobs || sequence.logprobs->size() != sequence.tokens.size()) {
    throw error(errc::invalid_argument,
                "SamplingTokenCompleter: the sampled sequence came without one logprob per token");
  }
  TokensWithLogprobs action;
  action.tokens = std::move(sequence.tokens);
  action.logprobs = std::move(*sequence.logprobs);
  co_return action;
}

RendererMessageCompleter::RendererMessageCompleter(SamplingClient sampler, const renderers::Renderer& renderer,
                                                   std::int64_t max_tokens, double temperature)
    : sampler_(std::move(sampler)), renderer_(&renderer), max_tokens_(max_tokens), temperature_(temperature) {
  if (max_tokens_ < 1) {
    throw error(errc::invalid_argument,
                "RendererMessageCompleter: max_tokens must be >= 1, got " + std::to_string(max_tokens_));
  }
}

boost::asio::awaitable<renderers::Message> RendererMessageCompleter::complete(
    const std::vector<renderers::Message>& conversation) {
  // Rendered before the first suspension: `conversation` is only borrowed.
  const Observation observation(renderer_->build_generation_prompt(conversation), renderer_->stop_sequences());
  SamplingTokenCompleter tokens(sampler_, max_tokens_, temperature_);
  const TokensWithLogprobs action = co_await tokens.complete(observation);
  co_return renderer_->parse_response(action.tokens).message;
}

boost::asio::awaitable<Trajectory> do_single_rollout(TokenCompleter& policy, Env& env) {
  Trajectory trajectory;
  Observation observation = co_await env.initial_observation();
  while (true) {
    TokensWithLogprobs action = co_await policy.complete(observation);
    StepResult result = co_await env.step(action.tokens);
    Transition transition;
    transition.observation = std::move(observation);
    transition.action = std::move(action);
    transition.reward = result.reward;
    transition.episode_done = result.episode_done;
    transition.metrics = std::move(result.metrics);
    trajectory.transitions.push_back(std::move(transition));
    if (result.episode_done) break;
    observation = std::move(result.next);
  }
  co_return trajectory;
}

namespace {

// One env's rollout as a task of its own. The env and the policy belong to do_group_rollout's
// frame, which outlives every task (gather waits for all of them).
boost::asio::awaitable<Trajectory> roll_out_env(TokenCompleter* policy, Env* env) {
  co_return co_await do_single_rollout(*policy, *env);
}

}  // namespace

boost::asio::awaitable<TrajectoryGroup> do_group_rollout(EnvGroupBuilder& builder, TokenCompleter& policy) {
  std::vector<std::unique_ptr<Env>> envs = co_await builder.make_envs();
  if (envs.empty()) throw error(errc::invalid_argument, "EnvGroupBuilder::make_envs returned no env");
  std::vector<boost::asio::awaitable<Trajectory>> rollouts;
  rollouts.reserve(envs.size());
  for (const std::unique_ptr<Env>& env : envs) rollouts.push_back(roll_out_env(&policy, env.get()));
  TrajectoryGroup group;
  group.trajectories = co_await rl_detail::gather(std::move(rollouts));
  const std::vector<double> final_rewards = co_await builder.compute_group_rewards(group.trajectories);
  if (final_rewards.size() != group.trajectories.size()) {
    throw error(errc::invalid_argument, "EnvGroupBuilder::compute_group_rewards returned " +
                                            std::to_string(final_rewards.size()) + " rewards for " +
                                            std::to_string(group.trajectories.size()) + " trajectories");
  }
  for (std::size_t i = 0; i < final_rewards.size(); ++i) group.trajectories[i].final_reward = final_rewards[i];
  group.tags = builder.logging_tags();
  co_return group;
}

}  // namespace tinker::train
