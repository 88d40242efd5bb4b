// The Kimi K2.5 and K2.6 families (kimi_k25, kimi_k25_disable_thinking, kimi_k26,
// kimi_k26_disable_thinking, kimi_k26_preserve_thinking): their prompts against Kimi K2 Thinking's
// chat template plus the think prefill, the Tinker cookbook's expected strings
// (kimi_k25_test.py, kimi_k26_test.py), every TrainOn mode, parsing, TypeScript-style tool
// declarations and images.
//
// Neither model's chat template is in a public repository this project can fetch (they are in the
// model repositories only), so the history is checked against K2 Thinking's template, whose
// format K2.5 keeps (the cookbook renders both with the same code), and the rest against the
// cookbook's strings. The tokenizer is Kimi-shaped (support/kimi_tokenizer.hpp).
#include "renderers/families.hpp"
#include "renderers/kimi_common.hpp"
#include "support/kimi_tokenizer.hpp"
#include "support/render_reference.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace tinker::renderers {
namespace {

using test::kimi_shaped_base;
using test::kimi_shaped_tokenizer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using K25Maker = std::unique_ptr<Renderer> (*)(detail::TokenizerPtr);

constexpr std::string_view kK25System = "<|im_system|>system<|im_middle|>";
constexpr std::string_view kK25DefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";

std::string k25_text(std::span<const TokenId> tokens) {
  return kimi_shaped_tokenizer()->decode(tokens, false);
}
std::vector<TokenId> k25_tokens(std::string_view text) {
  return kimi_shaped_tokenizer()->encode(text, false);
}

// The decoded tokens of `example` that carry weight.
std::string k25_trained_text(const SupervisedExample& example) {
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights.at(i) == 1.0f) trained.push_back(tokens[i]);
  }
  return k25_text(trained);
}

// The decoded text tokens of `example` that carry weight; image chunks must carry none.
std::string k25_trained_text_of_chunks(const SupervisedExample& example) {
  std::vector<TokenId> trained;
  std::size_t at = 0;
  for (const ModelInputChunk& chunk : example.model_input.chunks) {
    const auto length = static_cast<std::size_t>(chunk_length(chunk));
    if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
      for (std::size_t i = 0; i < length; ++i) {
        if (example.weights.at(at + i) == 1.0f) trained.push_back(text->tokens[i]);
      }
    } else {
      for (std::size_t i = 0; i < length; ++i) EXPECT_EQ(example.weights.at(at + i), 0.0f) << "image token " << i;
    }
    at += length;
  }
  return k25_text(trained);
}

Message k25_assistant(std::string thinking, std::string text) {
  std::vector<ContentPart> parts;
  if (!thinking.empty()) parts.emplace_back(ThinkingPart(std::move(thinking)));
  parts.emplace_back(TextPart(std::move(text)));
  return Message("assistant", std::move(parts));
}

Message k25_tool_result(std::string id, std::string text) {
  Message result("tool", std::move(text));
  result.name = "get_weather";
  result.tool_call_id = std::move(id);
  return result;
}

// ---- Images: PNG files of any size that only their header describes -------------------------

std::uint32_t k25_crc32(std::span<const std::uint8_t> bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (const std::uint8_t byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

void k25_append_be32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

void k25_append_chunk(std::vector<std::uint8_t>& out, std::string_view type, std::span<const std::uint8_t> body) {
  k25_append_be32(out, static_cast<std::uint32_t>(body.size()));
  std::vector<std::uint8_t> typed(type.begin(), type.end());
  typed.insert(typed.end(), body.begin(), body.end());
  out.insert(out.end(), typed.begin(), typed.end());
  k25_append_be32(out, k25_crc32(typed));
}

// A PNG of `width` x `height` RGB pixels as far as its header goes (the renderer reads no more).
ImagePart k25_png(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> file{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> header;
  k25_append_be32(header, width);
  k25_append_be32(header, height);
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, no filter, no interlace
  k25_append_chunk(file, "IHDR", header);
  k25_append_chunk(file, "IDAT", {});
  k25_append_chunk(file, "IEND", {});
  return ImagePart(std::move(file), ImageFormat::png);
}

// ---- The format ---------------------------------------------------------------------------

TEST(KimiK25Renderer, TheTokenizerHasKimisMediaMarkers) {
  EXPECT_EQ(k25_tokens("<|media_begin|>"), std::vector<TokenId>{kimi_shaped_base + 18});
  EXPECT_EQ(k25_tokens("<|media_content|>"), std::vector<TokenId>{kimi_shaped_base + 19});
  EXPECT_EQ(k25_tokens("<|media_end|>"), std::vector<TokenId>{kimi_shaped_base + 20});
  EXPECT_EQ(k25_tokens("<think>"), std::vector<TokenId>{kimi_shaped_base + 22});
}

// Each prompt of the shared conversations is K2 Thinking's template output followed by the
// family's prefill.
TEST(KimiK25Renderer, GenerationPromptsAreKimiK2sTemplateWithTheThinkPrefill) {
  const std::filesystem::path template_file =
      std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" / "kimi_k2_thinking.jinja";
  std::vector<test::TemplateCase> cases;
  for (const test::TestConversation& conversation : test_support::conversations()) {
    for (auto& prompt : test::prompts_before_assistant_messages(conversation.messages)) {
      cases.push_back(test::TemplateCase{std::move(prompt), true, "{}"});
    }
  }
  const std::vector<std::string> rendered = test::render_chat_template(template_file, cases);
  ASSERT_EQ(rendered.size(), cases.size());
  ASSERT_GT(cases.size(), 10U);
  for (const auto& [make, prefill] : {std::pair<K25Maker, std::string_view>{&detail::make_kimi_k25, "<think>"},
                                      {&detail::make_kimi_k26, "<think>"},
                                      {&detail::make_kimi_k25_disable_thinking, "<think></think>"},
                                      {&detail::make_kimi_k26_disable_thinking, "<think></think>"}}) {
    const auto renderer = make(kimi_shaped_tokenizer());
    SCOPED_TRACE(std::string(renderer->name()));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::vector<TokenId> expected = k25_tokens(rendered[i] + std::string(prefill));
      EXPECT_EQ(test::token_difference(*kimi_shaped_tokenizer(), expected,
                                       renderer->build_generation_prompt(cases[i].messages).to_ints()),
                "")
          << "prompt " << i;
    }
  }
}

// The cookbook's test_kimi_k25_generation_prompt_has_think_prefill and its disable-thinking and
// custom-prefill variants.
TEST(KimiK25Renderer, GenerationPromptEndsInTheThinkPrefill) {
  const std::vector<Message> messages{
      Message("system", "You are a helpful assistant."), Message("user", "Hello, how are you?"),
      Message("assistant", "I'm fine, thank you!"), Message("user", "What is the capital of France?")};
  const std::string history = std::string(kK25System) +
                              "You are a helpful assistant.<|im_end|>"
                              "<|im_user|>user<|im_middle|>Hello, how are you?<|im_end|>"
                              "<|im_assistant|>assistant<|im_middle|><think></think>I'm fine, thank you!<|im_end|>"
                              "<|im_user|>user<|im_middle|>What is the capital of France?<|im_end|>"
                              "<|im_assistant|>assistant<|im_middle|>";
  const auto k25 = detail::make_kimi_k25(kimi_shaped_tokenizer());
  EXPECT_EQ(k25_text(k25->build_generation_prompt(messages).to_ints()), history + "<think>");
  EXPECT_EQ(k25_text(k25->build_generation_prompt(messages, "assistant", "Custom response: ").to_ints()),
            history + "<think>Custom response: ");
  const auto disabled = detail::make_kimi_k25_disable_thinking(kimi_shaped_tokenizer());
  EXPECT_EQ(k25_text(disabled->build_generation_prompt(messages).to_ints()), history + "<think></think>");
  EXPECT_EQ(std::get<std::vector<TokenId>>(k25->stop_sequences()), k25_tokens("<|im_end|>"));
}

// kimi_k26_test.py: the default K2.6 renderers drop earlier reasoning; preserve_thinking keeps it,
// in prompts and in supervised examples.
TEST(KimiK25Renderer, PreserveThinkingKeepsTheReasoningOfEveryTurn) {
  const std::vector<Message> messages{Message("system", "You are a helpful assistant."),
                                      Message("user", "What is 2+2?"), k25_assistant("HIST_THINK_A", "4"),
                                      Message("user", "Now what is 3+3?")};
  const std::string start = std::string(kK25System) +
                            "You are a helpful assistant.<|im_end|>"
                            "<|im_user|>user<|im_middle|>What is 2+2?<|im_end|><|im_assistant|>assistant<|im_middle|>";
  const std::string end =
      "4<|im_end|><|im_user|>user<|im_middle|>Now what is 3+3?<|im_end|><|im_assistant|>assistant<|im_middle|>";
  for (const K25Maker make : {&detail::make_kimi_k26, &detail::make_kimi_k25}) {
    const auto renderer = make(kimi_shaped_tokenizer());
    EXPECT_EQ(k25_text(renderer->build_generation_prompt(messages).to_ints()),
              start + "<think></think>" + end + "<think>");
    EXPECT_FALSE(renderer->has_extension_property());
  }
  EXPECT_EQ(
      k25_text(
          detail::make_kimi_k26_disable_thinking(kimi_shaped_tokenizer())->build_generation_prompt(messages).to_ints()),
      start + "<think></think>" + end + "<think></think>");
  const auto preserving = detail::make_kimi_k26_preserve_thinking(kimi_shaped_tokenizer());
  EXPECT_TRUE(preserving->has_extension_property());
  EXPECT_EQ(k25_text(preserving->build_generation_prompt(messages).to_ints()),
            start + "<think>HIST_THINK_A</think>" + end + "<think>");

  // test_kimi_k26_preserve_thinking_supervised_matches_hf: the whole conversation, both turns'
  // reasoning kept; only the last answer is trained, without the prefilled "<think>".
  std::vector<Message> answered = messages;
  answered.push_back(k25_assistant("CURRENT_THINK", "6"));
  const SupervisedExample example = preserving->build_supervised_example(answered);
  EXPECT_EQ(k25_text(example.model_input.to_ints()),
            start + "<think>HIST_THINK_A</think>" + end + "<think>CURRENT_THINK</think>6<|im_end|>");
  EXPECT_EQ(k25_trained_text(example), "CURRENT_THINK</think>6<|im_end|>");
}

// Every TrainOn mode over a conversation with an earlier reasoning turn: which outputs carry
// weight (Kimi's turn for last_assistant_turn), the inserted system message, the prefill withheld.
TEST(KimiK25Renderer, TrainsWhatEachModeSays) {
  const auto renderer = detail::make_kimi_k25(kimi_shaped_tokenizer());
  std::vector<Message> messages{Message("user", "U1"), k25_assistant("T1", "X1"), Message("user", "U2"),
                                k25_assistant("T2", "X2")};
  const auto trained = [&](TrainOn mode) {
    return k25_trained_text(renderer->build_supervised_example(messages, mode));
  };
  EXPECT_EQ(trained(TrainOn::last_assistant_message), "T2</think>X2<|im_end|>");
  EXPECT_EQ(trained(TrainOn::last_assistant_turn), "T2</think>X2<|im_end|>");
  EXPECT_EQ(trained(TrainOn::all_assistant_messages), "<think></think>X1<|im_end|><think>T2</think>X2<|im_end|>");
  EXPECT_EQ(trained(TrainOn::all_messages), std::string(kK25DefaultSystem) +
                                                "<|im_end|>U1<|im_end|><think></think>X1<|im_end|>U2<|im_end|>"
                                                "<think>T2</think>X2<|im_end|>");
  EXPECT_EQ(trained(TrainOn::all_user_and_system_messages),
            std::string(kK25DefaultSystem) + "<|im_end|>U1<|im_end|>U2<|im_end|>");
  const SupervisedExample everything = renderer->build_supervised_example(messages, TrainOn::all_tokens);
  EXPECT_EQ(k25_trained_text(everything), k25_text(everything.model_input.to_ints()));
  for (Message& message : messages) message.trainable = message.role == "user";
  EXPECT_EQ(trained(TrainOn::customized), "U1<|im_end|>U2<|im_end|>");

  // After a tool call the turn runs from the last answer that called no tool: both calls' outputs
  // are trained under last_assistant_turn, and the first keeps its reasoning.
  Message call = k25_assistant("Need data.", "");
  call.tool_calls = {ToolCall("get_weather", "{\"city\": \"Oslo\"}", "functions.get_weather:0")};
  const std::vector<Message> tool_turn{Message("user", "Oslo?"), call,
                                       k25_tool_result("functions.get_weather:0", "rain"), k25_assistant("", "Rain.")};
  EXPECT_EQ(k25_trained_text(renderer->build_supervised_example(tool_turn, TrainOn::last_assistant_turn)),
            "Need data.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            "<|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>"
            "<think></think>Rain.<|im_end|>");
}

TEST(KimiK25Renderer, DisableThinkingRefusesToTrainATurnThatReasons) {
  const std::vector<Message> messages{Message("user", "Hi"), Message("assistant", "Hello"), Message("user", "2+2?"),
                                      k25_assistant("Easy.", "4")};
  for (const K25Maker make : {&detail::make_kimi_k25_disable_thinking, &detail::make_kimi_k26_disable_thinking}) {
    const auto renderer = make(kimi_shaped_tokenizer());
    EXPECT_THAT([&] { renderer->build_supervised_example(messages); },
                ThrowsMessage<error>(HasSubstr("messages[3]: " + std::string(renderer->name()) + " has thinking")));
    // Without reasoning: the prompt's "<think></think>" is context, the answer is trained.
    const std::vector<Message> plain(messages.begin(), messages.begin() + 2);
    EXPECT_EQ(k25_trained_text(renderer->build_supervised_example(plain)), "Hello<|im_end|>");
    // Reasoning in a turn that is not trained stays allowed (and leaves the history).
    EXPECT_EQ(k25_trained_text(renderer->build_supervised_example(messages, TrainOn::all_assistant_messages)),
              "<think></think>Hello<|im_end|><think>Easy.</think>4<|im_end|>");
  }
}

// Reasoning on a tool call stays in the prompts of its turn and leaves them once an answer
// follows: the example of that turn is then no prefix of the next turn's prompt, even with thinking
// off (the reasoning came with the conversation). Only preserve_thinking keeps it.
TEST(KimiK25Renderer, ReasoningLeavingTheHistoryBreaksSequenceExtension) {
  Message call = k25_assistant("Need data.", "");
  call.tool_calls = {ToolCall("get_weather", "{\"city\": \"Oslo\"}", "functions.get_weather:0")};
  const std::vector<Message> conversation{Message("user", "Oslo?"), call,
                                          k25_tool_result("functions.get_weather:0", "rain"),
                                          k25_assistant("", "Rain."), Message("user", "Thanks.")};
  for (const K25Maker make :
       {&detail::make_kimi_k25, &detail::make_kimi_k25_disable_thinking, &detail::make_kimi_k26_preserve_thinking}) {
    const auto renderer = make(kimi_shaped_tokenizer());
    const std::vector<TokenId> turn =
        renderer->build_supervised_example(std::span(conversation).first(4)).model_input.to_ints();
    const std::vector<TokenId> next = renderer->build_generation_prompt(conversation).to_ints();
    const bool extends = turn.size() <= next.size() && std::equal(turn.begin(), turn.end(), next.begin());
    EXPECT_EQ(extends, renderer->has_extension_property()) << renderer->name();
  }
}

// ---- Parsing ------------------------------------------------------------------------------

TEST(KimiK25Renderer, ParsingRestoresThePrefilledThinkTag) {
  const auto renderer = detail::make_kimi_k25(kimi_shaped_tokenizer());
  ParsedResponse parsed = renderer->parse_response(k25_tokens("reasoning...</think>2<|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("reasoning...")), ContentPart(TextPart("2"))));
  parsed = renderer->parse_response(k25_tokens("The answer is 42.<|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content, ElementsAre(ContentPart(TextPart("The answer is 42."))));
  EXPECT_EQ(renderer->parse_response(k25_tokens("The answer is 42.")).termination, ParseTermination::malformed);

  parsed = renderer->parse_response(
      k25_tokens("Look it up.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                 "<|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|><|tool_calls_section_end|>"
                 "<|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("Look it up.")), ContentPart(TextPart("Checking."))));
  EXPECT_THAT(parsed.message.tool_calls,
              ElementsAre(ToolCall("get_weather", "{\"city\": \"Oslo\"}", "functions.get_weather:0")));
  for (const auto& tokens : {std::vector<TokenId>{}, std::vector<TokenId>{kimi_shaped_base + 23},
                             std::vector<TokenId>{-1, kimi_shaped_base + 23, 1 << 30}}) {
    EXPECT_NO_THROW(renderer->parse_response(tokens));
  }
}

// The sampled action of each turn of the shared conversations reads back as the message.
TEST(KimiK25Renderer, ObservationIsThePromptAndTheActionParsesBack) {
  for (const K25Maker make : {&detail::make_kimi_k25, &detail::make_kimi_k26_preserve_thinking}) {
    test_support::expect_observation_and_action(*make(kimi_shaped_tokenizer()), test_support::conversations());
  }
}

// ---- Tool declarations --------------------------------------------------------------------

ToolSpec k25_weather_tool() {
  return ToolSpec("get_weather", "Get the current weather for a location",
                  R"({"type": "object", "properties": {"location": {"type": "string", "description": )"
                  R"("The city and state, e.g. San Francisco, CA"}, "unit": {"type": "string", "enum": )"
                  R"(["celsius", "fahrenheit"], "description": "Temperature unit"}}, "required": ["location"]})");
}

// The cookbook's get_tool_spec() and test_kimi_k25_tool_declaration_matches_hf's prompt.
TEST(KimiK25Renderer, DeclaresToolsTypeScriptStyleBeforeTheSystemMessage) {
  const auto renderer = detail::make_kimi_k25(kimi_shaped_tokenizer());
  const std::vector<ToolSpec> tools{k25_weather_tool()};
  std::vector<Message> messages = renderer->create_conversation_prefix_with_tools(tools);
  ASSERT_EQ(messages.size(), 2U);
  const std::string declaration =
      "# Tools\n\n## functions\nnamespace functions {\n// Get the current weather for a location\n"
      "type get_weather = (_: {\n  // The city and state, e.g. San Francisco, CA\n  location: string,\n"
      "  // Temperature unit\n  unit?: \"celsius\" | \"fahrenheit\"\n}) => any;\n}\n";
  EXPECT_EQ(messages[0], Message("tool_declare", declaration));
  EXPECT_EQ(messages[1], Message("system", std::string(kK25DefaultSystem)));
  messages.emplace_back("user", "What's the weather in NYC?");
  EXPECT_EQ(k25_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|im_system|>tool_declare<|im_middle|>" + declaration + "<|im_end|>" + std::string(kK25System) +
                std::string(kK25DefaultSystem) +
                "<|im_end|><|im_user|>user<|im_middle|>What's the weather in NYC?<|im_end|>"
                "<|im_assistant|>assistant<|im_middle|><think>");
}

// Expected strings from the model's tool_declaration_ts.py (the cookbook's copy) run on these
// schemas after Kimi's tokenizer sorted them: $defs as interfaces, constraints, defaults as
// Python writes them, arrays, enums, anyOf, type lists, additionalProperties, nested objects.
TEST(KimiK25Renderer, TypeScriptDeclarationsOfEveryKindOfSchema) {
  const std::vector<ToolSpec> rich{ToolSpec("search", "Search things.\n\nTwo lines.", R"({"type": "object",
    "$defs": {"Range": {"type": "object", "description": "A range", "properties": {"low": {"type": "number",
      "minimum": 0, "maximum": 1.5}, "high": {"type": "integer"}}, "required": ["low"]}},
    "properties": {
      "query": {"type": "string", "description": "What to find", "minLength": 1, "maxLength": 200, "pattern": "^[a-z]+$"},
      "limit": {"type": "integer", "default": 10, "maximum": 100},
      "ratio": {"type": "number", "default": 0.5},
      "exact": {"type": "boolean", "default": false},
      "tags": {"type": "array", "items": {"type": "string", "description": "A tag"}, "maxItems": 5, "description": "Tags"},
      "ids": {"type": "array", "items": {"type": "integer"}},
      "any": {},
      "mode": {"enum": ["a", "b", 1, null, true]},
      "range": {"$ref": "#/$defs/Range"},
      "either": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "x"},
      "multi": {"type": ["string", "integer", "null"]},
      "meta": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
      "closed": {"type": "object", "additionalProperties": false},
      "open": {"type": "object", "additionalProperties": true},
      "flag": true,
      "nested": {"type": "object", "properties": {"inner": {"type": "object", "properties": {"x": {"type": "number",
        "description": "X\nsecond line"}}, "required": ["x"]}}, "default": {"inner": {"x": 1}}},
      "ünï": {"type": "string", "default": "é\"q"}},
    "required": ["query", "range", "zeta"]})")};
  EXPECT_EQ(
      detail::kimi_typescript_tool_declarations(rich),
      "# Tools\n\n## functions\nnamespace functions {\n// A range\ninterface Range {\n  // maximum: 1.5, minimum: 0\n"
      "  low: number,\n  high?: number\n}\n// Search things.\n\n// Two lines.\ntype search = (_: {\n"
      "  // What to find\n  // maxLength: 200, minLength: 1, pattern: ^[a-z]+$\n  query: string,\n  range: Range,\n"
      "  any?: any,\n  closed?: {\n    [k: string]: never\n  },\n  // Default: \"x\"\n  either?: string | null,\n"
      "  // Default: False\n  exact?: boolean,\n  flag?: any,\n  ids?: Array<number>,\n  // maximum: 100\n"
      "  // Default: 10\n  limit?: number,\n  meta?: {\n    k?: string,\n    [k: string]: number\n  },\n"
      "  mode?: \"a\" | \"b\" | 1 | None | True,\n  multi?: string | number | null,\n"
      "  // Default: {\"inner\": {\"x\": 1}}\n  nested?: {\n    inner?: {\n      // X\n      // second line\n"
      "      x: number\n    }\n  },\n  open?: {\n    [k: string]: any\n  },\n  // Default: 0.5\n"
      "  ratio?: number,\n  // Tags\n  // maxItems: 5\n  tags?: Array<\n    // A tag\n    string\n  >,\n"
      "  // Default: \"é\\\"q\"\n  ünï?: string\n}) => any;\n}\n");

  // A schema that refers to itself becomes the interface "parameters"; no arguments is "{}".
  const std::vector<ToolSpec> several{ToolSpec("tree", "",
                                               R"({"type": "object", "properties": {"value": {"type": "integer"},
                   "children": {"type": "array", "items": {"$ref": "#"}}}, "required": ["value"]})"),
                                      ToolSpec("noargs", "No arguments"), ToolSpec("empty", "d", "{}")};
  EXPECT_EQ(detail::kimi_typescript_tool_declarations(several),
            "# Tools\n\n## functions\nnamespace functions {\ninterface parameters {\n  children?: Array<parameters>,\n"
            "  value: number\n}\ntype tree = (_: parameters) => any;\n// No arguments\ntype noargs = (_: {}) => any;\n"
            "// d\ntype empty = (_: {}) => any;\n}\n");
}

TEST(KimiK25Renderer, SchemasTheDeclarationsCannotWriteAreErrorsNamingThePath) {
  const auto declare = [](std::string parameters) {
    const std::vector<ToolSpec> tools{ToolSpec("ok", "", R"({"type": "object"})"),
                                      ToolSpec("f", "", std::move(parameters))};
    return detail::kimi_typescript_tool_declarations(tools);
  };
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "tools[1].parameters: not JSON"},
      {"[]", "tools[1].parameters: not a JSON object"},
      {R"({"properties": {"x": {"type": "string", "enum": ["a", 1]}}})", "tools[1].parameters.properties.x.enum"},
      {R"({"properties": {"x": {"$ref": "#/$defs/Missing"}}})",
       "tools[1].parameters.properties.x.$ref: reference not found"},
      {R"({"properties": {"x": {"$ref": "other.json"}}})", "tools[1].parameters.properties.x.$ref: unsupported"},
      {R"({"properties": {"x": {"type": ["string", "date"]}}})",
       "tools[1].parameters.properties.x.type: unknown type date"},
      {R"({"properties": {"x": {"description": "no type"}}})", "tools[1].parameters.properties.x: a JSON Schema needs"},
      {R"({"properties": {"x": {"type": "array", "items": [{"type": "string"}]}}})",
       "tools[1].parameters.properties.x.items: not a JSON Schema"},
      {R"({"properties": {"x": {"type": "object", "additionalProperties": "yes"}}})",
       "tools[1].parameters: additionalProperties must be"},
  };
  for (const auto& schema_and_message : cases) {
    const std::string& parameters = schema_and_message.first;
    EXPECT_THAT([&] { declare(parameters); }, ThrowsMessage<error>(HasSubstr(schema_and_message.second))) << parameters;
  }
}

// ---- Images -------------------------------------------------------------------------------

// The cookbook's test_kimi_k25_image_content: the image between Kimi's media markers, counted
// by Kimi's image processor (2048x1365 -> 3626, 17x64 -> 3, 5000x6000 -> 4189).
TEST(KimiK25Renderer, ImagesAreChunksBetweenKimisMediaMarkers) {
  const auto renderer = detail::make_kimi_k25(kimi_shaped_tokenizer());
  for (const auto& [width, height, tokens] :
       {std::array<std::uint32_t, 3>{2048, 1365, 3626}, std::array<std::uint32_t, 3>{17, 64, 3},
        std::array<std::uint32_t, 3>{5000, 6000, 4189}}) {
    const ImagePart image = k25_png(width, height);
    const std::vector<Message> messages{Message("system", "You are a helpful assistant."),
                                        Message("user", {image, TextPart("Can you describe this image?")}),
                                        Message("assistant", "That looks like a blank image?")};
    const ModelInput prompt = renderer->build_generation_prompt(messages);
    ASSERT_EQ(prompt.chunks.size(), 3U);
    EXPECT_EQ(k25_text(std::get<EncodedTextChunk>(prompt.chunks[0]).tokens),
              std::string(kK25System) +
                  "You are a helpful assistant.<|im_end|><|im_user|>user<|im_middle|>"
                  "<|media_begin|>image<|media_content|>");
    EXPECT_EQ(std::get<ImageChunk>(prompt.chunks[1]), ImageChunk(image.data, ImageFormat::png, tokens));
    EXPECT_EQ(k25_text(std::get<EncodedTextChunk>(prompt.chunks[2]).tokens),
              "<|media_end|>\nCan you describe this image?<|im_end|><|im_assistant|>assistant<|im_middle|>"
              "<think></think>That looks like a blank image?<|im_end|><|im_assistant|>assistant<|im_middle|><think>");
    EXPECT_EQ(prompt.length(),
              chunk_length(prompt.chunks[0]) + static_cast<std::int64_t>(tokens) + chunk_length(prompt.chunks[2]));
  }
  // Two images and text between them, in a supervised example: the chunks carry context weight.
  const std::vector<Message> two{Message("user", {TextPart("A:"), k25_png(28, 28), TextPart("B:"), k25_png(56, 28)}),
                                 Message("assistant", "Two squares.")};
  const SupervisedExample example = renderer->build_supervised_example(two);
  ASSERT_EQ(example.model_input.chunks.size(), 5U);
  EXPECT_EQ(std::get<ImageChunk>(example.model_input.chunks[1]).expected_tokens, 1);
  EXPECT_EQ(std::get<ImageChunk>(example.model_input.chunks[3]).expected_tokens, 2);
  EXPECT_EQ(k25_text(std::get<EncodedTextChunk>(example.model_input.chunks[2]).tokens),
            "<|media_end|>\nB:<|media_begin|>image<|media_content|>");
  EXPECT_EQ(example.weights.size(), static_cast<std::size_t>(example.model_input.length()));
  // The prompt's "<think>" is context here too, images or not.
  EXPECT_EQ(k25_trained_text_of_chunks(example), "</think>Two squares.<|im_end|>");
}

TEST(KimiK25Renderer, RefusesWhatItCannotRenderNamingTheCallersIndexAndPart) {
  const auto renderer = detail::make_kimi_k25(kimi_shaped_tokenizer());
  // The default system message the renderer adds does not shift the index in the errors.
  const std::vector<Message> corrupt{Message("user", "Hi"),
                                     Message("user", {TextPart("see"), ImagePart({1, 2, 3}, ImageFormat::png)})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(corrupt); },
              ThrowsMessage<error>(HasSubstr("messages[1].content[1]: image")));
  const std::vector<Message> zero{Message("user", {k25_png(0, 5)})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(zero); },
              ThrowsMessage<error>(HasSubstr("messages[0].content[0]")));
  const std::vector<Message> assistant_image{Message("user", "Draw"),
                                             Message("assistant", {TextPart("Here:"), k25_png(28, 28)})};
  EXPECT_THAT([&] { renderer->build_supervised_example(assistant_image); },
              ThrowsMessage<error>(HasSubstr("messages[1].content[1]")));
  const std::vector<Message> thinking_user{Message("user", {ThinkingPart("hmm")})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(thinking_user); },
              ThrowsMessage<error>(HasSubstr("messages[0].content[0]")));
  // Kimi K2 has no vision: an image is refused there.
  const std::vector<Message> image{Message("user", {k25_png(28, 28)})};
  EXPECT_THAT([&] { detail::make_kimi_k2(kimi_shaped_tokenizer())->build_generation_prompt(image); },
              ThrowsMessage<error>(HasSubstr("messages[0].content[0]")));
}

}  // namespace
}  // namespace tinker::renderers
