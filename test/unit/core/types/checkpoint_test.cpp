#include <tinker/error.hpp>
#include <tinker/types/checkpoint.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace tinker {
namespace {

std::string parse_error(std::string_view path) {
  try {
    (void)TinkerPath::parse(path);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    return e.diag().message;
  }
  ADD_FAILURE() << "accepted " << path;
  return {};
}

TEST(TinkerPath, ParsesTrainingAndSamplerPaths) {
  const auto training = TinkerPath::parse("tinker://5d6f:train:0/weights/step-0100");
  EXPECT_EQ(training.training_run_id, "5d6f:train:0");
  EXPECT_EQ(training.type, CheckpointType::training);
  EXPECT_EQ(training.name, "step-0100");
  EXPECT_EQ(training.checkpoint_id(), "weights/step-0100");
  const auto sampler = TinkerPath::parse("tinker://5d6f:train:0/sampler_weights/final");
  EXPECT_EQ(sampler.type, CheckpointType::sampler);
  EXPECT_EQ(sampler.checkpoint_id(), "sampler_weights/final");
  const auto external = TinkerPath::parse("tinker://5d6f:train:0/external_weights/hf");
  EXPECT_EQ(external.type, CheckpointType::external);
  EXPECT_EQ(external.checkpoint_id(), "external_weights/hf");
}

TEST(TinkerPath, FormatsBackToTheSameText) {
  for (const char* text : {"tinker://a:train:1/weights/x", "tinker://b/sampler_weights/y.z"}) {
    EXPECT_EQ(TinkerPath::parse(text).to_string(), text);
    std::ostringstream os;
    os << TinkerPath::parse(text);
    EXPECT_EQ(os.str(), text);
  }
  EXPECT_EQ(TinkerPath("r", CheckpointType::sampler, "n").to_string(), "tinker://r/sampler_weights/n");
}

TEST(TinkerPath, RejectsBadPathsSayingWhy) {
  EXPECT_EQ(parse_error("http://a/weights/x"), "invalid tinker path \"http://a/weights/x\": must start with tinker://");
  EXPECT_EQ(parse_error("tinker://a/weights"),
            "invalid tinker path \"tinker://a/weights\": expected "
            "tinker://<run-id>/<weights|sampler_weights|external_weights>/<name>");
  EXPECT_EQ(parse_error("tinker://a/weights/x/y"),
            "invalid tinker path \"tinker://a/weights/x/y\": expected "
            "tinker://<run-id>/<weights|sampler_weights|external_weights>/<name>");
  EXPECT_EQ(parse_error("tinker://a/checkpoints/x"),
            "invalid tinker path \"tinker://a/checkpoints/x\": the kind must be 'weights', 'sampler_weights' or "
            "'external_weights', got 'checkpoints'");
  EXPECT_EQ(parse_error("tinker:///weights/x"), "invalid tinker path \"tinker:///weights/x\": the run id is empty");
  EXPECT_EQ(parse_error("tinker://a/weights/"),
            "invalid tinker path \"tinker://a/weights/\": the checkpoint name is empty");
}

// Fuzzing found run ids with NUL bytes accepted ("tinker://3gh\0.../weights/x"): the download directory named
// after the path would be cut at the NUL (test/fuzz/regressions/urls/).
TEST(TinkerPath, RejectsControlCharacters) {
  using namespace std::string_literals;
  for (const std::string& path : {"tinker://a\0b/weights/x"s, "tinker://a/weights/x\0"s, "tinker://a\x01/weights/x"s,
                                  "tinker://a/sampler_weights/x\ny"s, "tinker://a\x7f/weights/x"s}) {
    EXPECT_TRUE(parse_error(path).ends_with(": it holds a control character")) << path;
  }
  EXPECT_EQ(TinkerPath::parse("tinker://a:train:0/weights/caf\xc3\xa9").name, "caf\xc3\xa9");  // UTF-8 is fine
}

TEST(CheckpointType, Names) {
  EXPECT_STREQ(to_string(CheckpointType::training), "training");
  EXPECT_STREQ(path_kind(CheckpointType::sampler), "sampler_weights");
}

}  // namespace
}  // namespace tinker
