// Helpers shared by the tiny model's tests: a small architecture and datum builders.
#pragma once

#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::local::model::testing {

/// A small vocabulary keeps the tests fast at -O0 under sanitizers.
inline Architecture small_arch(int vocab = 97) {
  Architecture arch;
  arch.vocab_size = vocab;
  arch.d_model = 32;
  arch.d_mlp = 64;
  arch.max_context = 128;
  return arch;
}

inline LoraSettings lora_settings(int rank = 8, std::uint64_t seed = 7) {
  LoraSettings s;
  s.rank = rank;
  s.seed = seed;
  return s;
}

/// `length` pseudo-random token ids in [0, vocab) from `seed`.
inline std::vector<TokenId> random_tokens(std::uint64_t seed, int length, int vocab) {
  Rng rng(seed);
  std::vector<TokenId> tokens;
  for (int i = 0; i < length; ++i)
    tokens.push_back(static_cast<TokenId>(rng.next() % static_cast<std::uint64_t>(vocab)));
  return tokens;
}

/// The SFT datum of a full sequence: input S[:-1], targets S[1:], all weights `weight`.
inline Datum cross_entropy_datum(const std::vector<TokenId>& sequence, float weight = 1.0f) {
  std::vector<TokenId> input(sequence.begin(), sequence.end() - 1);
  std::vector<TokenId> targets(sequence.begin() + 1, sequence.end());
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData::from_tokens(targets));
  inputs.emplace("weights", TensorData(std::vector<float>(targets.size(), weight)));
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

/// An RL datum: input S[:-1], targets S[1:], sampling logprobs q and advantages A (both N long).
inline Datum rl_datum(const std::vector<TokenId>& sequence, std::vector<float> q, std::vector<float> advantages) {
  std::vector<TokenId> input(sequence.begin(), sequence.end() - 1);
  std::vector<TokenId> targets(sequence.begin() + 1, sequence.end());
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData::from_tokens(targets));
  inputs.emplace("logprobs", TensorData(std::move(q)));
  inputs.emplace("advantages", TensorData(std::move(advantages)));
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

/// A top-k distillation datum: input S[:-1]; K candidate targets per position, the first being
/// S[t+1] and the others pseudo-random from `seed`; (N, K) weights from `seed` in [-0.5, 1).
inline Datum topk_datum(const std::vector<TokenId>& sequence, int k, int vocab, std::uint64_t seed) {
  std::vector<TokenId> input(sequence.begin(), sequence.end() - 1);
  const auto n = static_cast<std::int64_t>(input.size());
  Rng rng(seed);
  std::vector<std::int64_t> targets;
  std::vector<float> weights;
  for (std::int64_t t = 0; t < n; ++t) {
    for (int j = 0; j < k; ++j) {
      targets.push_back(j == 0 ? sequence[static_cast<std::size_t>(t) + 1]
                               : static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(vocab)));
      weights.push_back(static_cast<float>(rng.uniform() * 1.5 - 0.5));
    }
  }
  const std::vector<std::int64_t> shape{n, k};
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::move(targets), shape));
  inputs.emplace("weights", TensorData(std::move(weights), shape));
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

inline std::vector<float> logprobs_of(const ForwardBackwardOutput& out, std::size_t datum) {
  const auto values = out.loss_fn_outputs.at(datum).at("logprobs").floats();
  return {values.begin(), values.end()};
}

inline double loss_sum(const ForwardBackwardOutput& out) {
  return out.metrics.at("loss:sum");
}

/// A small fixed SFT dataset: `count` sequences of `length` tokens.
inline ForwardBackwardInput sft_batch(int vocab, int count = 4, int length = 17, std::uint64_t seed = 11) {
  std::vector<Datum> data;
  for (int i = 0; i < count; ++i) data.push_back(cross_entropy_datum(random_tokens(seed + i, length, vocab)));
  return ForwardBackwardInput(std::move(data), loss_fn::cross_entropy);
}

}  // namespace tinker::local::model::testing
