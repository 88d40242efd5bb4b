// tinker-bench runs every scenario against its embedded tinker-local with tiny sizes, and its --json result has
// exactly the fields doc/bench.md#results documents, of the documented kinds; --csv has the same columns flattened.
#include "integration/programs/bench/bench_program.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace json = boost::json;

// What a documented field holds.
enum class Kind { number, string, boolean, object, distribution, distribution_or_null, number_or_null, array };

using Fields = std::map<std::string, Kind>;

// doc/bench.md#common-fields.
const Fields common_fields = {
    {"schema", Kind::string},
    {"scenario", Kind::string},
    {"target", Kind::string},
    {"base_url", Kind::string},
    {"base_model", Kind::string},
    {"started_at", Kind::string},
    {"params", Kind::object},
    {"wall_s", Kind::number},
    {"client_cpu_s", Kind::number},
    {"client_cpu_method", Kind::string},
    {"peak_rss_bytes", Kind::number},
    {"server_cpu_s", Kind::number_or_null},
    {"http_requests", Kind::number},
    {"http_retries", Kind::number},
    {"http_429", Kind::number},
    {"http_5xx", Kind::number},
    {"http_transport_errors", Kind::number},
    {"first_error", Kind::string},
    {"failed", Kind::number},
};

// The storms' figures (doc/bench.md#sample, doc/bench.md#logprobs).
const Fields storm_fields = {
    {"completed", Kind::number},
    {"requests_per_s", Kind::number},
    {"submit_ms", Kind::distribution},
    {"result_ms", Kind::distribution},
    {"total_ms", Kind::distribution},
    {"encode_us", Kind::distribution},
    {"body_bytes_per_request", Kind::number},
};

const std::map<std::string, Fields> scenario_fields = {
    {"sample",
     {{"samples", Kind::number},
      {"samples_per_s", Kind::number},
      {"generated_tokens_per_s", Kind::number},
      {"prompt_tokens_per_s", Kind::number},
      {"client_cpu_us_per_sample", Kind::number}}},
    {"logprobs", {{"prompt_tokens_per_s", Kind::number}, {"client_cpu_us_per_request", Kind::number}}},
    {"train",
     {{"steps_completed", Kind::number},
      {"steps_per_s", Kind::number},
      {"tokens_per_s", Kind::number},
      {"encode_ms", Kind::distribution},
      {"submit_ms", Kind::distribution},
      {"wait_ms", Kind::distribution},
      {"result_delay_ms", Kind::distribution_or_null},
      {"body_bytes_per_step", Kind::number},
      {"encode_gb_per_s", Kind::number},
      {"submit_gb_per_s", Kind::number},
      {"client_cpu_ms_per_step", Kind::number}}},
    {"rl",
     {{"iterations_completed", Kind::number},
      {"iteration_ms", Kind::distribution},
      {"sample_phase_ms", Kind::distribution},
      {"train_phase_ms", Kind::distribution},
      {"sampler_refresh_ms", Kind::distribution},
      {"samples_per_s_sampling", Kind::number},
      {"trained_tokens_per_s", Kind::number},
      {"client_cpu_ms_per_iteration", Kind::number}}},
    {"checkpoint",
     {{"rounds_completed", Kind::number},
      {"save_state_ms", Kind::distribution},
      {"save_weights_for_sampler_ms", Kind::distribution},
      {"load_state_ms", Kind::distribution},
      {"download_ms", Kind::distribution},
      {"archive_bytes", Kind::number},
      {"download_mb_per_s", Kind::number}}},
};

// doc/bench.md#compare-raw.
const Fields compare_raw_fields = {
    {"pairs", Kind::number},
    {"seconds_per_point", Kind::number},
    {"in_flight", Kind::number},
    {"raw_samples_per_s", Kind::number},
    {"sdk_samples_per_s", Kind::number},
    {"throughput_ratio", Kind::number},
    {"raw_cpu_us_per_sample", Kind::number},
    {"sdk_cpu_us_per_sample", Kind::number},
    {"cpu_ratio", Kind::number},
    {"raw_latency_p50_ms", Kind::number},
    {"sdk_latency_p50_ms", Kind::number},
    {"latency_ratio", Kind::number},
    {"raw_user_us_per_sample", Kind::number},
    {"sdk_user_us_per_sample", Kind::number},
    {"raw_system_us_per_sample", Kind::number},
    {"sdk_system_us_per_sample", Kind::number},
    {"raw_sleeps_per_sample", Kind::number},
    {"sdk_sleeps_per_sample", Kind::number},
    {"raw_preemptions_per_sample", Kind::number},
    {"sdk_preemptions_per_sample", Kind::number},
    {"raw_requests_per_sample", Kind::number},
    {"sdk_requests_per_sample", Kind::number},
    {"throughput_ratios", Kind::array},
    {"cpu_ratios", Kind::array},
    {"method", Kind::string},
};

bool is_distribution(const json::value& value) {
  if (!value.is_object()) return false;
  for (const char* key : {"count", "p50", "p90", "p99", "max", "mean"}) {
    const json::value* part = value.get_object().if_contains(key);
    if (part == nullptr || !part->is_number()) return false;
  }
  return true;
}

bool has_kind(const json::value& value, Kind kind) {
  switch (kind) {
    case Kind::number: return value.is_number();
    case Kind::string: return value.is_string();
    case Kind::boolean: return value.is_bool();
    case Kind::object: return value.is_object();
    case Kind::array: return value.is_array();
    case Kind::distribution: return is_distribution(value);
    case Kind::distribution_or_null: return value.is_null() || is_distribution(value);
    case Kind::number_or_null: return value.is_null() || value.is_number();
  }
  return false;
}

// Every documented field is there with its kind, and nothing undocumented is.
void expect_documented(const json::object& result, const Fields& documented, const std::string& where) {
  for (const auto& [name, kind] : documented) {
    const json::value* value = result.if_contains(name);
    if (value == nullptr) {
      ADD_FAILURE() << where << ": missing " << name;
    } else {
      EXPECT_TRUE(has_kind(*value, kind)) << where << ": " << name << " is " << json::serialize(*value);
    }
  }
  for (const auto& [name, value] : result) {
    EXPECT_TRUE(documented.contains(std::string(name))) << where << ": undocumented field " << std::string(name);
  }
}

double number(const json::object& result, const char* name) {
  return json::value_to<double>(result.at(name));
}

std::string text(const json::object& result, const char* name) {
  return std::string(result.at(name).as_string());
}

// Runs one scenario with --json and checks the result's fields; returns the result.
json::object run_scenario(const std::string& scenario, std::vector<std::string> args) {
  args.insert(args.begin(), scenario);
  args.emplace_back("--json");
  const ProgramRun run = run_bench(args);
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  const json::value parsed = json::parse(run.out);  // one scenario: one line
  const json::object& result = parsed.as_object();
  Fields documented = common_fields;
  if (scenario == "sample" || scenario == "logprobs") documented.insert(storm_fields.begin(), storm_fields.end());
  const Fields& own = scenario_fields.at(scenario);
  documented.insert(own.begin(), own.end());
  if (result.contains("compare_raw")) documented.emplace("compare_raw", Kind::object);
  expect_documented(result, documented, scenario);

  EXPECT_EQ(text(result, "schema"), "tinker-bench/1");
  EXPECT_EQ(text(result, "scenario"), scenario);
  EXPECT_EQ(number(result, "failed"), 0);
  EXPECT_EQ(text(result, "first_error"), "");
  EXPECT_GT(number(result, "client_cpu_s"), 0);
  EXPECT_GT(number(result, "peak_rss_bytes"), 0);
  EXPECT_GT(number(result, "http_requests"), 0);
  EXPECT_TRUE(result.at("server_cpu_s").is_number()) << "a local server's CPU time is reported";
  return result;
}

TEST(BenchScenarios, Sample) {
  const json::object result =
      run_scenario("sample", {"--local", "--requests", "12", "--in-flight", "4", "--prompt-tokens", "8",
                              "--num-samples", "2", "--max-tokens", "4"});
  EXPECT_EQ(number(result, "completed"), 12);
  EXPECT_EQ(number(result, "samples"), 24);
  EXPECT_EQ(text(result, "target"), "local");
  EXPECT_EQ(number(result.at("submit_ms").as_object(), "count"), 12);
  EXPECT_GT(number(result.at("encode_us").as_object(), "p50"), 0) << "FutureStatus::encode_time";
  EXPECT_GT(number(result, "body_bytes_per_request"), 0) << "FutureStatus::body_bytes";
}

TEST(BenchScenarios, SampleCompareRaw) {
  const json::object result = run_scenario("sample", {"--local", "--null-model", "--requests", "8", "--in-flight", "2",
                                                      "--compare-raw", "--pairs", "2", "--seconds", "0.2"});
  EXPECT_EQ(text(result, "target"), "local-null-model");
  ASSERT_TRUE(result.contains("compare_raw"));
  const json::object& comparison = result.at("compare_raw").as_object();
  expect_documented(comparison, compare_raw_fields, "compare_raw");
  EXPECT_EQ(comparison.at("throughput_ratios").as_array().size(), 2u);
  EXPECT_GT(number(comparison, "raw_samples_per_s"), 0);
  EXPECT_GT(number(comparison, "sdk_samples_per_s"), 0);
  // Every sample is at least a submit, and with the server's default (the batched result poll) or per-request polls
  // at most a submit and a few polls.
  EXPECT_GT(number(comparison, "sdk_requests_per_sample"), 1.0);
  EXPECT_LT(number(comparison, "sdk_requests_per_sample"), 4.0);
  // Both sides poll as the server says: a submit, a fetch once the batched poll reported the result, and the
  // batched polls themselves (null-model results are ready at once, so per-request polling would make exactly 2).
  EXPECT_GT(number(comparison, "raw_requests_per_sample"), 2.0);
  EXPECT_LT(number(comparison, "raw_requests_per_sample"), 4.0);
  EXPECT_GT(number(comparison, "sdk_requests_per_sample"), 2.0);
  EXPECT_GT(number(comparison, "sdk_user_us_per_sample") + number(comparison, "sdk_system_us_per_sample"), 0);
}

TEST(BenchScenarios, Logprobs) {
  const json::object result =
      run_scenario("logprobs", {"--local", "--requests", "10", "--in-flight", "3", "--prompt-tokens", "16"});
  EXPECT_EQ(number(result, "completed"), 10);
}

TEST(BenchScenarios, Train) {
  const json::object result = run_scenario(
      "train", {"--local", "--steps", "3", "--batch", "2", "--tokens", "16", "--depth", "2", "--lora-rank", "4"});
  EXPECT_EQ(number(result, "steps_completed"), 3);
  EXPECT_TRUE(result.at("result_delay_ms").is_null()) << "a real model's wait is not a result delay";
  EXPECT_GT(number(result, "body_bytes_per_step"), 2 * 16 * 4) << "two datums of 16 tokens, ids and targets at least";
}

TEST(BenchScenarios, TrainNullModelReportsTheResultDelay) {
  const json::object result = run_scenario("train", {"--local", "--null-model", "--steps", "3", "--batch", "2",
                                                     "--tokens", "16", "--loss", "importance_sampling"});
  EXPECT_TRUE(is_distribution(result.at("result_delay_ms")));
}

TEST(BenchScenarios, Rl) {
  const json::object result = run_scenario("rl", {"--local", "--iterations", "2", "--prompts", "2", "--group-size", "2",
                                                  "--prompt-tokens", "4", "--max-tokens", "4", "--lora-rank", "4"});
  EXPECT_EQ(number(result, "iterations_completed"), 2);
}

TEST(BenchScenarios, Checkpoint) {
  const json::object result = run_scenario("checkpoint", {"--local", "--repeats", "1", "--lora-rank", "4"});
  EXPECT_EQ(number(result, "rounds_completed"), 1);
  EXPECT_GT(number(result, "archive_bytes"), 0);
}

TEST(BenchScenarios, CsvHasTheJsonFieldsFlattened) {
  const ProgramRun run =
      run_bench({"logprobs", "--local", "--null-model", "--requests", "4", "--in-flight", "2", "--csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto newline = run.out.find('\n');
  ASSERT_NE(newline, std::string::npos);
  const std::string header = run.out.substr(0, newline);
  for (const char* column : {"schema", "scenario", "params.requests", "submit_ms.p50", "submit_ms.p99", "client_cpu_s",
                             "peak_rss_bytes", "http_requests"}) {
    EXPECT_NE(("," + header + ",").find("," + std::string(column) + ","), std::string::npos) << column;
  }
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2) << "a header and one row";
}

}  // namespace
}  // namespace tinker::test
