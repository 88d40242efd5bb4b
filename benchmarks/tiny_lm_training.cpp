// tinker-local's tiny model: one training step (forward_backward + optim_step) at the server's
// real vocabulary (1000), rank 32, a batch of 4 sequences of 33 tokens. What every test and sample
// that trains the real model pays per step; time it here, never in a unit test.
#include "programs/local/model/tiny_lm.hpp"
#include "unit/programs/local/model/model_test_support.hpp"  // the tests' architecture and batch

#include <benchmark/benchmark.h>

namespace tinker::local::model {
namespace {

using testing::lora_settings;
using testing::sft_batch;
using testing::small_arch;

void TrainingStep(benchmark::State& state) {
  const BaseModel base("timing", small_arch(1000));
  const ForwardBackwardInput batch = sft_batch(1000, 4, 33);
  LoraState lora(base, lora_settings(32, 1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(forward_backward(base, lora, batch, false));
    benchmark::DoNotOptimize(optim_step(lora, AdamParams(1e-3)));
  }
}
BENCHMARK(TrainingStep)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tinker::local::model

BENCHMARK_MAIN();
