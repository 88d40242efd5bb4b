// DPO (sigmoid form) with its gradient with respect to the per-token logprobs, laid out as the
// cookbook's train_dpo lays its batches out: chosen datums at even indices, rejected at odd ones.
#include "losses/checks.hpp"

#include <tinker/losses.hpp>

#include <algorithm>
#include <cmath>

namespace tinker::losses {
namespace {

constexpr std::string_view kDpoLoss = "dpo";

// One response of a pair: its token weights and its weighted policy-minus-reference log-ratio.
struct Response {
  std::vector<float> weights;
  double log_ratio = 0.0;
};

Response weighted_response(const std::vector<Datum>& data, const std::vector<std::vector<float>>& logprobs,
                           const ReferenceLogprobs& reference, std::size_t i) {
  const std::size_t count = detail::target_count(kDpoLoss, data[i], i);
  detail::check_length(kDpoLoss, i, "logprobs", logprobs[i].size(), count);
  detail::check_length(kDpoLoss, i, "reference logprobs", reference[i].size(), count);
  Response response;
  response.weights = detail::datum_weights(kDpoLoss, data[i], i, count, true);
  for (std::size_t t = 0; t < count; ++t) {
    const double ref = reference[i][t];
    if (!std::isfinite(ref)) {
      detail::fail(kDpoLoss, detail::datum_path(i) + ": reference logprobs[" + std::to_string(t) + "]: not finite");
    }
    response.log_ratio += response.weights[t] * (static_cast<double>(logprobs[i][t]) - ref);
  }
  return response;
}

// -log sigmoid(z) = softplus(-z), computed without overflow for large |z|.
double negative_log_sigmoid(double z) {
  return std::max(-z, 0.0) + std::log1p(std::exp(-std::abs(z)));
}

double sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

std::vector<float> scaled(const std::vector<float>& weights, double factor) {
  std::vector<float> out(weights.size());
  for (std::size_t t = 0; t < weights.size(); ++t) out[t] = static_cast<float>(factor * weights[t]);
  return out;
}

}  // namespace

CustomLossOutput dpo_loss(const std::vector<Datum>& data, const std::vector<std::vector<float>>& logprobs,
                          const ReferenceLogprobs& reference, double beta) {
  if (!std::isfinite(beta) || beta <= 0) detail::fail(kDpoLoss, "beta must be a positive number");
  if (data.size() % 2 != 0) {
    detail::fail(kDpoLoss, "data holds " + std::to_string(data.size()) +
                               " datums; DPO needs chosen/rejected pairs (chosen at even indices, rejected at odd)");
  }
  if (data.empty()) detail::fail(kDpoLoss, "data is empty; DPO needs at least one chosen/rejected pair");
  detail::check_batch(kDpoLoss, "logprobs", logprobs.size(), data.size());
  detail::check_batch(kDpoLoss, "reference logprobs", reference.size(), data.size());

  const std::size_t pairs = data.size() / 2;
  const double per_pair = 1.0 / static_cast<double>(pairs);
  CustomLossOutput out;
  out.gradients.resize(data.size());
  double correct = 0.0;
  double chosen_reward = 0.0;
  double rejected_reward = 0.0;
  for (std::size_t p = 0; p < pairs; ++p) {
    const Response chosen = weighted_response(data, logprobs, reference, 2 * p);
    const Response rejected = weighted_response(data, logprobs, reference, 2 * p + 1);
    const double z = beta * (chosen.log_ratio - rejected.log_ratio);
    out.loss += per_pair * negative_log_sigmoid(z);
    // d/dz of -log sigmoid(z) is -sigmoid(-z); dz/d chosen logprob_t = beta w_t, rejected: -beta w_t.
    const double dz = -per_pair * sigmoid(-z) * beta;
    out.gradients[2 * p] = scaled(chosen.weights, dz);
    out.gradients[2 * p + 1] = scaled(rejected.weights, -dz);
    if (chosen.log_ratio > rejected.log_ratio) correct += 1.0;
    chosen_reward += beta * chosen.log_ratio;
    rejected_reward += beta * rejected.log_ratio;
  }
  out.metrics["dpo_loss"] = out.loss;
  out.metrics["accuracy"] = correct * per_pair;
  out.metrics["margin"] = (chosen_reward - rejected_reward) * per_pair;
  out.metrics["chosen_reward"] = chosen_reward * per_pair;
  out.metrics["rejected_reward"] = rejected_reward * per_pair;
  out.metrics["num_pairs"] = static_cast<double>(pairs);
  return out;
}

CustomLossFunction dpo(ReferenceLogprobs reference, double beta) {
  if (!std::isfinite(beta) || beta <= 0) detail::fail(kDpoLoss, "beta must be a positive number");
  return [reference = std::move(reference), beta](const std::vector<Datum>& data,
                                                  const std::vector<std::vector<float>>& logprobs) {
    return dpo_loss(data, logprobs, reference, beta);
  };
}

}  // namespace tinker::losses
