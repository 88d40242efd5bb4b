// Percentiles by nearest rank, and the median of pairs' ratios (src/programs/bench/measure.hpp).
#include "programs/bench/measure.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace tinker::bench {
namespace {

TEST(Percentiles, NearestRankOfAHundredValues) {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);  // unsorted on purpose
  const Percentiles p(values);
  EXPECT_EQ(p.count, 100u);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p90, 90);
  EXPECT_EQ(p.p99, 99);
  EXPECT_EQ(p.max, 100);
  EXPECT_DOUBLE_EQ(p.mean, 50.5);
}

TEST(Percentiles, FewValuesRoundTheRankUp) {
  const Percentiles p(std::vector<double>{3, 1, 2});
  EXPECT_EQ(p.p50, 2);
  EXPECT_EQ(p.p90, 3);
  EXPECT_EQ(p.p99, 3);
  const Percentiles one(std::vector<double>{7});
  EXPECT_EQ(one.p50, 7);
  EXPECT_EQ(one.max, 7);
}

TEST(Percentiles, NoValuesAreZeros) {
  const Percentiles p(std::vector<double>{});
  EXPECT_EQ(p.count, 0u);
  EXPECT_EQ(p.p50, 0);
  EXPECT_EQ(p.max, 0);
}

TEST(Median, TheLowerMiddleOfAnEvenCount) {
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2);
  EXPECT_EQ(median({}), 0);
}

TEST(PeakRss, ReportsThisProcesssResidentMemory) {
  PeakRss::reset();
  EXPECT_GT(PeakRss::bytes(), 1u << 20) << "a test binary resides in more than a MiB";
}

}  // namespace
}  // namespace tinker::bench
