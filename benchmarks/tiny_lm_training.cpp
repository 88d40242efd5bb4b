// tinker-local's tiny model: one training step (forward_backward + optim_step) at the server's
// real vocabulary (1000), rank 32, a batch of 4 sequences of 33 tokens. What every test and sample
// that trains the real model pays per step; time it here, never in a unit test.
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace tinker::local::model {
namespace {

constexpr int kVocab = 1000;

Architecture server_sized_arch() {
  Architecture arch;
  arch.vocab_size = kVocab;
  arch.d_model = 32;
  arch.d_mlp = 64;
  arch.max_context = 128;
  return arch;
}

// `count` SFT datums of `length` pseudo-random tokens: input S[:-1], targets S[1:], weights 1.
ForwardBackwardInput sft_batch(int count, int length, std::uint64_t seed) {
  std::vector<Datum> data;
  for (int i = 0; i < count; ++i) {
    Rng rng(seed + static_cast<std::uint64_t>(i));
    std::vector<TokenId> sequence;
    for (int t = 0; t < length; ++t) sequence.push_back(static_cast<TokenId>(rng.next() % kVocab));
    std::vector<TokenId> input(sequence.begin(), sequence.end() - 1);
    std::vector<TokenId> targets(sequence.begin() + 1, sequence.end());
    LossFnInputs inputs;
    inputs.emplace("weights", TensorData(std::vector<float>(targets.size(), 1.0f)));
    inputs.emplace("target_tokens", TensorData::from_tokens(std::move(targets)));
    data.emplace_back(ModelInput::from_ints(input), std::move(inputs));
  }
  return ForwardBackwardInput(std::move(data), loss_fn::cross_entropy);
}

void TrainingStep(benchmark::State& state) {
  const BaseModel base("timing", server_sized_arch());
  const ForwardBackwardInput batch = sft_batch(4, 33, 11);
  LoraSettings settings;
  settings.rank = 32;
  settings.seed = 1;
  LoraState lora(base, settings);
  for (auto _ : state) {
    benchmark::DoNotOptimize(forward_backward(base, lora, batch, false));
    benchmark::DoNotOptimize(optim_step(lora, AdamParams(1e-3)));
  }
}
BENCHMARK(TrainingStep)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tinker::local::model

BENCHMARK_MAIN();
