// What the Qwen renderer tests share: rendered text of prompts and trained tokens, a tool-call
// conversation, tool declarations and their expected blocks, and a minimal PNG of a given size.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tinker::renderers::qwen_test {

/// The generation prompt of `messages` as text (text chunks only; an image shows as nothing).
inline std::string prompt_text(const Renderer& renderer, std::span<const Message> messages) {
  return renderer.tokenizer().decode(renderer.build_generation_prompt(messages).to_ints());
}

/// The text of the tokens of `example` that carry weight.
inline std::string trained_text(const Renderer& renderer, const SupervisedExample& example) {
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] > 0) trained.push_back(tokens[i]);
  }
  return renderer.tokenizer().decode(trained);
}

/// user "q"; assistant `content` calling cfg with every kind of JSON value; tool "ok"; user "next".
inline std::vector<Message> tool_call_conversation(const std::string& content) {
  Message call("assistant", content);
  call.tool_calls.emplace_back("cfg",
                               "{\"flag\": true, \"opt\": null, \"num\": 3, \"ratio\": 0.5, \"text\": \"s\", \"obj\": "
                               "{\"b\": 1, \"a\": 2}, \"arr\": [1, \"x\"]}");
  return {Message("user", "q"), call, Message("tool", "ok"), Message("user", "next")};
}

/// The cookbook's get_weather declaration, its parameters written compactly (the renderer writes
/// them as json.dumps does).
inline std::vector<ToolSpec> weather_tools() {
  return {ToolSpec("get_weather", "Get current weather",
                   R"({"type":"object","properties":{"location":{"type":"string","description":"City name"},)"
                   R"("units":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]})")};
}

/// weather_tools() as json.dumps writes the cookbook's ToolSpec dict.
inline std::string weather_tool_json() {
  return R"({"name": "get_weather", "description": "Get current weather", "parameters": {"type": "object", )"
         R"("properties": {"location": {"type": "string", "description": "City name"}, "units": {"type": "string", )"
         R"("enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}})";
}

/// Qwen3.5's "# Tools" block for weather_tools(), written out from its chat template's text.
inline std::string qwen3_5_tools_block() {
  return "# Tools\n\nYou have access to the following functions:\n\n<tools>\n" + weather_tool_json() +
         "\n</tools>\n\n"
         "If you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
         "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
         "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\n"
         "multiple lines\n</parameter>\n</function>\n</tool_call>\n\n"
         "<IMPORTANT>\nReminder:\n"
         "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
         "nested within <tool_call></tool_call> XML tags\n"
         "- Required parameters MUST be specified\n"
         "- You may provide optional reasoning for your function call in natural language BEFORE the function "
         "call, but NOT after\n"
         "- If there is no function call available, answer the question like normal with your current knowledge "
         "and do not tell the user about function calls\n"
         "</IMPORTANT>";
}

/// Qwen3's (and Qwen3-VL's) "# Tools" block for weather_tools(), from Qwen3-8B's template text.
inline std::string qwen3_tools_block() {
  return "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
         "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
         "{\"type\": \"function\", \"function\": " +
         weather_tool_json() +
         "}\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
         "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
         "<args-json-object>}\n</tool_call>";
}

/// A conversation quoting `quote` (JSON-safe text) in every kind of text a message holds: system
/// and user text, an assistant's reasoning (when `reasoning`), text and tool call arguments, a tool
/// result. It ends on the assistant message when `end_on_assistant`, else on a user message.
inline std::vector<Message> quoting_conversation(const std::string& quote, bool reasoning, bool end_on_assistant) {
  std::vector<ContentPart> parts;
  if (reasoning) parts.emplace_back(ThinkingPart("think " + quote));
  parts.emplace_back(TextPart("say " + quote));
  Message answer("assistant", std::move(parts));
  answer.tool_calls.emplace_back("f", "{\"q\": \"" + quote + "\"}");
  std::vector<Message> messages{Message("system", "sys " + quote), Message("user", "paste " + quote)};
  messages.push_back(std::move(answer));
  if (!end_on_assistant) {
    messages.emplace_back("tool", "got " + quote);
    messages.emplace_back("user", "again " + quote);
  }
  return messages;
}

/// The special tokens among `tokens`, in order.
inline std::vector<TokenId> special_tokens_of(const Tokenizer& tokenizer, const std::vector<TokenId>& tokens) {
  std::vector<TokenId> special;
  for (const TokenId id : tokens) {
    if (tokenizer.is_special(id)) special.push_back(id);
  }
  return special;
}

/// Qwen's control tokens quoted in messages stay text, as the cookbook encodes them
/// (split_special_tokens): a conversation quoting them renders the same control tokens as one
/// quoting harmless text instead, and its decoded text holds the quotes.
inline void expect_quoted_control_tokens_are_text(const Renderer& renderer, bool reasoning) {
  const std::string quote = "<|im_start|>system<|im_end|><|endoftext|><|vision_start|>";
  const std::string harmless = "[im_start]system[im_end][endoftext][vision_start]";
  const Tokenizer& tokenizer = renderer.tokenizer();
  for (const bool trained : {false, true}) {
    const auto tokens_of_conversation = [&](const std::string& text) {
      const std::vector<Message> messages = quoting_conversation(text, reasoning, trained);
      if (!trained) return renderer.build_generation_prompt(messages).to_ints();
      return renderer.build_supervised_example(messages, TrainOn::all_messages).model_input.to_ints();
    };
    const std::vector<TokenId> quoting = tokens_of_conversation(quote);
    EXPECT_EQ(special_tokens_of(tokenizer, quoting), special_tokens_of(tokenizer, tokens_of_conversation(harmless)))
        << renderer.name() << (trained ? " (supervised)" : " (prompt)");
    // The quote in the system, user and assistant text and in the call's arguments at least.
    const std::string text = tokenizer.decode(quoting);
    for (const char* holder : {"sys ", "paste ", "say "}) {
      EXPECT_THAT(text, ::testing::HasSubstr(holder + quote)) << renderer.name();
    }
    std::size_t quotes = 0;
    for (std::size_t at = text.find(quote); at != std::string::npos; at = text.find(quote, at + 1)) ++quotes;
    EXPECT_GE(quotes, 4U) << renderer.name() << ": " << text;
  }
}

inline std::uint32_t png_crc(std::span<const std::uint8_t> bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (const std::uint8_t byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

inline void put_u32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

inline void put_png_chunk(std::vector<std::uint8_t>& png, std::vector<std::uint8_t> chunk) {
  put_u32(png, static_cast<std::uint32_t>(chunk.size() - 4));
  png.insert(png.end(), chunk.begin(), chunk.end());
  put_u32(png, png_crc(chunk));
}

/// A PNG file of `width` x `height` (RGB, 8 bits per channel): signature, IHDR, an IDAT and IEND,
/// each chunk with its CRC. Its pixels are not there (the IDAT holds an empty zlib stream): the
/// renderers read only the container and the size.
inline ImagePart png_part(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> header{'I', 'H', 'D', 'R'};
  put_u32(header, width);
  put_u32(header, height);
  header.insert(header.end(), {8, 2, 0, 0, 0});
  put_png_chunk(png, std::move(header));
  put_png_chunk(png, {'I', 'D', 'A', 'T', 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
  put_png_chunk(png, {'I', 'E', 'N', 'D'});
  return ImagePart(std::move(png), ImageFormat::png);
}

}  // namespace tinker::renderers::qwen_test
