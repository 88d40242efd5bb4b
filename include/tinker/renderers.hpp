/// \file
/// Chat renderers: conversations to tokens in a model's exact chat format, and sampled tokens
/// back to messages (tinker::renderers, `doc/renderers.md`).
#pragma once

#include <tinker/types/datum.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/sampling.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tinker {
class Tokenizer;
}

/// Chat renderers: conversations to tokens in a model's exact chat format, and sampled tokens back
/// to messages.
///
/// A `Renderer` turns a list of `Message`s into the tokens a chat model was trained on: the prompt
/// to sample from (`build_generation_prompt`), or a supervised example with a per-token training
/// mask (`build_supervised_example`). `parse_response` reads sampled tokens back into a message,
/// splitting reasoning and tool calls out of the text. The families and their names are the ones
/// the Tinker cookbook uses (`role_colon`, `llama3`, the `qwen3*`, `qwen3_5*`, `qwen3_8_*` and
/// `qwen3_vl*` families, `deepseekv3*`, `gpt_oss_*`, `kimi_k2*`, `nemotron3*`; renderer_names()
/// lists them all), so recipes move between the two unchanged. Users add families of their own
/// with register_renderer.
/// `doc/renderers.md` describes each format and the checks that tie it to the model's own template.
///
///     auto tokenizer = co_await training.async_get_tokenizer(tinker::use_awaitable);
///     auto renderer = tinker::renderers::make_renderer(
///         tinker::renderers::recommended_renderer("Qwen/Qwen3-8B"), tokenizer);
///     auto example = renderer->build_supervised_example(conversation, TrainOn::all_assistant_messages);
///     tinker::Datum datum = example.to_datum();
namespace tinker::renderers {

/// Plain text of a message.
class TextPart {
 public:
  /// Empty text.
  TextPart() = default;
  /// The text `text_`.
  explicit TextPart(std::string text_) : text(std::move(text_)) {}

  /// UTF-8 text.
  std::string text;

  /// Equal when the texts are equal.
  friend bool operator==(const TextPart&, const TextPart&) = default;
};

/// The model's reasoning (chain of thought), rendered in the family's thinking markup.
class ThinkingPart {
 public:
  /// Empty reasoning.
  ThinkingPart() = default;
  /// The reasoning `thinking_`.
  explicit ThinkingPart(std::string thinking_) : thinking(std::move(thinking_)) {}

  /// UTF-8 text, without the family's markup.
  std::string thinking;

  /// Equal when the texts are equal.
  friend bool operator==(const ThinkingPart&, const ThinkingPart&) = default;
};

/// An image in a message: an encoded PNG or JPEG file (the encodings the service takes). The
/// vision families (`qwen3_5`, `qwen3_8_*`, `qwen3_vl*`, `kimi_k25*`, `kimi_k26*`) render it as
/// their image markup around an ImageChunk whose `expected_tokens` is the model's own count for
/// the image's size; the text-only families fail naming the message and part.
///
/// Make one from a file, bytes or a `data:` URI: the format is read from the bytes (not from a
/// name or a MIME type), and WebP is decoded and re-encoded as PNG, losslessly. PNG and JPEG are
/// kept byte for byte (`doc/renderers.md#images` says why). Each throws tinker::error
/// (invalid_argument) for what is not a readable PNG, JPEG or WebP image, naming the file.
class ImagePart {
 public:
  /// An empty PNG.
  ImagePart() = default;
  /// The encoded image `data_` in `format_` (checked against the bytes when rendered).
  ImagePart(std::vector<std::uint8_t> data_, ImageFormat format_) : data(std::move(data_)), format(format_) {}

  /// The image file at `path`.
  static ImagePart from_file(const std::string& path);
  /// An encoded PNG, JPEG or WebP image.
  static ImagePart from_bytes(std::vector<std::uint8_t> bytes);
  /// A `data:image/...;base64,...` URI (the form OpenAI-style conversations carry).
  static ImagePart from_data_uri(std::string_view uri);

  std::vector<std::uint8_t> data;         ///< the encoded image file's bytes
  ImageFormat format = ImageFormat::png;  ///< how `data` is encoded

  /// Equal when every field is equal.
  friend bool operator==(const ImagePart&, const ImagePart&) = default;
};

/// An image's size in pixels, as its header states it.
class ImageSize {
 public:
  std::uint32_t width = 0;   ///< pixels
  std::uint32_t height = 0;  ///< pixels

  /// Equal when both sides are equal.
  friend bool operator==(const ImageSize&, const ImageSize&) = default;
};

/// The size of `image` from its header (PNG, JPEG or WebP). Throws tinker::error
/// (invalid_argument) for bytes that are not such an image, a truncated header or a zero size.
ImageSize image_size(std::span<const std::uint8_t> image);

/// Tokens an image of `size` takes in the Qwen vision families (Qwen3-VL, Qwen3.5, 3.6, 3.8):
/// Qwen's `smart_resize` to multiples of 32 between 65,536 and 16,777,216 pixels, 16-pixel
/// patches merged 2x2. Throws tinker::error (invalid_argument) for a zero side or an aspect ratio
/// over 200, which the processor refuses.
std::int64_t qwen_vl_image_tokens(ImageSize size);
/// Tokens an image of `size` takes in Kimi K2.5 and K2.6 (their image processor's rule; see
/// `doc/renderers.md#images`). Throws tinker::error (invalid_argument) for a zero side.
std::int64_t kimi_k25_image_tokens(ImageSize size);

/// One part of a message's content.
using ContentPart = std::variant<TextPart, ThinkingPart, ImagePart>;

/// A function call made by the assistant (OpenAI's shape): `arguments` is a JSON object's text.
class ToolCall {
 public:
  /// An empty call.
  ToolCall() = default;
  /// A call of function `name_` with `arguments_` (JSON object text).
  ToolCall(std::string name_, std::string arguments_, std::optional<std::string> id_ = std::nullopt)
      : name(std::move(name_)), arguments(std::move(arguments_)), id(std::move(id_)) {}

  std::string name;               ///< the function called
  std::string arguments;          ///< JSON text, e.g. {"city": "Paris"}
  std::optional<std::string> id;  ///< the call's id, which the tool result's `tool_call_id` names

  /// Equal when every field is equal.
  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

/// Sampled text that looked like a tool call but could not be read as one.
class UnparsedToolCall {
 public:
  /// Empty.
  UnparsedToolCall() = default;
  /// The text `raw_text_` that could not be read, and why.
  UnparsedToolCall(std::string raw_text_, std::string error_)
      : raw_text(std::move(raw_text_)), error(std::move(error_)) {}

  std::string raw_text;  ///< the sampled text of the call, markup included
  std::string error;     ///< why it could not be read

  /// Equal when every field is equal.
  friend bool operator==(const UnparsedToolCall&, const UnparsedToolCall&) = default;
};

/// A function the model may call, as declared to it (OpenAI's and the cookbook's shape).
class ToolSpec {
 public:
  /// An empty declaration.
  ToolSpec() = default;
  /// Function `name_`, what it does, and its parameters as a JSON Schema object's text.
  ToolSpec(std::string name_, std::string description_,
           std::string parameters_ = "{\"type\": \"object\", \"properties\": {}}")
      : name(std::move(name_)), description(std::move(description_)), parameters(std::move(parameters_)) {}

  std::string name;         ///< the function's name, as calls name it
  std::string description;  ///< what it does, for the model
  std::string parameters;   ///< JSON Schema object text: {"type": "object", "properties": {...}, "required": [...]}

  /// Equal when every field is equal.
  friend bool operator==(const ToolSpec&, const ToolSpec&) = default;
};

/// Reads tool declarations: a JSON array of `{"name", "description", "parameters"}` objects or of
/// OpenAI's `{"type": "function", "function": {...}}`, or an object with such a "tools" array.
/// Throws tinker::error (invalid_argument) naming the JSON path of what is wrong.
std::vector<ToolSpec> tools_from_json(std::string_view json);

/// One message of a conversation. `role` is "system", "user", "assistant" or "tool" (some
/// families also know "developer", and the roles create_conversation_prefix_with_tools makes:
/// Kimi's "tool_declare" and gpt-oss's "harmony_system"); a renderer refuses a role it cannot
/// render, naming the message's index.
class Message {
 public:
  /// An empty message without a role.
  Message() = default;
  /// A message of `role_` holding one TextPart.
  Message(std::string role_, std::string text) : role(std::move(role_)) {
    content.emplace_back(TextPart(std::move(text)));
  }
  /// A message of `role_` holding `content_`.
  Message(std::string role_, std::vector<ContentPart> content_)
      : role(std::move(role_)), content(std::move(content_)) {}

  std::string role;                                   ///< "system", "user", "assistant", "tool", ...
  std::vector<ContentPart> content;                   ///< the parts, in order
  std::vector<ToolCall> tool_calls;                   ///< assistant messages
  std::vector<UnparsedToolCall> unparsed_tool_calls;  ///< filled by parse_response only
  std::optional<std::string> name;                    ///< tool results: the function's name
  std::optional<std::string> tool_call_id;            ///< tool results: the call they answer
  std::optional<bool> trainable;                      ///< TrainOn::customized only

  /// The text parts, concatenated.
  std::string text() const;
  /// The thinking parts, concatenated.
  std::string thinking() const;

  /// Equal when every field is equal.
  friend bool operator==(const Message&, const Message&) = default;
};

/// Reads a conversation in the cookbook's (and OpenAI's) JSON shape: `{"messages": [...]}` or a
/// bare array of messages. A message has "role" and "content" (a string, or a list of parts
/// {"type": "text", "text"}, {"type": "thinking", "thinking"}, {"type": "image", "image":
/// base64 or a data: URI, "format"?} or OpenAI's {"type": "image_url", "image_url": {"url":
/// "data:..."}}; images go through ImagePart::from_bytes / from_data_uri, so the format is read
/// from the bytes and WebP becomes PNG; a remote http(s) URL is refused, not fetched), and
/// optionally "tool_calls" ([{"id", "function": {"name", "arguments"}}],
/// arguments as a JSON string or object), "name", "tool_call_id" and "trainable"; a
/// "reasoning_content" string is read as a leading thinking part. Throws tinker::error
/// (invalid_argument) naming the JSON path of what is wrong (e.g. "messages[2].content[0].type").
std::vector<Message> conversation_from_json(std::string_view json);

/// Which tokens of a supervised example carry weight 1 (the rest have 0).
enum class TrainOn {
  last_assistant_message,        ///< the final message, which must be the assistant's
  last_assistant_turn,           ///< assistant messages after the last user message
  all_assistant_messages,        ///< every assistant message's output
  all_messages,                  ///< every message's output (role headers excluded)
  all_tokens,                    ///< everything, headers included
  all_user_and_system_messages,  ///< user and system messages' output
  customized,                    ///< each message's `trainable` flag (required on every message)
};

/// The cookbook's names: "last_assistant_message", ..., "customized".
const char* to_string(TrainOn what) noexcept;
/// Inverse of to_string. Throws tinker::error (invalid_argument) listing the known names.
TrainOn train_on_from_string(std::string_view name);

/// How parse_response found the end of the message.
enum class ParseTermination {
  stop_sequence,  ///< the family's end-of-turn marker
  eos,            ///< the tokenizer's end-of-sequence token (where distinct from the marker)
  malformed,      ///< no end marker (cut off by max_tokens) or unreadable structure
};
/// "stop_sequence", "eos" or "malformed".
const char* to_string(ParseTermination termination) noexcept;

/// What Renderer::parse_response read.
class ParsedResponse {
 public:
  Message message;                                             ///< best effort even when malformed
  ParseTermination termination = ParseTermination::malformed;  ///< how the message ended
};

/// A conversation as tokens with a weight per token (1: trained on, 0: context only).
class SupervisedExample {
 public:
  ModelInput model_input;      ///< the whole conversation's tokens
  std::vector<float> weights;  ///< one per token of model_input

  /// The next-token training datum of the first `max_length` positions (all when not given), as
  /// the cookbook's datum_from_model_input_weights makes it: input positions [0, n-1) (image
  /// chunks kept whole, the last text chunk one token shorter), `target_tokens` and `weights`
  /// for positions [1, n), where a position inside an image has target 0 and weight 0.
  /// `max_length` cuts text anywhere but never splits an image: an image it would cut is dropped
  /// whole, and so is an image left at the end (nothing follows it to predict). Throws
  /// tinker::error (invalid_argument) when fewer than two positions remain, or the weights do
  /// not match ModelInput::length().
  Datum to_datum(std::optional<std::size_t> max_length = std::nullopt) const;
};

/// Renders conversations in one chat format. Immutable after construction and safe to share
/// between threads. Create one with `make_renderer`.
///
/// To add a family, derive from Renderer and implement name(), stop_sequences(),
/// parse_response() and render_message(); override the protected extension points where the
/// family's whole-conversation format is not the concatenation of its messages.
class Renderer {
 public:
  /// A renderer over `tokenizer`. Throws tinker::error (invalid_argument) for a null pointer.
  explicit Renderer(std::shared_ptr<const Tokenizer> tokenizer);
  /// Virtual: families derive from Renderer.
  virtual ~Renderer();
  /// Not copyable (shared through pointers).
  Renderer(const Renderer&) = delete;
  /// Not copyable.
  Renderer& operator=(const Renderer&) = delete;

  /// The family's name, as make_renderer takes it.
  virtual std::string_view name() const noexcept = 0;

  /// The prompt for sampling the next message of `role` after `messages`, optionally with the
  /// start of its text (`prefill`) already written. Throws tinker::error (invalid_argument)
  /// naming the message index (and part) that this family cannot render.
  ModelInput build_generation_prompt(std::span<const Message> messages, std::string_view role = "assistant",
                                     std::optional<std::string_view> prefill = std::nullopt) const;

  /// The conversation as training tokens and weights. Throws tinker::error (invalid_argument)
  /// for an empty conversation, one that does not end on an assistant message when training on
  /// the last assistant message or turn, a missing `trainable` flag under TrainOn::customized,
  /// and what build_generation_prompt refuses.
  SupervisedExample build_supervised_example(std::span<const Message> messages,
                                             TrainOn train_on = TrainOn::last_assistant_message) const;

  /// What to pass as SamplingParams::stop when sampling from build_generation_prompt: token ids
  /// for most families, strings for role_colon.
  virtual StopCondition stop_sequences() const = 0;

  /// The sampled tokens as an assistant message. Never throws on any token sequence: what
  /// cannot be read is reported as ParseTermination::malformed (and unreadable tool calls as
  /// `unparsed_tool_calls`).
  virtual ParsedResponse parse_response(std::span<const TokenId> tokens) const = 0;

  /// The messages that declare `tools` to the model (with `system_prompt`), to put before the
  /// conversation: a system message holding Qwen's `<tools>` block, Kimi's "tool_declare"
  /// message, Harmony's `namespace functions`, and so on. Throws tinker::error
  /// (invalid_argument) for a family without a tool format, or a ToolSpec whose parameters are
  /// not a JSON object (naming it).
  virtual std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                                     std::string_view system_prompt = {}) const;

  /// Whether the prompt after turn k is always a prefix of the tokens after turn k+1, so a
  /// multi-turn trajectory can be trained as one sequence.
  virtual bool has_extension_property() const noexcept { return false; }

  /// The tokenizer it renders with.
  const Tokenizer& tokenizer() const noexcept { return *tokenizer_; }
  /// The tokenizer it renders with, as shared.
  const std::shared_ptr<const Tokenizer>& shared_tokenizer() const noexcept { return tokenizer_; }

 protected:
  /// Where a message sits in the conversation being rendered.
  class RenderContext {
   public:
    std::size_t index = 0;                       ///< the message's index in the conversation
    bool is_last = false;                        ///< it is the conversation's last message
    const Message* previous = nullptr;           ///< the message before it; null for the first
    const Message* next = nullptr;               ///< the message after it; null for the last
    std::optional<std::size_t> last_user_index;  ///< empty: no user message
    bool in_last_assistant_turn = false;         ///< at or after the first message after the last user message
  };

  /// One message's tokens split for loss masking: `header` (role markup, never trained except
  /// under all_tokens), `output` (what the model writes, end-of-turn marker included) and
  /// `stop_overlap` (tokens shared by the stop sequence and the next header; appended after the
  /// last message of a supervised example only, as role_colon needs).
  class RenderedMessage {
   public:
    std::vector<TokenId> header;          ///< role markup
    std::vector<ModelInputChunk> output;  ///< what the model writes, end-of-turn marker included
    std::vector<TokenId> stop_overlap;    ///< tokens shared by the stop sequence and the next header
  };

  /// The family's format for one message. Throws tinker::error (invalid_argument) naming
  /// `context.index` and the part for content it cannot render.
  virtual RenderedMessage render_message(const Message& message, const RenderContext& context) const = 0;

  /// Tokens before the first message (e.g. Llama 3's <|begin_of_text|>).
  virtual std::vector<TokenId> bos_tokens() const { return {}; }

  /// The header that opens a new message of `role` at the end of a generation prompt. The
  /// default renders an empty message of that role and keeps its header.
  virtual std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const;

  /// Extension points for families whose whole-conversation format is not the concatenation of
  /// its messages (Qwen3 strips reasoning from history, gpt-oss adds a system message). The
  /// defaults assemble bos_tokens() + render_message of each message (+ generation_header).
  ///@{
  virtual ModelInput do_build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                                std::optional<std::string_view> prefill) const;
  virtual SupervisedExample do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const;
  ///@}

  /// Whether `message`'s output carries weight under `train_on`.
  virtual bool output_is_trained(const Message& message, const RenderContext& context, TrainOn train_on) const;

  /// Whether the generation prompt closes the think block, which tells the model not to reason
  /// (the `*_disable_thinking` families). The default do_build_supervised_example then refuses a
  /// produced turn whose tokens do not start with that prompt: the turn reasoned anyway.
  virtual bool disables_thinking() const noexcept { return false; }

  /// The context of message `index` of `messages`.
  static RenderContext context_of(std::span<const Message> messages, std::size_t index);

  /// `tokenizer().encode(text, false)`, for the families' markup and text.
  std::vector<TokenId> encode(std::string_view text) const;

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
};

/// Makes a renderer over a tokenizer: what register_renderer takes.
using RendererFactory = std::function<std::unique_ptr<Renderer>(std::shared_ptr<const Tokenizer>)>;

/// The names make_renderer knows: the built-in families in the order of `doc/renderers.md`, then
/// the registered ones in the order they were registered.
std::vector<std::string> renderer_names();

/// A renderer of family `name` over `tokenizer`. Throws tinker::error (invalid_argument) for an
/// unknown name (listing the known ones), a family tinker-cpp cannot render (`tml_v0`: the
/// message says why and what to do instead) or a tokenizer that lacks the family's special
/// tokens (naming the token).
std::unique_ptr<Renderer> make_renderer(std::string_view name, std::shared_ptr<const Tokenizer> tokenizer);

/// Adds family `name`, made by `factory`, to make_renderer (and so to `tinker render
/// --renderer`), as the cookbook's register_renderer does. Registering a name again replaces
/// the earlier factory. Throws tinker::error (invalid_argument) for an empty name, a null factory
/// or a built-in family's name. Thread-safe.
void register_renderer(std::string name, RendererFactory factory);
/// Removes a registered family; false when `name` was not registered. Thread-safe.
bool unregister_renderer(std::string_view name);

/// The renderer names that suit `model_name` (a service name such as "Qwen/Qwen3.5-9B"; a
/// ":peft:<context length>" or other ":suffix" is ignored), best first: the cookbook's list for
/// every model it knows, `role_colon` for base models. Throws tinker::error (invalid_argument)
/// only for a model it has never heard of.
std::vector<std::string> recommended_renderers(std::string_view model_name);
/// recommended_renderers(model_name).front().
std::string recommended_renderer(std::string_view model_name);

}  // namespace tinker::renderers
