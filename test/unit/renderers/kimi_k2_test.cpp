// kimi_k2 against Kimi K2 Thinking's own chat template
// (test/data/renderers/templates/kimi_k2_thinking.jinja) rendered by @huggingface/jinja, over the
// shipped conversations; parse_response; the properties; bad input.
//
// No npm package carries Kimi's tiktoken.model, so the tokenizer here is Kimi-shaped, not Kimi's:
// cl100k_base's ranks (from npm `tiktoken`) loaded the way load_tokenizer loads Kimi
// (TiktokenOptions::kimi_k2(): Kimi's split pattern, 256 reserved ids after the ranks) with
// Kimi K2's special tokens at their offsets from Kimi's tokenizer_config.json ([BOS] +0, [EOS] +1,
// <|im_end|> +2, <|im_user|> +3, <|im_assistant|> +4, <|im_system|> +10, the tool-call markers
// +11..+15, <|im_middle|> +17, [UNK] +254, [PAD] +255), and <think> / </think> as added tokens
// (+22, +23, as K2 Thinking adds them). What that leaves untested: Kimi's own ranks, so the exact
// ids of ordinary text; the structure (markers, order, which reasoning is kept) is compared in full.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using test_support::conversations;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TokenId kBase = 100256;  // cl100k's ranks are 0..100255; Kimi's specials follow its ranks

std::shared_ptr<const Tokenizer> kimi_shaped_tokenizer() {
  static const std::shared_ptr<const Tokenizer> loaded = [] {
    const test::TempDir dir;
    const auto ranks = dir.path() / "tiktoken.model";
    test::run_node_script(test::reference_script("tiktoken_reference.js"), {"ranks", "cl100k_base", ranks.string()});
    const std::vector<std::pair<std::string, TokenId>> specials{{"[BOS]", 0},
                                                                {"[EOS]", 1},
                                                                {"<|im_end|>", 2},
                                                                {"<|im_user|>", 3},
                                                                {"<|im_assistant|>", 4},
                                                                {"<|im_system|>", 10},
                                                                {"<|tool_calls_section_begin|>", 11},
                                                                {"<|tool_calls_section_end|>", 12},
                                                                {"<|tool_call_begin|>", 13},
                                                                {"<|tool_call_argument_begin|>", 14},
                                                                {"<|tool_call_end|>", 15},
                                                                {"<|im_middle|>", 17},
                                                                {"<think>", 22},
                                                                {"</think>", 23},
                                                                {"[UNK]", 254},
                                                                {"[PAD]", 255}};
    std::string decoder;
    for (const auto& [content, offset] : specials) {
      if (!decoder.empty()) decoder += ",\n";
      const bool special = content != "<think>" && content != "</think>";
      decoder += "\"" + std::to_string(kBase + offset) + "\": {\"content\": \"" + content +
                 "\", \"lstrip\": false, \"normalized\": false, \"rstrip\": false, \"single_word\": false, "
                 "\"special\": " +
                 (special ? "true" : "false") + "}";
    }
    test::write_file(dir.path() / "tokenizer_config.json",
                     "{\"added_tokens_decoder\": {\n" + decoder +
                         "\n}, \"bos_token\": \"[BOS]\", \"eos_token\": \"[EOS]\", \"pad_token\": \"[PAD]\", "
                         "\"unk_token\": \"[UNK]\"}\n");
    return load_tiktoken_tokenizer(ranks, "kimi-shaped", TiktokenOptions::kimi_k2());
  }();
  return loaded;
}

std::filesystem::path kimi_template() {
  return std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" / "kimi_k2_thinking.jinja";
}

std::vector<TokenId> kimi_tokens(std::string_view text) {
  return kimi_shaped_tokenizer()->encode(text, false);
}
std::string kimi_text(std::span<const TokenId> tokens) {
  return kimi_shaped_tokenizer()->decode(tokens, false);
}

TEST(KimiK2Renderer, TheTokenizerHasKimisMarkers) {
  EXPECT_EQ(kimi_tokens("<|im_end|>"), std::vector<TokenId>{kBase + 2});
  EXPECT_EQ(kimi_tokens("<|im_middle|>"), std::vector<TokenId>{kBase + 17});
  EXPECT_EQ(kimi_shaped_tokenizer()->eos_id(), kBase + 1);
}

TEST(KimiK2Renderer, GenerationPromptsEqualTheTemplate) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  const test::TemplateComparison comparison =
      test::compare_generation_prompts(*renderer, kimi_template(), conversations());
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, ::testing::IsEmpty());
}

TEST(KimiK2Renderer, DefaultSystemMessageAndReasoningOnlyAfterTheLastAnswer) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  Message call("assistant", {ThinkingPart("Need data."), TextPart("Checking.")});
  call.tool_calls = {ToolCall("get_weather", "{\"city\": \"Oslo\"}")};
  Message result("tool", "rain");
  result.name = "get_weather";
  result.tool_call_id = "functions.get_weather:0";
  const std::vector<Message> messages{Message("user", "Hi"),
                                      Message("assistant", {ThinkingPart("greet"), TextPart("Hello")}),
                                      Message("user", "Weather in Oslo?"), call, result};
  EXPECT_EQ(kimi_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
            "<|im_user|>user<|im_middle|>Hi<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|><think></think>Hello<|im_end|>"
            "<|im_user|>user<|im_middle|>Weather in Oslo?<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|><think>Need data.</think>Checking.<|tool_calls_section_begin|>"
            "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Oslo\"}"
            "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"
            "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\nrain<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|>");
  EXPECT_EQ(std::get<std::vector<TokenId>>(renderer->stop_sequences()), kimi_tokens("<|im_end|>"));
  EXPECT_FALSE(renderer->has_extension_property());
}

TEST(KimiK2Renderer, ObservationIsThePromptAndTheActionParsesBack) {
  test_support::expect_observation_and_action(*detail::make_kimi_k2(kimi_shaped_tokenizer()), conversations());
}

TEST(KimiK2Renderer, SupervisedWeightsWithTheInsertedSystemMessage) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  std::vector<Message> messages{Message("user", "Hi"), Message("assistant", "Hello")};
  messages[0].trainable = false;
  messages[1].trainable = true;
  const SupervisedExample example = renderer->build_supervised_example(messages, TrainOn::customized);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] == 1.0f) trained.push_back(tokens[i]);
  }
  EXPECT_EQ(kimi_text(trained), "<think></think>Hello<|im_end|>");
}

TEST(KimiK2Renderer, ParsesReasoningAndToolCalls) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  ParsedResponse parsed = renderer->parse_response(
      kimi_tokens("<think>Look it up.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|> "
                  "functions.get_weather:0 <|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|>"
                  "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
                  "<|tool_calls_section_end|><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("Look it up.")), ContentPart(TextPart("Checking."))));
  EXPECT_THAT(parsed.message.tool_calls,
              ElementsAre(ToolCall("get_weather", "{\"city\": \"Oslo\"}", "functions.get_weather:0"),
                          ToolCall("get_time", "{}", "functions.get_time:1")));
  // The tokenizer's EOS ends a message too, reported as such.
  parsed = renderer->parse_response(kimi_tokens("<think></think>Done.[EOS]"));
  EXPECT_EQ(parsed.termination, ParseTermination::eos);
  EXPECT_THAT(parsed.message.content, ElementsAre(ContentPart(TextPart("Done."))));
}

TEST(KimiK2Renderer, BadToolCallsAreReportedNotThrown) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  ParsedResponse parsed = renderer->parse_response(
      kimi_tokens("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{oops"
                  "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("JSON"));

  parsed = renderer->parse_response(
      kimi_tokens("Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|im_end|>"));
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("unterminated"));

  parsed = renderer->parse_response(kimi_tokens("<think>cut off"));
  EXPECT_EQ(parsed.termination, ParseTermination::malformed);
  for (const auto& tokens :
       {std::vector<TokenId>{}, std::vector<TokenId>{-3, kBase + 300, 1 << 30},
        kimi_tokens("<|tool_call_end|><|tool_calls_section_end|><|tool_call_begin|>:<|im_end|>")}) {
    EXPECT_NO_THROW(renderer->parse_response(tokens));
  }
}

TEST(KimiK2Renderer, RefusesWhatItCannotRenderNamingTheCallersIndex) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  // The default system message the renderer adds does not shift the index in the error.
  const std::vector<Message> image{Message("user", "Hi"),
                                   Message("user", {TextPart("see"), ImagePart({1}, ImageFormat::jpeg)})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(image); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[1].content[1]")));
  const std::vector<Message> thinking_user{Message("user", {ThinkingPart("hmm")})};
  EXPECT_THAT([&] { renderer->build_supervised_example(thinking_user, TrainOn::all_messages); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].content[0]")));
}

}  // namespace
}  // namespace tinker::renderers
