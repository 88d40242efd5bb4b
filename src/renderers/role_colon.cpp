// role_colon: the plain "User: ...\n\nAssistant: ..." format for base models (no chat template;
// the format of DeepSeek R1-Zero's prompts). Sampling stops on the string "\n\nUser:".
#include "renderers/families.hpp"
#include "renderers/parsing.hpp"

#include <tinker/tokenizer.hpp>

#include <cctype>

namespace tinker::renderers::detail {
namespace {

constexpr std::string_view family = "role_colon";
// A message is "<Role>:" + " <text>\n\n"; the prefix and suffix are named once so rendering and
// parsing stay inverses.
constexpr std::string_view content_prefix = " ";
constexpr std::string_view content_suffix = "\n\n";
constexpr std::string_view stop_string = "\n\nUser:";
// The part of the stop string that the next message's header also writes: appended after the
// last assistant message of a supervised example so the model learns to emit the whole stop.
constexpr std::string_view stop_overlap = "User:";

std::string capitalized(std::string_view role) {
  std::string out(role);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

class RoleColonRenderer final : public Renderer {
 public:
  explicit RoleColonRenderer(TokenizerPtr tokenizer) : Renderer(std::move(tokenizer)) {}

  std::string_view name() const noexcept override { return family; }

  StopCondition stop_sequences() const override { return std::vector<std::string>{std::string(stop_string)}; }

  bool has_extension_property() const noexcept override { return true; }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    const std::optional<TokenId> eos = tokenizer().eos_id();
    const bool ended_with_eos = eos && !tokens.empty() && tokens.back() == *eos;
    if (ended_with_eos) tokens = tokens.first(tokens.size() - 1);
    const DecodedText decoded = decode_sampled(tokenizer(), tokens);

    const std::string_view text = decoded.text;
    const std::size_t stop_at = text.find(stop_string);
    std::string_view content = text.substr(0, stop_at);
    if (content.starts_with(content_prefix)) content.remove_prefix(content_prefix.size());
    if (content.ends_with(content_suffix)) content.remove_suffix(content_suffix.size());

    ParsedResponse parsed;
    parsed.message = Message("assistant", std::string(content));
    parsed.termination = termination(text, stop_at, ended_with_eos);
    if (!decoded.all_ids_valid) parsed.termination = ParseTermination::malformed;
    return parsed;
  }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    require_role(message, context.index, {"system", "user", "assistant", "tool"}, family);
    require_text_parts(message, context.index, family, /*thinking_allowed=*/false);
    require_no_tool_calls(message, context.index, family, "the format has no tool-call convention");
    RenderedMessage rendered;
    rendered.header = encode(capitalized(message.role) + ":");
    rendered.output.emplace_back(
        EncodedTextChunk(encode(std::string(content_prefix) + message.text() + std::string(content_suffix))));
    if (message.role == "assistant") rendered.stop_overlap = encode(stop_overlap);
    return rendered;
  }

  std::vector<TokenId> bos_tokens() const override {
    const std::optional<TokenId> bos = tokenizer().bos_id();
    return bos ? std::vector<TokenId>{*bos} : std::vector<TokenId>{};
  }

 private:
  // Exactly one stop string and no EOS after it is the clean end; EOS alone ends a base model's
  // answer cleanly too; anything else (cut off, EOS after the stop, several stops) is malformed.
  static ParseTermination termination(std::string_view text, std::size_t stop_at, bool ended_with_eos) {
    if (stop_at == std::string_view::npos) return ended_with_eos ? ParseTermination::eos : ParseTermination::malformed;
    const bool another_stop = text.find(stop_string, stop_at + stop_string.size()) != std::string_view::npos;
    if (another_stop || ended_with_eos) return ParseTermination::malformed;
    return ParseTermination::stop_sequence;
  }
};

}  // namespace

std::unique_ptr<Renderer> make_role_colon(TokenizerPtr tokenizer) {
  return std::make_unique<RoleColonRenderer>(std::move(tokenizer));
}

}  // namespace tinker::renderers::detail
