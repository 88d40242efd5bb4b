/// @file
/// Reinforcement-learning environments and rollouts, as the cookbook's `rl/types.py` and
/// `completers.py` define them (`doc/training-loops.md#rl`): an Env answers actions (sampled tokens)
/// with a reward and the next observation; an EnvGroupBuilder makes the group of envs whose
/// rewards are compared with each other (group-relative advantages); an RLDataset hands out a
/// batch of groups per step. Rollouts sample through a TokenCompleter.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/train/run_dir.hpp>
#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::train {

/// What the policy sees before acting, and where its action must stop.
class Observation {
 public:
  /// An empty observation.
  Observation() = default;
  /// `input_`, stopping at `stop_`.
  Observation(ModelInput input_, StopCondition stop_) : input(std::move(input_)), stop(std::move(stop_)) {}

  ModelInput input;    ///< the whole context so far (prompt, earlier turns, tool results)
  StopCondition stop;  ///< the stop condition of the next action (the renderer's stop sequences)
};

/// What an Env answers to one action.
class StepResult {
 public:
  double reward = 0.0;        ///< the reward of this action
  bool episode_done = false;  ///< true: no further action; `next` is ignored
  Observation next;           ///< the next observation when the episode goes on
  StepMetrics metrics;        ///< per-step metrics, averaged into `env/...` keys (step ignored)
};

/// One episode's environment. Used by one rollout at a time.
class Env {
 public:
  virtual ~Env() = default;
  /// The first observation.
  virtual boost::asio::awaitable<Observation> initial_observation() = 0;
  /// Applies `action` (the sampled tokens, without the stop sequence's own tokens when the
  /// sampler left them out) and answers the reward and what comes next.
  virtual boost::asio::awaitable<StepResult> step(const std::vector<TokenId>& action) = 0;
};

/// Sampled tokens with the sampler's logprob of each.
class TokensWithLogprobs {
 public:
  std::vector<TokenId> tokens;  ///< the sampled tokens
  std::vector<float> logprobs;  ///< one per token
};

/// One action in an episode and what it earned.
class Transition {
 public:
  Observation observation;    ///< what the policy saw
  TokensWithLogprobs action;  ///< what it sampled
  double reward = 0.0;        ///< the Env's reward for it
  bool episode_done = false;  ///< whether the episode ended here
  StepMetrics metrics;        ///< the Env's per-step metrics
};

/// One episode.
class Trajectory {
 public:
  std::vector<Transition> transitions;  ///< in order
  /// The sum of the transitions' rewards plus the group's final reward for this trajectory.
  double total_reward() const;
  double final_reward = 0.0;  ///< from EnvGroupBuilder::compute_group_rewards
};

/// The episodes of one group, rolled out together and compared with each other.
class TrajectoryGroup {
 public:
  std::vector<Trajectory> trajectories;  ///< one per Env of the group
  std::vector<std::string> tags;         ///< the builder's logging tags
  /// Each trajectory's total reward.
  std::vector<double> total_rewards() const;
};

/// Makes one group of envs (the same problem several times, or the two sides of a game).
class EnvGroupBuilder {
 public:
  virtual ~EnvGroupBuilder() = default;
  /// The group's envs (at least one).
  virtual boost::asio::awaitable<std::vector<std::unique_ptr<Env>>> make_envs() = 0;
  /// Rewards given to whole trajectories once the group is done (pairwise preferences, ...),
  /// added to their per-step rewards. The default: 0 for each.
  virtual boost::asio::awaitable<std::vector<double>> compute_group_rewards(
      const std::vector<Trajectory>& trajectories);
  /// Tags that group this builder's metrics in the log (e.g. the dataset's name).
  virtual std::vector<std::string> logging_tags() const { return {}; }
};

/// A dataset of env groups: batch `index` of an epoch. Deterministic in `index`, so a resumed run
/// sees the same batches.
class RLDataset {
 public:
  virtual ~RLDataset() = default;
  /// Batches per epoch.
  virtual std::size_t size() const = 0;
  /// The groups of batch `index` (0 <= index < size()).
  virtual std::vector<std::shared_ptr<EnvGroupBuilder>> get_batch(std::size_t index) = 0;
};

/// Turns an observation into an action: the policy, seen from the rollout.
class TokenCompleter {
 public:
  virtual ~TokenCompleter() = default;
  /// Samples one action for `observation`.
  virtual boost::asio::awaitable<TokensWithLogprobs> complete(const Observation& observation) = 0;
};

/// A TokenCompleter sampling from a SamplingClient with logprobs.
class SamplingTokenCompleter : public TokenCompleter {
 public:
  /// Samples at most `max_tokens` at `temperature` from `sampler`.
  SamplingTokenCompleter(SamplingClient sampler, std::int64_t max_tokens, double temperature = 1.0);
  /// One sample of `observation.input`, stopping at `observation.stop`.
  boost::asio::awaitable<TokensWithLogprobs> complete(const Observation& observation) override;

 private:
  SamplingClient sampler_;
  std::int64_t max_tokens_;
  double temperature_;
};

/// Turns a conversation into the next message (for judges, opponents, tool-using agents).
class MessageCompleter {
 public:
  virtual ~MessageCompleter() = default;
  /// The reply to `conversation`.
  virtual boost::asio::awaitable<renderers::Message> complete(const std::vector<renderers::Message>& conversation) = 0;
};

/// A MessageCompleter that renders the conversation with `renderer`, samples with its stop
/// sequences and parses the reply.
class RendererMessageCompleter : public MessageCompleter {
 public:
  /// `renderer` must outlive the completer.
  RendererMessageCompleter(SamplingClient sampler, const renderers::Renderer& renderer, std::int64_t max_tokens,
                           double temperature = 1.0);
  /// The parsed reply (ParseTermination is not kept; a cut-off reply is returned as far as it went).
  boost::asio::awaitable<renderers::Message> complete(const std::vector<renderers::Message>& conversation) override;

 private:
  SamplingClient sampler_;
  const renderers::Renderer* renderer_;
  std::int64_t max_tokens_;
  double temperature_;
};

/// Runs one episode of `env` with `policy`.
boost::asio::awaitable<Trajectory> do_single_rollout(TokenCompleter& policy, Env& env);
/// Makes the builder's envs, rolls them out concurrently, adds the group rewards.
boost::asio::awaitable<TrajectoryGroup> do_group_rollout(EnvGroupBuilder& builder, TokenCompleter& policy);

}  // namespace tinker::train
