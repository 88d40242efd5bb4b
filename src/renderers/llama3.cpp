// llama3: the Llama 3 Instruct format,
//   <|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{text}<|eot_id|>
//   <|start_header_id|>user<|end_header_id|>\n\n{text}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
// Like the cookbook, no "Cutting Knowledge Date" system header (the Llama 3.1 templates add one;
// add it to the system message when wanted). Like every Llama 3 template, each message's text is
// trimmed of surrounding whitespace. No tool calls: Llama 3 writes them as bare JSON, which
// cannot be told apart from an answer that is JSON.
#include "renderers/families.hpp"
#include "renderers/parsing.hpp"

#include <tinker/tokenizer.hpp>

namespace tinker::renderers::detail {
namespace {

constexpr std::string_view family = "llama3";

class Llama3Renderer final : public Renderer {
 public:
  explicit Llama3Renderer(TokenizerPtr tokenizer)
      : Renderer(std::move(tokenizer)),
        begin_of_text_(require_token(this->tokenizer(), "<|begin_of_text|>", family)),
        end_of_turn_(require_token(this->tokenizer(), "<|eot_id|>", family)) {
    require_token(this->tokenizer(), "<|start_header_id|>", family);
    require_token(this->tokenizer(), "<|end_header_id|>", family);
  }

  std::string_view name() const noexcept override { return family; }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{end_of_turn_}; }

  bool has_extension_property() const noexcept override { return true; }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    const StopSplit split = split_at_stop_token(tokens, end_of_turn_, tokenizer().eos_id());
    const DecodedText decoded = decode_sampled(tokenizer(), split.body);
    ParsedResponse parsed;
    parsed.message = Message("assistant", decoded.text);
    parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
    return parsed;
  }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    require_role(message, context.index, {"system", "user", "assistant", "tool"}, family);
    require_text_parts(message, context.index, family, /*thinking_allowed=*/false);
    require_no_tool_calls(message, context.index, family,
                          "Llama 3 writes them as bare JSON, which cannot be told apart from an answer");
    RenderedMessage rendered;
    rendered.header = encode("<|start_header_id|>" + message.role + "<|end_header_id|>\n\n");
    rendered.output.emplace_back(EncodedTextChunk(encode(std::string(trim_whitespace(message.text())) + "<|eot_id|>")));
    return rendered;
  }

  std::vector<TokenId> bos_tokens() const override { return {begin_of_text_}; }

 private:
  TokenId begin_of_text_;
  TokenId end_of_turn_;
};

}  // namespace

std::unique_ptr<Renderer> make_llama3(TokenizerPtr tokenizer) {
  return std::make_unique<Llama3Renderer>(std::move(tokenizer));
}

}  // namespace tinker::renderers::detail
