// Combining chunk results of one forward_backward (doc/training.md#chunking): outputs in datum order and every
// metric reduction, with hand-computed expectations.
#include "client/training/combine.hpp"
#include "support/expect_error.hpp"

#include <tinker/error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <vector>

namespace tinker::client::training {
namespace {

using ::testing::HasSubstr;

// A chunk result with `outputs` loss_fn_outputs whose logprobs tensor holds `first_value`,
// first_value + 1, ... (so concatenation order is visible).
ForwardBackwardOutput chunk(int outputs, float first_value, Metrics metrics, std::string type = "ArrayRecord") {
  std::vector<LossFnOutput> loss_fn_outputs;
  for (int i = 0; i < outputs; ++i) {
    LossFnOutput output;
    output["logprobs"] = TensorData(std::vector<float>{first_value + static_cast<float>(i)});
    loss_fn_outputs.push_back(output);
  }
  return ForwardBackwardOutput(std::move(type), std::move(loss_fn_outputs), std::move(metrics));
}

Metrics metric(const std::string& key, double value) {
  Metrics metrics;
  metrics[key] = value;
  return metrics;
}

// Two chunks weighted 2 and 1 carrying `key` = v0, v1.
Metrics combine_two(const std::string& key, double v0, double v1) {
  const std::vector<ForwardBackwardOutput> chunks = {chunk(2, 0, metric(key, v0)), chunk(1, 0, metric(key, v1))};
  return combine_metrics(chunks);
}

TEST(CombineMetrics, Sum) {
  EXPECT_EQ(combine_two("loss:sum", 1.5, 2.25), metric("loss:sum", 3.75));
}

TEST(CombineMetrics, MeanIsWeightedByLossFnOutputs) {
  // (2 * 1 + 1 * 4) / 3 = 2, not the plain mean 2.5.
  EXPECT_EQ(combine_two("acc:mean", 1.0, 4.0), metric("acc:mean", 2.0));
}

TEST(CombineMetrics, MeanWithoutAnyOutputsIsThePlainMean) {
  const std::vector<ForwardBackwardOutput> chunks = {chunk(0, 0, metric("t:mean", 1.0)),
                                                     chunk(0, 0, metric("t:mean", 4.0))};
  EXPECT_EQ(combine_metrics(chunks), metric("t:mean", 2.5));
}

TEST(CombineMetrics, MinAndMax) {
  EXPECT_EQ(combine_two("lr:min", 3.0, -1.0), metric("lr:min", -1.0));
  EXPECT_EQ(combine_two("lr:max", 3.0, -1.0), metric("lr:max", 3.0));
}

TEST(CombineMetrics, SlackIsMaxMinusWeightedMean) {
  // max 4 - (2 * 1 + 1 * 4) / 3 = 2.
  EXPECT_EQ(combine_two("time:slack", 1.0, 4.0), metric("time:slack", 2.0));
  EXPECT_EQ(combine_two("time:slack", 4.0, 1.0), metric("time:slack", 1.0));  // 4 - (8 + 1) / 3
}

TEST(CombineMetrics, UniqueKeepsEveryChunksValue) {
  const std::vector<ForwardBackwardOutput> chunks = {
      chunk(1, 0, metric("id:unique", 7)), chunk(1, 0, metric("id:unique", 8)), chunk(1, 0, metric("id:unique", 9))};
  Metrics expected;
  expected["id:unique"] = 7;
  expected["id:unique_1"] = 8;
  expected["id:unique_2"] = 9;
  EXPECT_EQ(combine_metrics(chunks), expected);
}

TEST(CombineMetrics, HashUnorderedIsOrderInsensitiveOverIntegerParts) {
  // Golden values from an independent Python implementation of the documented algorithm.
  const std::vector<double> values = {3.9, -2.0, 7.0};
  EXPECT_EQ(hash_unordered(values, "h"), 4417736504241912.0);
  EXPECT_EQ(hash_unordered(std::vector<double>{0.0}, "h"), 2243219141835205.0);
  EXPECT_EQ(hash_unordered(std::vector<double>{7.0, 3.0, -2.9}, "h"), 4417736504241912.0);  // permuted, truncated
  EXPECT_NE(hash_unordered(std::vector<double>{3.0, 3.0}, "h"), hash_unordered(std::vector<double>{3.0}, "h"));
  EXPECT_NE(hash_unordered(std::vector<double>{1.0, 2.0}, "h"), hash_unordered(std::vector<double>{2.0, 2.0}, "h"));
  EXPECT_EQ(combine_two("seen:hash_unordered", 5.0, 6.0), combine_two("seen:hash_unordered", 6.0, 5.0));
  EXPECT_EQ(combine_two("seen:hash_unordered", 5.0, 6.0).at("seen:hash_unordered"),
            hash_unordered(std::vector<double>{5.0, 6.0}, "x"));
}

TEST(CombineMetrics, HashUnorderedRefusesValuesWithoutAnIntegerPart) {
  test::expect_tinker_error(errc::protocol_error, "\"seen:hash_unordered\"",
                            [] { combine_two("seen:hash_unordered", 1.0, std::numeric_limits<double>::infinity()); });
  test::expect_tinker_error(errc::protocol_error, "\"h\"", [] { hash_unordered(std::vector<double>{1e19}, "h"); });
}

TEST(CombineMetrics, KeysMissingFromAChunkOrWithUnknownReductionsAreDropped) {
  Metrics first;
  first["loss:sum"] = 1.0;
  first["partial:sum"] = 5.0;   // missing from the second chunk
  first["p95:percentile"] = 3;  // unknown reduction (a newer server)
  first["empty:"] = 3;          // empty reduction
  Metrics second;
  second["loss:sum"] = 2.0;
  second["p95:percentile"] = 4;
  second["empty:"] = 4;
  second["late:sum"] = 9.0;  // only the first chunk's keys count
  const std::vector<ForwardBackwardOutput> chunks = {chunk(1, 0, first), chunk(1, 0, second)};
  EXPECT_EQ(combine_metrics(chunks), metric("loss:sum", 3.0));
}

TEST(CombineMetrics, KeyWithoutExactlyOneColonIsAnErrorNamingIt) {
  test::expect_tinker_error(errc::protocol_error, "\"loss\"", [] { combine_two("loss", 1, 2); });
  test::expect_tinker_error(errc::protocol_error, "\"a:b:sum\"", [] { combine_two("a:b:sum", 1, 2); });
  // Single-chunk results go through the same checks.
  const std::vector<ForwardBackwardOutput> one = {chunk(1, 0, metric("loss", 1))};
  test::expect_tinker_error(errc::protocol_error, "\"loss\"", [&] { combine_metrics(one); });
}

TEST(CombineChunkOutputs, ConcatenatesOutputsInChunkOrderAndKeepsTheFirstType) {
  std::vector<ForwardBackwardOutput> chunks = {chunk(2, 10, metric("loss:sum", 1), "ArrayRecord"),
                                               chunk(1, 20, metric("loss:sum", 2), "Other"),
                                               chunk(3, 30, metric("loss:sum", 3), "Other")};
  const std::vector<std::size_t> datum_counts = {2, 1, 3};
  const ForwardBackwardOutput combined = combine_chunk_outputs(std::move(chunks), datum_counts);
  EXPECT_EQ(combined.loss_fn_output_type, "ArrayRecord");
  std::vector<float> firsts;
  for (const auto& output : combined.loss_fn_outputs) firsts.push_back(output.at("logprobs").floats()[0]);
  EXPECT_EQ(firsts, std::vector<float>({10, 11, 20, 30, 31, 32}));
  EXPECT_EQ(combined.metrics, metric("loss:sum", 6));
}

TEST(CombineChunkOutputs, SingleChunkIsCombinedToo) {
  std::vector<ForwardBackwardOutput> chunks = {chunk(2, 0, metric("seen:hash_unordered", 4))};
  const ForwardBackwardOutput combined = combine_chunk_outputs(std::move(chunks));
  EXPECT_EQ(combined.loss_fn_outputs.size(), 2U);
  EXPECT_EQ(combined.metrics.at("seen:hash_unordered"), hash_unordered(std::vector<double>{4.0}, "x"));
}

TEST(CombineChunkOutputs, RefusesMismatchedCountsAndNoChunks) {
  test::expect_tinker_error(errc::invalid_argument, "no chunk results", [] { combine_chunk_outputs({}); });
  const std::vector<std::size_t> counts = {2, 2};
  test::expect_tinker_error(errc::protocol_error, "chunk 1 of forward_backward returned 1 loss_fn_outputs for 2 datums",
                            [&] {
                              combine_chunk_outputs({chunk(2, 0, {}), chunk(1, 0, {})}, counts);
                            });
  const std::vector<std::size_t> one_count = {2};
  test::expect_tinker_error(errc::invalid_argument, "1 datum counts for 2 chunks", [&] {
    combine_chunk_outputs({chunk(2, 0, {}), chunk(2, 0, {})}, one_count);
  });
}

}  // namespace
}  // namespace tinker::client::training
