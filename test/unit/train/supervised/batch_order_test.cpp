// The supervised data order: fixed-size batches over a per-epoch permutation that is a pure
// function of (seed, step).
#include <tinker/error.hpp>
#include <tinker/train/supervised.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tinker::train {
namespace {

TEST(BatchOrder, EveryEpochIsAPermutationCutIntoWholeBatches) {
  const BatchOrder order(10, 3, 7);
  EXPECT_EQ(order.batches_per_epoch(), 3);  // the remainder of 1 is skipped each epoch
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<std::size_t> permutation = order.epoch_order(epoch);
    std::sort(permutation.begin(), permutation.end());
    for (std::size_t i = 0; i < permutation.size(); ++i) EXPECT_EQ(permutation[i], i);
    std::set<std::size_t> seen;
    for (std::int64_t b = 0; b < 3; ++b) {
      const std::vector<std::size_t> batch = order.batch(epoch * 3 + b);
      EXPECT_EQ(batch.size(), 3u);
      seen.insert(batch.begin(), batch.end());
    }
    EXPECT_EQ(seen.size(), 9u) << "no example twice within an epoch";
  }
}

TEST(BatchOrder, TheOrderIsAPureFunctionOfSeedAndStep) {
  const BatchOrder first(50, 4, 123);
  const BatchOrder second(50, 4, 123);
  // Asked in a different order (as a resumed run does), the batches are the same.
  for (std::int64_t step = 40; step >= 0; --step) EXPECT_EQ(first.batch(step), second.batch(step)) << step;
  EXPECT_NE(BatchOrder(50, 4, 124).batch(0), first.batch(0)) << "another seed, another order";
  EXPECT_NE(first.epoch_order(0), first.epoch_order(1)) << "each epoch is shuffled anew";
  EXPECT_EQ(first.epoch_of(11), 0);
  EXPECT_EQ(first.epoch_of(12), 1);
}

TEST(BatchOrder, PinnedValuesKeepTheOrderStableAcrossPlatforms) {
  // splitmix64-driven Fisher-Yates, written out: a change here would make runs started by older
  // builds resume onto other batches.
  EXPECT_EQ(BatchOrder(8, 8, 0).epoch_order(0), (std::vector<std::size_t>{1, 0, 6, 4, 3, 5, 2, 7}));
  EXPECT_EQ(BatchOrder(10, 3, 7).epoch_order(1), (std::vector<std::size_t>{1, 4, 3, 6, 8, 9, 2, 5, 0, 7}));
  EXPECT_EQ(BatchOrder(10, 3, 7).batch(4), (std::vector<std::size_t>{6, 8, 9})) << "epoch 1, second batch";
  EXPECT_EQ(BatchOrder(8, 2, 0, false).batch(1), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(BatchOrder(8, 2, 0, false).batch(5), (std::vector<std::size_t>{2, 3})) << "unshuffled epochs repeat";
}

TEST(BatchOrder, RefusesBatchesItCannotFill) {
  EXPECT_THROW(BatchOrder(5, 0, 0), tinker::error);
  try {
    BatchOrder(3, 4, 0);
    FAIL() << "a batch larger than the dataset was accepted";
  } catch (const tinker::error& e) {
    EXPECT_NE(std::string(e.what()).find("SupervisedOptions::batch_size"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BatchOrder(5, 1, 0).batch(-1), tinker::error);
}

}  // namespace
}  // namespace tinker::train
