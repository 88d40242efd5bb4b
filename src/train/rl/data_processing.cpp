// Group-relative advantages and trajectories -> training datums (the cookbook's
// rl/data_processing.py).
#include <tinker/error.hpp>
#include <tinker/train/rl.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <variant>

namespace tinker::train {

std::vector<std::vector<double>> compute_advantages(const std::vector<TrajectoryGroup>& groups) {
  std::vector<std::vector<double>> advantages;
  advantages.reserve(groups.size());
  for (const TrajectoryGroup& group : groups) {
    std::vector<double> rewards = group.total_rewards();
    if (!rewards.empty()) {
      const double mean = std::accumulate(rewards.begin(), rewards.end(), 0.0) / static_cast<double>(rewards.size());
      for (double& reward : rewards) reward -= mean;
    }
    advantages.push_back(std::move(rewards));
  }
  return advantages;
}

bool has_constant_reward(const TrajectoryGroup& group) {
  const std::vector<double> rewards = group.total_rewards();
  return std::all_of(rewards.begin(), rewards.end(), [&](double reward) { return reward == rewards.front(); });
}

namespace {

// One position of a flattened observation: a text token, or a whole non-text chunk (an image),
// which is compared and counted as a unit.
using FlatElement = std::variant<TokenId, ModelInputChunk>;

std::vector<FlatElement> flatten_chunks(const ModelInput& input) {
  std::vector<FlatElement> flat;
  for (const ModelInputChunk& chunk : input.chunks) {
    if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
      flat.insert(flat.end(), text->tokens.begin(), text->tokens.end());
    } else {
      flat.emplace_back(chunk);
    }
  }
  return flat;
}

std::int64_t flat_length(const FlatElement& element) {
  if (std::holds_alternative<TokenId>(element)) return 1;
  ModelInput single;
  single.append(std::get<ModelInputChunk>(element));
  return single.length();
}

// The sequence of one datum under construction: every position with its sampling logprob,
// advantage and mask (0 for observation positions).
class SequenceAccumulator {
 public:
  std::vector<FlatElement> sequence;
  std::vector<float> logprobs;
  std::vector<float> advantages;
  std::vector<float> mask;

  bool empty() const { return sequence.empty(); }

  bool is_prefix_of(const std::vector<FlatElement>& observation) const {
    return sequence.size() <= observation.size() && std::equal(sequence.begin(), sequence.end(), observation.begin());
  }

  void add_observation(std::vector<FlatElement>::const_iterator first, std::vector<FlatElement>::const_iterator last) {
    for (auto it = first; it != last; ++it) {
      const auto length = static_cast<std::size_t>(flat_length(*it));
      logprobs.insert(logprobs.end(), length, 0.0f);
      advantages.insert(advantages.end(), length, 0.0f);
      mask.insert(mask.end(), length, 0.0f);
      sequence.push_back(*it);
    }
  }

  void add_action(const TokensWithLogprobs& action, double advantage) {
    if (action.logprobs.size() != action.tokens.size()) {
      throw error(errc::invalid_argument, "trajectory_to_data: an action has " + std::to_string(action.tokens.size()) +
                                              " tokens but " + std::to_string(action.logprobs.size()) + " logprobs");
    }
    sequence.insert(sequence.end(), action.tokens.begin(), action.tokens.end());
    logprobs.insert(logprobs.end(), action.logprobs.begin(), action.logprobs.end());
    advantages.insert(advantages.end(), action.tokens.size(), static_cast<float>(advantage));
    mask.insert(mask.end(), action.tokens.size(), 1.0f);
  }

  // The next-token datum: inputs are every position but the last, targets every position but the
  // first (0 inside a non-text chunk), and the per-position values shifted like the targets.
  Datum to_datum() const {
    if (!std::holds_alternative<TokenId>(sequence.back())) {
      throw error(errc::invalid_argument, "trajectory_to_data: a sequence cannot end with a non-text chunk");
    }
    std::vector<TokenId> targets;
    ModelInput input;
    std::vector<TokenId> text;
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      if (const auto* token = std::get_if<TokenId>(&sequence[i])) {
        targets.push_back(*token);
        if (i + 1 < sequence.size()) text.push_back(*token);
        continue;
      }
      if (!text.empty()) input.append(EncodedTextChunk(std::move(text)));
      text.clear();
      const ModelInputChunk& chunk = std::get<ModelInputChunk>(sequence[i]);
      input.append(chunk);
      targets.insert(targets.end(), static_cast<std::size_t>(flat_length(sequence[i])), 0);
    }
    if (!text.empty()) input.append(EncodedTextChunk(std::move(text)));
    if (targets.size() < 2)
      throw error(errc::invalid_argument, "trajectory_to_data: a sequence needs 2 tokens or more");
    targets.erase(targets.begin());
    const std::vector<float> shifted_logprobs(logprobs.begin() + 1, logprobs.end());
    const std::vector<float> shifted_advantages(advantages.begin() + 1, advantages.end());
    const std::vector<float> shifted_mask(mask.begin() + 1, mask.end());
    LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)},
                        {"logprobs", TensorData::from_floats(shifted_logprobs)},
                        {"advantages", TensorData::from_floats(shifted_advantages)},
                        {"mask", TensorData::from_floats(shifted_mask)}};
    return Datum(std::move(input), std::move(inputs));
  }
};

}  // namespace

std::vector<Datum> trajectory_to_data(const Trajectory& trajectory, double advantage) {
  std::vector<Datum> data;
  SequenceAccumulator current;
  for (const Transition& transition : trajectory.transitions) {
    const std::vector<FlatElement> observation = flatten_chunks(transition.observation.input);
    auto delta_begin = observation.begin();
    if (!current.empty() && current.is_prefix_of(observation)) {
      delta_begin += static_cast<std::ptrdiff_t>(current.sequence.size());
    } else if (!current.empty()) {
      data.push_back(current.to_datum());
      current = SequenceAccumulator();
    }
    current.add_observation(delta_begin, observation.end());
    current.add_action(transition.action, advantage);
  }
  if (!current.empty()) data.push_back(current.to_datum());
  return data;
}

std::vector<Datum> assemble_training_data(const std::vector<TrajectoryGroup>& groups,
                                          const std::vector<std::vector<double>>& advantages) {
  if (advantages.size() != groups.size()) {
    throw error(errc::invalid_argument, "assemble_training_data: " + std::to_string(advantages.size()) +
                                            " advantage vectors for " + std::to_string(groups.size()) + " groups");
  }
  std::vector<Datum> data;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<Trajectory>& trajectories = groups[g].trajectories;
    if (advantages[g].size() != trajectories.size()) {
      throw error(errc::invalid_argument, "assemble_training_data: group " + std::to_string(g) + " has " +
                                              std::to_string(trajectories.size()) + " trajectories but " +
                                              std::to_string(advantages[g].size()) + " advantages");
    }
    for (std::size_t t = 0; t < trajectories.size(); ++t) {
      std::vector<Datum> datums = trajectory_to_data(trajectories[t], advantages[g][t]);
      std::move(datums.begin(), datums.end(), std::back_inserter(data));
    }
  }
  return data;
}

Datum remove_mask(Datum datum) {
  datum.loss_fn_inputs.erase("mask");
  return datum;
}

ModelInput full_sequence(const Datum& datum) {
  ModelInput sequence = datum.model_input;
  const auto found = datum.loss_fn_inputs.find("target_tokens");
  if (found == datum.loss_fn_inputs.end()) {
    throw error(errc::invalid_argument, "full_sequence: the datum has no target_tokens");
  }
  const std::vector<std::int64_t> targets = found->second.to_dense_ints();
  if (targets.empty()) throw error(errc::invalid_argument, "full_sequence: the datum's target_tokens are empty");
  sequence.append_int(static_cast<TokenId>(targets.back()));
  return sequence;
}

}  // namespace tinker::train
