// RunDirectory: the files of a training run, their cookbook format, and what a crash leaves.
#include <tinker/train/run_dir.hpp>

#include "support/expect_error.hpp"
#include "support/temp_files.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

namespace tinker::train {
namespace {

using test::expect_tinker_error;
using test::read_file;
using test::TempDir;

void write_text(const std::filesystem::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

StepMetrics metrics_at(std::int64_t step, double loss) {
  StepMetrics metrics(step);
  metrics.set("loss", loss);
  metrics.set("lr", 1e-4);
  return metrics;
}

TEST(RunDirectory, CreatesTheDirectoryWithItsParents) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp / "a" / "b");
  EXPECT_TRUE(std::filesystem::is_directory(temp / "a" / "b"));
  EXPECT_EQ(dir.path(), temp / "a" / "b");
}

TEST(RunDirectory, RefusesAPathThatIsAFile) {
  TempDir temp("run-dir");
  write_text(temp / "plain", "x");
  expect_tinker_error(errc::invalid_argument, "plain", [&] { RunDirectory dir(temp / "plain"); });
}

TEST(RunDirectory, MetricsRoundTripInTheCookbookFormat) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  StepMetrics first(0);
  first.set("loss", 0.5);
  first.set("time/step", 1.25);
  dir.append_metrics(first);
  dir.append_metrics(metrics_at(1, 0.25));
  EXPECT_EQ(read_file(temp / "metrics.jsonl"),
            "{\"step\": 0, \"loss\": 0.5, \"time/step\": 1.25}\n"
            "{\"step\": 1, \"loss\": 0.25, \"lr\": 1e-04}\n");  // shortest round-trip text: valid JSON
  const auto read = dir.read_metrics();
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0], first);
  EXPECT_EQ(read[1], metrics_at(1, 0.25));
}

TEST(RunDirectory, DoublesRoundTripExactly) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  StepMetrics metrics(3);
  metrics.set("a", 0.1 + 0.2);
  metrics.set("b", -1.0 / 3.0);
  metrics.set("c", 6.02e23);
  dir.append_metrics(metrics);
  EXPECT_EQ(dir.read_metrics().at(0), metrics);
}

TEST(RunDirectory, NonFiniteValuesAreWrittenAsNullAndReadAsNaN) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  StepMetrics metrics(0);
  metrics.set("nan", std::numeric_limits<double>::quiet_NaN());
  metrics.set("inf", std::numeric_limits<double>::infinity());
  dir.append_metrics(metrics);
  EXPECT_EQ(read_file(temp / "metrics.jsonl"), "{\"step\": 0, \"nan\": null, \"inf\": null}\n");
  const auto read = dir.read_metrics().at(0);
  EXPECT_TRUE(std::isnan(read.get("nan").value()));
  EXPECT_TRUE(std::isnan(read.get("inf").value()));
}

TEST(RunDirectory, ReadsPythonsNonFiniteSpellingsAndSkipsNonNumbers) {
  TempDir temp("run-dir");
  write_text(temp / "metrics.jsonl",
             "{\"step\": 2, \"a\": NaN, \"b\": Infinity, \"c\": -Infinity, \"name\": \"NaN Infinity\", "
             "\"ok\": true, \"n\": 7}\n");
  const auto read = RunDirectory(temp.path()).read_metrics().at(0);
  EXPECT_EQ(read.step, 2);
  EXPECT_TRUE(std::isnan(read.get("a").value()));
  EXPECT_EQ(read.get("b").value(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(read.get("c").value(), -std::numeric_limits<double>::infinity());
  EXPECT_FALSE(read.get("name").has_value());
  EXPECT_EQ(read.get("ok").value(), 1.0);
  EXPECT_EQ(read.get("n").value(), 7.0);
}

TEST(RunDirectory, TornLastLineIsSkippedAndCutBeforeTheNextAppend) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  dir.append_metrics(metrics_at(0, 1.0));
  {
    std::ofstream out(temp / "metrics.jsonl", std::ios::binary | std::ios::app);
    out << "{\"step\": 1, \"lo";  // a writer killed mid-line
  }
  ASSERT_EQ(dir.read_metrics().size(), 1u);
  dir.append_metrics(metrics_at(1, 0.5));
  const auto read = dir.read_metrics();
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1], metrics_at(1, 0.5));
  EXPECT_EQ(read_file(temp / "metrics.jsonl").find("\"lo{"), std::string::npos);
}

TEST(RunDirectory, AnUnterminatedLineIsTornEvenWhenItParses) {
  TempDir temp("run-dir");
  write_text(temp / "metrics.jsonl", "{\"step\": 0}\n{\"step\": 1}");
  EXPECT_EQ(RunDirectory(temp.path()).read_metrics().size(), 1u);
}

TEST(RunDirectory, ABadLineInTheMiddleNamesTheFileAndLine) {
  TempDir temp("run-dir");
  write_text(temp / "metrics.jsonl", "{\"step\": 0}\n\n{\"step\": oops}\n{\"step\": 2}\n");
  const RunDirectory dir(temp.path());
  expect_tinker_error(errc::invalid_file, "metrics.jsonl:3:", [&] { dir.read_metrics(); });
  write_text(temp / "metrics.jsonl", "{\"step\": 0}\n{\"loss\": 1}\n");
  expect_tinker_error(errc::invalid_file, "metrics.jsonl:2: \"step\"", [&] { dir.read_metrics(); });
  write_text(temp / "checkpoints.jsonl", "{\"name\": \"a\", \"batch\": 1}\n[1]\n");
  expect_tinker_error(errc::invalid_file, "checkpoints.jsonl:2:", [&] { dir.read_checkpoints(); });
}

TEST(RunDirectory, TruncateKeepsStepsBeforeTheCheckpointByteForByte) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  write_text(temp / "metrics.jsonl", "{\"step\": 0, \"loss\": 1.0}\n{\"step\": 1}\n{\"step\": 2}\n{\"step\": 3");
  dir.truncate_metrics(2);
  EXPECT_EQ(read_file(temp / "metrics.jsonl"), "{\"step\": 0, \"loss\": 1.0}\n{\"step\": 1}\n");
  dir.truncate_metrics(0);
  EXPECT_EQ(read_file(temp / "metrics.jsonl"), "");
  EXPECT_TRUE(dir.read_metrics().empty());
  // No temporary file is left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(temp.path())) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(RunDirectory, TruncateWithoutAFileDoesNothing) {
  TempDir temp("run-dir");
  RunDirectory(temp.path()).truncate_metrics(5);
  EXPECT_FALSE(std::filesystem::exists(temp / "metrics.jsonl"));
}

TEST(RunDirectory, ConfigIsReplacedAndMustBeAnObject) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  EXPECT_FALSE(dir.read_config().has_value());
  dir.write_config(R"({"learning_rate": 0.0001})");
  dir.write_config(R"({"learning_rate": 0.0002})");
  EXPECT_EQ(dir.read_config().value(), "{\"learning_rate\": 0.0002}\n");
  expect_tinker_error(errc::invalid_argument, "JSON object", [&] { dir.write_config("[1, 2]"); });
  expect_tinker_error(errc::invalid_argument, "JSON object", [&] { dir.write_config("{"); });
  EXPECT_EQ(dir.read_config().value(), "{\"learning_rate\": 0.0002}\n");
}

CheckpointRecord record_at(std::string name, std::int64_t step, bool with_state, bool with_sampler) {
  CheckpointRecord record;
  record.name = std::move(name);
  record.step = step;
  if (with_state) record.state_path = "tinker://run-1/weights/" + record.name;
  if (with_sampler) record.sampler_path = "tinker://run-1/sampler_weights/" + record.name;
  record.renderer_name = "qwen3";
  return record;
}

TEST(RunDirectory, CheckpointsRoundTripAndCarryTheCookbooksBatchKey) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  auto last = record_at("final", 20, true, true);
  last.final = true;
  dir.append_checkpoint(record_at("000010", 10, true, false));
  dir.append_checkpoint(last);
  EXPECT_EQ(
      read_file(temp / "checkpoints.jsonl"),
      "{\"name\": \"000010\", \"step\": 10, \"batch\": 10, \"state_path\": \"tinker://run-1/weights/000010\", "
      "\"renderer_name\": \"qwen3\", \"final\": false}\n"
      "{\"name\": \"final\", \"step\": 20, \"batch\": 20, \"state_path\": \"tinker://run-1/weights/final\", "
      "\"sampler_path\": \"tinker://run-1/sampler_weights/final\", \"renderer_name\": \"qwen3\", \"final\": true}\n");
  const auto read = dir.read_checkpoints();
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0], record_at("000010", 10, true, false));
  EXPECT_EQ(read[1], last);
}

TEST(RunDirectory, ReadsACookbookCheckpointLine) {
  TempDir temp("run-dir");
  write_text(temp / "checkpoints.jsonl",
             "{\"name\": \"000005\", \"batch\": 5, \"epoch\": 0, \"state_path\": \"tinker://x/weights/000005\"}\n");
  const auto read = RunDirectory(temp.path()).read_checkpoints().at(0);
  EXPECT_EQ(read.name, "000005");
  EXPECT_EQ(read.step, 5);
  EXPECT_EQ(read.state_path.value(), "tinker://x/weights/000005");
  EXPECT_FALSE(read.sampler_path.has_value());
  EXPECT_EQ(read.renderer_name, "");
  EXPECT_FALSE(read.final);
}

TEST(GetLastCheckpoint, TheNewestRecordWithTheRequiredKey) {
  TempDir temp("run-dir");
  const RunDirectory dir(temp.path());
  dir.append_checkpoint(record_at("000005", 5, true, true));
  dir.append_checkpoint(record_at("000010", 10, true, false));
  dir.append_checkpoint(record_at("sampler-15", 15, false, true));
  EXPECT_EQ(get_last_checkpoint(temp.path()).value().name, "000010");
  EXPECT_EQ(get_last_checkpoint(temp.path(), "state_path").value().step, 10);
  EXPECT_EQ(get_last_checkpoint(temp.path(), "sampler_path").value().name, "sampler-15");
  expect_tinker_error(errc::invalid_argument, "required_key", [&] { get_last_checkpoint(temp.path(), "batch"); });
}

TEST(GetLastCheckpoint, NoneWithoutADirectoryFileOrMatchingRecord) {
  TempDir temp("run-dir");
  EXPECT_FALSE(get_last_checkpoint(temp / "missing").has_value());
  EXPECT_FALSE(get_last_checkpoint(temp.path()).has_value());
  RunDirectory(temp.path()).append_checkpoint(record_at("s", 3, false, true));
  EXPECT_FALSE(get_last_checkpoint(temp.path()).has_value());
  // A record torn mid-write is not a checkpoint.
  std::ofstream(temp / "checkpoints.jsonl", std::ios::app) << "{\"name\": \"000004\", \"step\": 4, \"state_path\": \"t";
  EXPECT_FALSE(get_last_checkpoint(temp.path()).has_value());
}

}  // namespace
}  // namespace tinker::train
