// Validation of forward_backward inputs and the per-token losses.
#include "programs/local/model/losses.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string_view>

namespace tinker::local::model {
namespace {

// Probability ratios are computed from log-ratios clamped to this range, so that an absurd
// sampling logprob (e.g. the -99999 padding some clients use) gives a large but finite loss
// instead of infinity or NaN, which JSON could not carry. Realistic inputs never reach it.
constexpr double kMaxLogRatio = 80.0;

std::string index_path(std::string_view prefix, std::size_t i) {
  return std::string(prefix) + "[" + std::to_string(i) + "]";
}

std::string loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::cross_entropy: return loss_fn::cross_entropy;
    case LossKind::importance_sampling: return loss_fn::importance_sampling;
    case LossKind::ppo: return loss_fn::ppo;
    case LossKind::cispo: return loss_fn::cispo;
    case LossKind::dro: break;
  }
  return loss_fn::dro;
}

double config_value(const ForwardBackwardInput& input, const std::string& key, double fallback) {
  if (!input.loss_fn_config) return fallback;
  auto it = input.loss_fn_config->find(key);
  if (it == input.loss_fn_config->end()) return fallback;
  if (!std::isfinite(it->second)) throw UserError("loss_fn_config." + key + ": must be a finite number");
  return it->second;
}

const TensorData& find_tensor(const Datum& datum, const std::string& datum_path, const std::string& key,
                              LossKind kind) {
  auto it = datum.loss_fn_inputs.find(key);
  if (it == datum.loss_fn_inputs.end()) {
    throw UserError(datum_path + ".loss_fn_inputs: missing required key '" + key + "' for loss_fn " + loss_name(kind));
  }
  return it->second;
}

// Checks dtype and structure of the tensor at `path`; returns its shape.
std::vector<std::int64_t> checked_shape(const TensorData& tensor, const std::string& path, DType dtype) {
  if (tensor.dtype() != dtype) {
    throw UserError(path + ": dtype " + to_string(tensor.dtype()) + ", expected " + to_string(dtype));
  }
  try {
    tensor.validate(path);
  } catch (const tinker::error& e) {
    throw UserError(e.diag().message.empty() ? std::string(e.what()) : e.diag().message);
  }
  return tensor.effective_shape();
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// The tensor `key` of datum `datum_path`, checked for presence, dtype, structure and shape.
const TensorData& required_tensor(const Datum& datum, const std::string& datum_path, const std::string& key,
                                  DType dtype, const std::vector<std::int64_t>& expected, LossKind kind) {
  const TensorData& tensor = find_tensor(datum, datum_path, key, kind);
  const std::string path = datum_path + ".loss_fn_inputs." + key;
  const std::vector<std::int64_t> shape = checked_shape(tensor, path, dtype);
  if (shape == expected) return tensor;
  if (expected.size() == 1) {
    const std::int64_t count = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
    if (shape.size() == 1 || count != expected[0]) {
      throw UserError(path + ": length " + std::to_string(count) + " != model_input length " +
                      std::to_string(expected[0]));
    }
    return tensor;  // a 1-D input given with another shape of the same size, as before
  }
  throw UserError(path + ": shape " + shape_text(shape) + " != target_tokens shape " + shape_text(expected));
  return tensor;
}

std::vector<double> float_input(const Datum& datum, const std::string& datum_path, const std::string& key,
                                const std::vector<std::int64_t>& expected, LossKind kind) {
  const std::vector<float> values =
      required_tensor(datum, datum_path, key, DType::float32, expected, kind).to_dense_floats();
  return {values.begin(), values.end()};
}

// target_tokens: (N,) for every loss, or (N, K) with K >= 1 for cross_entropy (top-k
// distillation). Returns the shape.
std::vector<std::int64_t> target_shape(const Datum& datum, const std::string& datum_path, std::size_t n,
                                       LossKind kind) {
  const TensorData& tensor = find_tensor(datum, datum_path, "target_tokens", kind);
  const std::string path = datum_path + ".loss_fn_inputs.target_tokens";
  const std::vector<std::int64_t> shape = checked_shape(tensor, path, DType::int64);
  const auto length = static_cast<std::int64_t>(n);
  if (shape.size() == 1 && shape[0] == length) return shape;
  if (shape.size() == 2 && shape[0] == length && shape[1] >= 1) {
    if (kind == LossKind::cross_entropy) return shape;
    throw UserError(path + ": shape " + shape_text(shape) + "; (N, K) targets are supported by cross_entropy only, " +
                    loss_name(kind) + " needs (" + std::to_string(n) + ",)");
  }
  throw UserError(path + ": shape " + shape_text(shape) + ", expected (" + std::to_string(n) + ",) or, for " +
                  "cross_entropy, (" + std::to_string(n) + ", K) with K >= 1 (N = model_input length " +
                  std::to_string(n) + ")");
}

}  // namespace

LossConfig parse_loss_config(const ForwardBackwardInput& input) {
  LossConfig config;
  const std::string& name = input.loss_fn;
  if (name == loss_fn::cross_entropy) {
    config.kind = LossKind::cross_entropy;
  } else if (name == loss_fn::importance_sampling) {
    config.kind = LossKind::importance_sampling;
  } else if (name == loss_fn::ppo) {
    config.kind = LossKind::ppo;
  } else if (name == loss_fn::cispo) {
    config.kind = LossKind::cispo;
  } else if (name == loss_fn::dro) {
    config.kind = LossKind::dro;
  } else {
    throw UserError("loss_fn: unknown loss function '" + name +
                    "' (expected cross_entropy, importance_sampling, ppo, cispo or dro)");
  }
  if (config.kind == LossKind::cispo) {
    config.clip_low = kDefaultCispoClipLow;
    config.clip_high = kDefaultCispoClipHigh;
  }
  if (config.kind == LossKind::ppo || config.kind == LossKind::cispo) {
    config.clip_low = config_value(input, "clip_low_threshold", config.clip_low);
    config.clip_high = config_value(input, "clip_high_threshold", config.clip_high);
    if (config.clip_low < 0.0) throw UserError("loss_fn_config.clip_low_threshold: must be >= 0");
    if (config.clip_high < config.clip_low) {
      throw UserError("loss_fn_config.clip_high_threshold: must be >= clip_low_threshold");
    }
  }
  if (config.kind == LossKind::dro) {
    config.beta = config_value(input, "beta", config.beta);
    if (config.beta < 0.0) throw UserError("loss_fn_config.beta: must be >= 0");
  }
  return config;
}

std::vector<DatumInputs> validate_data(const ForwardBackwardInput& input, const LossConfig& config,
                                       const Architecture& arch) {
  std::vector<DatumInputs> result;
  result.reserve(input.data.size());
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    const Datum& datum = input.data[i];
    const std::string path = index_path("data", i);
    DatumInputs parsed;
    parsed.sequence = read_model_input(datum.model_input, path + ".model_input", arch);
    const std::size_t n = parsed.sequence.size();
    if (n > static_cast<std::size_t>(arch.max_context)) {
      throw UserError(path + ".model_input: length " + std::to_string(n) + " exceeds the model's max context " +
                      std::to_string(arch.max_context));
    }
    const std::vector<std::int64_t> shape = target_shape(datum, path, n, config.kind);
    parsed.two_dimensional = shape.size() == 2;
    parsed.targets_per_position = parsed.two_dimensional ? static_cast<std::size_t>(shape[1]) : 1;
    const std::vector<std::int64_t> targets = datum.loss_fn_inputs.at("target_tokens").to_dense_ints();
    for (std::size_t k = 0; k < targets.size(); ++k) {
      if (targets[k] < 0 || targets[k] >= arch.vocab_size) {
        const std::string where =
            parsed.two_dimensional
                ? index_path(index_path(path + ".loss_fn_inputs.target_tokens", k / parsed.targets_per_position),
                             k % parsed.targets_per_position)
                : index_path(path + ".loss_fn_inputs.target_tokens", k);
        throw UserError(where + ": token id " + std::to_string(targets[k]) + " is outside the vocabulary [0, " +
                        std::to_string(arch.vocab_size) + ")");
      }
      parsed.targets.push_back(static_cast<TokenId>(targets[k]));
    }
    const std::vector<std::int64_t> per_position{static_cast<std::int64_t>(n)};
    if (config.kind == LossKind::cross_entropy) {
      parsed.weights = float_input(datum, path, "weights", shape, config.kind);
    } else {
      parsed.sampling_logprobs = float_input(datum, path, "logprobs", per_position, config.kind);
      parsed.advantages = float_input(datum, path, "advantages", per_position, config.kind);
    }
    result.push_back(std::move(parsed));
  }
  return result;
}

TokenLoss token_loss(const LossConfig& config, const DatumInputs& datum, std::size_t i, double logprob) {
  TokenLoss out;
  if (config.kind == LossKind::cross_entropy) {
    out.loss = -datum.weights[i] * logprob;
    out.dloss_dlogprob = -datum.weights[i];
    return out;
  }
  const double q = datum.sampling_logprobs[i];
  const double advantage = datum.advantages[i];
  const double ratio = std::exp(std::clamp(logprob - q, -kMaxLogRatio, kMaxLogRatio));
  switch (config.kind) {
    case LossKind::importance_sampling:
      out.loss = -ratio * advantage;
      out.dloss_dlogprob = -ratio * advantage;
      break;
    case LossKind::ppo: {
      // -min(r A, clip(r) A): the gradient flows only when the unclipped term is the minimum.
      const double unclipped = ratio * advantage;
      const double clipped = std::clamp(ratio, config.clip_low, config.clip_high) * advantage;
      out.loss = -std::min(unclipped, clipped);
      out.dloss_dlogprob = unclipped <= clipped ? -ratio * advantage : 0.0;
      break;
    }
    case LossKind::cispo: {
      const double clipped_ratio = std::clamp(ratio, config.clip_low, config.clip_high);  // stop-gradient
      out.loss = -clipped_ratio * logprob * advantage;
      out.dloss_dlogprob = -clipped_ratio * advantage;
      break;
    }
    case LossKind::dro: {
      const double gap = logprob - q;
      out.loss = -(logprob * advantage - 0.5 * config.beta * gap * gap);
      out.dloss_dlogprob = -(advantage - config.beta * gap);
      break;
    }
    case LossKind::cross_entropy: break;
  }
  return out;
}

}  // namespace tinker::local::model
