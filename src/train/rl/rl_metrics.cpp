// The KL penalty against a reference model and the per-batch metrics of RL (the cookbook's
// rl/metrics.py and rl/metric_util.py).
#include "train/rl/concurrency.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/train/rl.hpp>

#include <map>
#include <numeric>
#include <string>
#include <utility>

namespace tinker::train {

namespace {

std::vector<float> rl_datum_floats(const Datum& datum, const char* name, const char* caller) {
  const auto found = datum.loss_fn_inputs.find(name);
  if (found == datum.loss_fn_inputs.end()) {
    throw error(errc::invalid_argument, std::string(caller) + ": a datum has no `" + name + "` input");
  }
  return found->second.to_dense_floats();
}

// sum_{k>=0} gamma^k x[i+k] for each i (the cookbook's discounted_future_sum_vectorized).
std::vector<double> discounted_future_sum(const std::vector<double>& values, double gamma) {
  std::vector<double> sums(values.size());
  double running = 0.0;
  for (std::size_t i = values.size(); i-- > 0;) {
    running = values[i] + gamma * running;
    sums[i] = running;
  }
  return sums;
}

}  // namespace

double apply_kl_penalty(std::vector<Datum>& data, const std::vector<std::vector<float>>& reference_logprobs,
                        double coef, double discount_factor) {
  if (reference_logprobs.size() != data.size()) {
    throw error(errc::invalid_argument, "apply_kl_penalty: " + std::to_string(reference_logprobs.size()) +
                                            " reference logprob vectors for " + std::to_string(data.size()) +
                                            " datums");
  }
  std::vector<std::vector<double>> differences(data.size());
  std::vector<std::vector<float>> masks(data.size());
  double difference_sum = 0.0;
  double action_tokens = 0.0;
  for (std::size_t d = 0; d < data.size(); ++d) {
    const std::vector<float> sampled = rl_datum_floats(data[d], "logprobs", "apply_kl_penalty");
    masks[d] = rl_datum_floats(data[d], "mask", "apply_kl_penalty");
    if (reference_logprobs[d].size() != sampled.size() || masks[d].size() != sampled.size()) {
      throw error(errc::invalid_argument, "apply_kl_penalty: datum " + std::to_string(d) + " has " +
                                              std::to_string(sampled.size()) + " logprobs, " +
                                              std::to_string(masks[d].size()) + " mask values and " +
                                              std::to_string(reference_logprobs[d].size()) + " reference logprobs");
    }
    differences[d].resize(sampled.size());
    for (std::size_t i = 0; i < sampled.size(); ++i) {
      differences[d][i] = (static_cast<double>(sampled[i]) - reference_logprobs[d][i]) * masks[d][i];
      difference_sum += differences[d][i];
      action_tokens += masks[d][i];
    }
  }
  if (action_tokens <= 0.0) throw error(errc::invalid_argument, "apply_kl_penalty: the batch has no action token");
  const double mean_difference = difference_sum / action_tokens;
  for (std::size_t d = 0; d < data.size(); ++d) {
    std::vector<double> penalty(differences[d].size());
    for (std::size_t i = 0; i < penalty.size(); ++i) {
      penalty[i] = coef * masks[d][i] * (mean_difference - differences[d][i]);
    }
    if (discount_factor > 0.0) penalty = discounted_future_sum(penalty, discount_factor);
    std::vector<float> advantages = rl_datum_floats(data[d], "advantages", "apply_kl_penalty");
    if (advantages.size() != penalty.size()) {
      throw error(errc::invalid_argument, "apply_kl_penalty: datum " + std::to_string(d) +
                                              " has advantages of another length than its logprobs");
    }
    for (std::size_t i = 0; i < advantages.size(); ++i) {
      advantages[i] = static_cast<float>(advantages[i] + penalty[i]);
    }
    data[d].loss_fn_inputs["advantages"] = TensorData::from_floats(advantages);
  }
  return mean_difference;
}

namespace {

boost::asio::awaitable<std::vector<float>> reference_logprobs_of(SamplingClient reference, ModelInput sequence) {
  Future<PromptLogprobs> pending = co_await reference.async_compute_logprobs(std::move(sequence), use_awaitable);
  const PromptLogprobs logprobs = co_await pending.async_get(use_awaitable);
  std::vector<float> values;
  values.reserve(logprobs.empty() ? 0 : logprobs.size() - 1);
  for (std::size_t i = 1; i < logprobs.size(); ++i) values.push_back(logprobs[i].value_or(0.0f));
  co_return values;
}

}  // namespace

boost::asio::awaitable<std::vector<std::vector<float>>> compute_reference_logprobs(SamplingClient reference,
                                                                                   std::vector<Datum> data) {
  std::vector<boost::asio::awaitable<std::vector<float>>> requests;
  requests.reserve(data.size());
  for (const Datum& datum : data) requests.push_back(reference_logprobs_of(reference, full_sequence(datum)));
  co_return co_await rl_detail::gather(std::move(requests));
}

namespace {

// Means of the Env step metrics over the transitions that report each key, in first-seen order
// (the cookbook's dict_mean).
StepMetrics mean_transition_metrics(const std::vector<TrajectoryGroup>& groups) {
  std::vector<std::pair<std::string, std::pair<double, double>>> sums;  // key -> (sum, count)
  for (const TrajectoryGroup& group : groups) {
    for (const Trajectory& trajectory : group.trajectories) {
      for (const Transition& transition : trajectory.transitions) {
        for (const auto& entry : transition.metrics.values) {
          const std::string& key = entry.first;
          auto found = std::find_if(sums.begin(), sums.end(), [&](const auto& sum) { return sum.first == key; });
          if (found == sums.end()) found = sums.insert(sums.end(), {key, {0.0, 0.0}});
          found->second.first += entry.second;
          found->second.second += 1.0;
        }
      }
    }
  }
  StepMetrics means;
  for (const auto& [key, sum] : sums) means.set(key, sum.first / sum.second);
  return means;
}

StepMetrics trajectory_metrics_of(const std::vector<TrajectoryGroup>& groups) {
  double turns = 0, episodes = 0, ac_tokens = 0, ob_tokens = 0, reward_sum = 0;
  double mixed = 0, all_good = 0, all_bad = 0;
  for (const TrajectoryGroup& group : groups) {
    for (const Trajectory& trajectory : group.trajectories) {
      episodes += 1;
      reward_sum += trajectory.total_reward();
      for (const Transition& transition : trajectory.transitions) {
        turns += 1;
        ac_tokens += static_cast<double>(transition.action.tokens.size());
        ob_tokens += static_cast<double>(transition.observation.input.length());
      }
    }
    if (!has_constant_reward(group)) {
      mixed += 1;
    } else if (!group.trajectories.empty() && group.trajectories.front().total_reward() >= 0.5) {
      all_good += 1;
    } else {
      all_bad += 1;
    }
  }
  StepMetrics metrics;
  metrics.set("ac_tokens_per_turn", turns > 0 ? ac_tokens / turns : 0.0);
  metrics.set("ob_tokens_per_turn", turns > 0 ? ob_tokens / turns : 0.0);
  metrics.set("turns_per_episode", episodes > 0 ? turns / episodes : 0.0);
  metrics.set("total_episodes", episodes);
  metrics.set("total_turns", turns);
  metrics.set("total_ac_tokens", ac_tokens);
  metrics.set("total_ob_tokens", ob_tokens);
  metrics.set("reward/total", episodes > 0 ? reward_sum / episodes : 0.0);
  metrics.merge(mean_transition_metrics(groups));
  const double group_count = static_cast<double>(groups.size());
  metrics.set("by_group/frac_mixed", group_count > 0 ? mixed / group_count : 0.0);
  metrics.set("by_group/frac_all_good", group_count > 0 ? all_good / group_count : 0.0);
  metrics.set("by_group/frac_all_bad", group_count > 0 ? all_bad / group_count : 0.0);
  return metrics;
}

}  // namespace

StepMetrics compute_trajectory_metrics(const std::vector<TrajectoryGroup>& groups) {
  // Tags in first-seen order, each with its groups; a tag is worth its own keys only when it
  // selects a strict subset of the batch.
  std::vector<std::pair<std::string, std::vector<TrajectoryGroup>>> by_tag;
  for (const TrajectoryGroup& group : groups) {
    for (const std::string& tag : group.tags) {
      auto found = std::find_if(by_tag.begin(), by_tag.end(), [&](const auto& entry) { return entry.first == tag; });
      if (found == by_tag.end()) found = by_tag.insert(by_tag.end(), {tag, {}});
      found->second.push_back(group);
    }
  }
  const bool nontrivial_tags =
      std::any_of(by_tag.begin(), by_tag.end(), [&](const auto& entry) { return entry.second.size() < groups.size(); });
  StepMetrics metrics;
  if (nontrivial_tags) {
    for (const auto& [tag, tagged] : by_tag) metrics.merge(trajectory_metrics_of(tagged), "env/" + tag + "/");
  }
  metrics.merge(trajectory_metrics_of(groups), "env/all/");
  return metrics;
}

StepMetrics compute_kl_sample_train(const std::vector<Datum>& data,
                                    const std::vector<std::vector<float>>& training_logprobs) {
  if (training_logprobs.size() != data.size()) {
    throw error(errc::invalid_argument, "compute_kl_sample_train: " + std::to_string(training_logprobs.size()) +
                                            " logprob vectors for " + std::to_string(data.size()) + " datums");
  }
  double difference_sum = 0.0, square_sum = 0.0, sampling_sum = 0.0, count = 0.0;
  for (std::size_t d = 0; d < data.size(); ++d) {
    const std::vector<float> sampled = rl_datum_floats(data[d], "logprobs", "compute_kl_sample_train");
    const std::vector<float> mask = rl_datum_floats(data[d], "mask", "compute_kl_sample_train");
    if (training_logprobs[d].size() != sampled.size() || mask.size() != sampled.size()) {
      throw error(errc::invalid_argument,
                  "compute_kl_sample_train: datum " + std::to_string(d) + " has logprobs of another length");
    }
    for (std::size_t i = 0; i < sampled.size(); ++i) {
      if (mask[i] <= 0.0f) continue;
      const double difference = static_cast<double>(sampled[i]) - training_logprobs[d][i];
      difference_sum += difference;
      square_sum += difference * difference;
      sampling_sum += sampled[i];
      count += 1.0;
    }
  }
  StepMetrics metrics;
  if (count == 0.0) return metrics;
  metrics.set("optim/kl_sample_train_v1", difference_sum / count);
  metrics.set("optim/kl_sample_train_v2", 0.5 * square_sum / count);
  metrics.set("optim/entropy", -sampling_sum / count);
  return metrics;
}

}  // namespace tinker::train
