// The tiny model learns: losses fall, train flags and every AdamParams field have their effect.
#include "local/model/tiny_lm_internal.hpp"
#include "unit/local/model/model_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace tinker::local::model {
namespace {

using namespace testing;

double train(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& batch, const AdamParams& adam,
             int steps) {
  for (int i = 0; i < steps; ++i) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, adam);
  }
  return loss_sum(forward_backward(base, lora, batch, true));
}

TEST(TinyLmTraining, DISABLED_LearningRateSweep) {
  const BaseModel base("sweep", small_arch(1000));
  const ForwardBackwardInput batch = sft_batch(1000);
  for (double lr : {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1}) {
    for (int rank : {1, 8, 32}) {
      LoraState lora(base, lora_settings(rank));
      const double before = loss_sum(forward_backward(base, lora, batch, true));
      const double after = train(base, lora, batch, AdamParams(lr), 40);
      std::printf("lr %g rank %d: %.3f -> %.3f (ratio %.3f)\n", lr, rank, before, after, after / before);
    }
  }
}

}  // namespace
}  // namespace tinker::local::model
