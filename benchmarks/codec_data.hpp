// Deterministic workloads shared by the codec benchmarks and the orjson comparison script
// (benchmarks/json_vs_orjson.py computes the same values with the same generator).
#pragma once

#include <tinker/types.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace tinker::bench {

/// 32-bit LCG (Numerical Recipes constants); `next_logprob` gives float32 values in (-10, 0].
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  std::uint32_t next() { return state_ = state_ * 1664525u + 1013904223u; }
  float next_logprob() { return -static_cast<float>(next() >> 8) / 16777216.0f * 10.0f; }
  TokenId next_token(TokenId vocab) { return static_cast<TokenId>(next() % static_cast<std::uint32_t>(vocab)); }

 private:
  std::uint32_t state_;
};

inline constexpr int fwdbwd_datums = 1024;
inline constexpr int fwdbwd_tokens = 512;
inline constexpr int sample_sequences = 64;
inline constexpr int sample_tokens = 1024;
inline constexpr double fwdbwd_numbers = double(fwdbwd_datums) * fwdbwd_tokens * 3;     // tokens, targets, weights
inline constexpr double sample_numbers = double(sample_sequences) * sample_tokens * 2;  // tokens, logprobs

/// Reports bytes/s of wire text and ns per number carried (what the goals are stated in).
inline void report(benchmark::State& state, std::size_t bytes, double numbers) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["ns_per_number"] =
      benchmark::Counter(numbers * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
  state.counters["numbers"] = numbers;
}

/// The cookbook's SFT step (issue 15): 128 datums x 2048 tokens, as tinker-bench-training-client --sft-shape.
inline constexpr int sft_datums = 128;
inline constexpr int sft_tokens = 2048;
inline constexpr double sft_numbers = double(sft_datums) * sft_tokens * 3;

/// `datums` datums x `tokens` tokens with target_tokens (int64) and weights (float32): a cookbook SFT batch
/// (by default 1024 x 512).
inline ForwardBackwardRequest make_forward_backward_request(int datums = fwdbwd_datums,
                                                            int tokens_per_datum = fwdbwd_tokens) {
  Lcg rng(42);
  std::vector<Datum> data;
  data.reserve(static_cast<std::size_t>(datums));
  for (int d = 0; d < datums; ++d) {
    std::vector<TokenId> tokens(static_cast<std::size_t>(tokens_per_datum) + 1);
    for (auto& t : tokens) t = rng.next_token(151936);
    std::vector<float> weights(static_cast<std::size_t>(tokens_per_datum));
    for (int i = 0; i < tokens_per_datum; ++i) weights[i] = i < 64 ? 0.0f : 1.0f;  // prompt masked
    const std::vector<TokenId> input(tokens.begin(), tokens.end() - 1);
    const std::vector<TokenId> targets(tokens.begin() + 1, tokens.end());
    data.emplace_back(ModelInput::from_ints(input), LossFnInputs{{"target_tokens", TensorData::from_tokens(targets)},
                                                                 {"weights", TensorData(std::move(weights))}});
  }
  return ForwardBackwardRequest("session:train:0", 1, ForwardBackwardInput(std::move(data), loss_fn::cross_entropy));
}

/// 64 sequences x 1024 generated tokens with per-token logprobs.
inline SampleResponse make_sample_response() {
  Lcg rng(7);
  std::vector<SampledSequence> sequences;
  for (int s = 0; s < sample_sequences; ++s) {
    std::vector<TokenId> tokens(sample_tokens);
    std::vector<float> logprobs(sample_tokens);
    for (int i = 0; i < sample_tokens; ++i) {
      tokens[i] = rng.next_token(151936);
      logprobs[i] = rng.next_logprob();
    }
    sequences.emplace_back(StopReason::length, std::move(tokens), std::move(logprobs));
  }
  return SampleResponse(std::move(sequences));
}

/// Float32 values as in a logprobs tensor (the orjson comparison encodes the same list).
inline std::vector<float> make_float_tensor(std::size_t count) {
  Lcg rng(1234);
  std::vector<float> values(count);
  for (auto& v : values) v = rng.next_logprob();
  return values;
}

}  // namespace tinker::bench
