// The Renderer base: validation of conversations, and the default assembly of a conversation
// from its rendered messages that most families use unchanged.
#include "renderers/model_input_building.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace tinker::renderers {
namespace {

using detail::append_chunk;
using detail::append_tokens;
using detail::prefix_positions;

constexpr std::array<std::pair<TrainOn, const char*>, 7> train_on_names{{
    {TrainOn::last_assistant_message, "last_assistant_message"},
    {TrainOn::last_assistant_turn, "last_assistant_turn"},
    {TrainOn::all_assistant_messages, "all_assistant_messages"},
    {TrainOn::all_messages, "all_messages"},
    {TrainOn::all_tokens, "all_tokens"},
    {TrainOn::all_user_and_system_messages, "all_user_and_system_messages"},
    {TrainOn::customized, "customized"},
}};

// Roles some family renders; a family refuses the ones it does not know itself. "harmony_system"
// is gpt-oss's own system message (a "system" message is the user's, which Harmony writes as the
// developer's instructions), as its create_conversation_prefix_with_tools makes it.
constexpr std::array<std::string_view, 7> known_roles{"system",    "user",         "assistant",     "tool",
                                                      "developer", "tool_declare", "harmony_system"};

[[noreturn]] void invalid(std::string message) {
  throw error(errc::invalid_argument, std::move(message));
}

std::string message_path(std::size_t index) {
  return "messages[" + std::to_string(index) + "]";
}

void check_roles(std::span<const Message> messages) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (std::find(known_roles.begin(), known_roles.end(), role) == known_roles.end()) {
      invalid(message_path(i) + ".role: unknown role \"" + role +
              "\" (known: system, user, assistant, tool, developer, tool_declare, harmony_system)");
    }
  }
}

// What build_supervised_example needs beyond known roles: something to train on, and the
// `trainable` flags exactly when (and everywhere) TrainOn::customized reads them.
void check_supervised(std::span<const Message> messages, TrainOn train_on) {
  if (messages.empty()) invalid("build_supervised_example: the conversation is empty");
  const bool needs_assistant_last =
      train_on == TrainOn::last_assistant_message || train_on == TrainOn::last_assistant_turn;
  if (needs_assistant_last && messages.back().role != "assistant") {
    invalid("build_supervised_example: training on the " + std::string(to_string(train_on)) +
            " needs the conversation to end on an assistant message, but " + message_path(messages.size() - 1) +
            " is a \"" + messages.back().role + "\" message");
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const bool has_flag = messages[i].trainable.has_value();
    if (train_on == TrainOn::customized && !has_flag) {
      invalid(message_path(i) + ".trainable: required when training on \"customized\"");
    }
    if (train_on != TrainOn::customized && has_flag) {
      invalid(message_path(i) + ".trainable: only read when training on \"customized\" (training on \"" +
              to_string(train_on) + "\")");
    }
  }
}

// A model input and its weights, built side by side.
class WeightedInput {
 public:
  void add_tokens(std::span<const TokenId> tokens, float weight) {
    append_tokens(input_, tokens);
    weights_.insert(weights_.end(), tokens.size(), weight);
  }
  void add_chunk(const ModelInputChunk& chunk, float weight) {
    append_chunk(input_, chunk);
    weights_.insert(weights_.end(), static_cast<std::size_t>(chunk_length(chunk)), weight);
  }
  SupervisedExample finish() && { return SupervisedExample{std::move(input_), std::move(weights_)}; }

 private:
  ModelInput input_;
  std::vector<float> weights_;
};

// Cuts `chunks` to at most `max_length` positions from the end, as the cookbook's
// datum_from_model_input_weights does: a text chunk may be cut anywhere, an image (or any chunk
// that is not text) is never split but dropped whole, with everything after it.
void truncate_chunks(std::vector<ModelInputChunk>& chunks, std::size_t max_length) {
  std::uint64_t total = 0;
  for (const ModelInputChunk& chunk : chunks) total += static_cast<std::uint64_t>(chunk_length(chunk));
  while (total > max_length && !chunks.empty()) {
    const std::uint64_t overflow = total - max_length;
    auto* text = std::get_if<EncodedTextChunk>(&chunks.back());
    if (text != nullptr && overflow < text->tokens.size()) {
      text->tokens.resize(text->tokens.size() - static_cast<std::size_t>(overflow));
      return;
    }
    total -= static_cast<std::uint64_t>(chunk_length(chunks.back()));
    chunks.pop_back();
  }
}

std::optional<std::size_t> last_user_index(std::span<const Message> messages) {
  for (std::size_t i = messages.size(); i > 0; --i) {
    if (messages[i - 1].role == "user") return i - 1;
  }
  return std::nullopt;
}

// The index of the message the generation prompt stops before, for the modes that train what
// sampling would produce; empty for the others.
std::optional<std::size_t> generated_message_index(std::span<const Message> messages, TrainOn train_on) {
  std::size_t boundary = 0;
  if (train_on == TrainOn::last_assistant_message) {
    boundary = messages.size() - 1;
  } else if (train_on == TrainOn::last_assistant_turn) {
    const auto user = last_user_index(messages);
    boundary = user ? *user + 1 : 0;
  } else {
    return std::nullopt;
  }
  if (boundary >= messages.size() || messages[boundary].role != "assistant") return std::nullopt;
  return boundary;
}

}  // namespace

std::string Message::text() const {
  std::string joined;
  for (const ContentPart& part : content) {
    if (const auto* text_part = std::get_if<TextPart>(&part)) joined += text_part->text;
  }
  return joined;
}

std::string Message::thinking() const {
  std::string joined;
  for (const ContentPart& part : content) {
    if (const auto* thinking_part = std::get_if<ThinkingPart>(&part)) joined += thinking_part->thinking;
  }
  return joined;
}

const char* to_string(TrainOn what) noexcept {
  for (const auto& [value, name] : train_on_names) {
    if (value == what) return name;
  }
  return "unknown";
}

TrainOn train_on_from_string(std::string_view name) {
  std::string known;
  for (const auto& [value, value_name] : train_on_names) {
    if (name == value_name) return value;
    known += known.empty() ? value_name : std::string(", ") + value_name;
  }
  invalid("unknown train-on mode \"" + std::string(name) + "\" (known: " + known + ")");
}

const char* to_string(ParseTermination termination) noexcept {
  switch (termination) {
    case ParseTermination::stop_sequence: return "stop_sequence";
    case ParseTermination::eos: return "eos";
    case ParseTermination::malformed: return "malformed";
  }
  return "unknown";
}

Datum SupervisedExample::to_datum(std::optional<std::size_t> max_length) const {
  const std::int64_t length = model_input.length();
  if (weights.size() != static_cast<std::size_t>(length)) {
    invalid("SupervisedExample::to_datum: " + std::to_string(weights.size()) + " weights for " +
            std::to_string(length) + " tokens");
  }
  std::vector<ModelInputChunk> chunks = model_input.chunks;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (chunk_length(chunks[i]) < 0) {
      invalid("SupervisedExample::to_datum: chunks[" + std::to_string(i) + "]: negative length");
    }
  }
  if (max_length) truncate_chunks(chunks, *max_length);
  // Empty text chunks and images at the end have nothing to predict after them (and a trailing
  // one would keep the shift below from dropping the last real token).
  std::erase_if(chunks, [](const ModelInputChunk& chunk) {
    const auto* text = std::get_if<EncodedTextChunk>(&chunk);
    return text != nullptr && text->tokens.empty();
  });
  while (!chunks.empty() && !std::holds_alternative<EncodedTextChunk>(chunks.back())) chunks.pop_back();

  // Position p of the sequence is the target of input position p-1. An image's positions are
  // read, never predicted: their targets are 0 with weight 0 (whatever weight the renderer gave
  // the image's message).
  std::vector<TokenId> targets;
  std::vector<float> target_weights;
  std::size_t position = 0;
  const auto add_target = [&](TokenId token, float weight) {
    if (position++ == 0) return;
    targets.push_back(token);
    target_weights.push_back(weight);
  };
  for (const ModelInputChunk& chunk : chunks) {
    if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
      for (const TokenId token : text->tokens) add_target(token, weights[position]);
    } else {
      for (std::int64_t i = 0; i < chunk_length(chunk); ++i) add_target(0, 0.0f);
    }
  }
  if (position < 2) {
    invalid("SupervisedExample::to_datum: " + std::to_string(position) + " token(s)" +
            (max_length ? " after max_length " + std::to_string(*max_length) : std::string()) +
            "; a training datum needs at least two");
  }
  // The input is every position but the last, which is a text token: the last chunk loses it.
  auto& last = std::get<EncodedTextChunk>(chunks.back());
  last.tokens.pop_back();
  if (last.tokens.empty()) chunks.pop_back();
  LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)},
                      {"weights", TensorData::from_floats(target_weights)}};
  return Datum(ModelInput(std::move(chunks)), std::move(inputs));
}

Renderer::Renderer(std::shared_ptr<const Tokenizer> tokenizer) : tokenizer_(std::move(tokenizer)) {
  if (tokenizer_ == nullptr) invalid("a renderer needs a tokenizer (got a null pointer)");
}

Renderer::~Renderer() = default;

ModelInput Renderer::build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                             std::optional<std::string_view> prefill) const {
  check_roles(messages);
  if (std::find(known_roles.begin(), known_roles.end(), role) == known_roles.end()) {
    invalid("build_generation_prompt: unknown role \"" + std::string(role) + "\" to generate");
  }
  return do_build_generation_prompt(messages, role, prefill);
}

SupervisedExample Renderer::build_supervised_example(std::span<const Message> messages, TrainOn train_on) const {
  check_roles(messages);
  check_supervised(messages, train_on);
  return do_build_supervised_example(messages, train_on);
}

Renderer::RenderContext Renderer::context_of(std::span<const Message> messages, std::size_t index) {
  RenderContext context;
  context.index = index;
  context.is_last = index + 1 == messages.size();
  context.previous = index > 0 && index <= messages.size() ? &messages[index - 1] : nullptr;
  context.next = index + 1 < messages.size() ? &messages[index + 1] : nullptr;
  context.last_user_index = last_user_index(messages);
  const std::size_t turn_start = context.last_user_index ? *context.last_user_index + 1 : 0;
  context.in_last_assistant_turn = index >= turn_start;
  return context;
}

std::vector<Message> Renderer::create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                                     std::string_view system_prompt) const {
  (void)tools;
  (void)system_prompt;
  invalid("renderer \"" + std::string(name()) + "\" has no format for declaring tools");
}

std::vector<TokenId> Renderer::encode(std::string_view text) const {
  return tokenizer_->encode(text, false);
}

std::vector<TokenId> Renderer::generation_header(std::string_view role, const RenderContext& context) const {
  return render_message(Message(std::string(role), std::string()), context).header;
}

ModelInput Renderer::do_build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                                std::optional<std::string_view> prefill) const {
  ModelInput prompt;
  append_tokens(prompt, bos_tokens());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const RenderedMessage rendered = render_message(messages[i], context_of(messages, i));
    append_tokens(prompt, rendered.header);
    for (const ModelInputChunk& chunk : rendered.output) append_chunk(prompt, chunk);
  }
  // The header of the message to be generated sits one past the end, after the last message.
  RenderContext next = context_of(messages, messages.size());
  next.is_last = true;
  next.in_last_assistant_turn = true;
  append_tokens(prompt, generation_header(role, next));
  if (prefill && !prefill->empty()) append_tokens(prompt, encode(*prefill));
  return prompt;
}

SupervisedExample Renderer::do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const {
  WeightedInput example;
  example.add_tokens(bos_tokens(), 0.0f);
  const float header_weight = train_on == TrainOn::all_tokens ? 1.0f : 0.0f;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const RenderContext context = context_of(messages, i);
    const RenderedMessage rendered = render_message(messages[i], context);
    const float output_weight = output_is_trained(messages[i], context, train_on) ? 1.0f : 0.0f;
    example.add_tokens(rendered.header, header_weight);
    for (const ModelInputChunk& chunk : rendered.output) example.add_chunk(chunk, output_weight);
    if (context.is_last) example.add_tokens(rendered.stop_overlap, output_weight);
  }
  SupervisedExample result = std::move(example).finish();

  // A generation prompt that ends inside the produced message (a prefilled "<think>") would
  // otherwise train the model to write tokens it is always given: withhold weight from all of
  // the prompt that sampling would have supplied.
  const auto generated = generated_message_index(messages, train_on);
  if (!generated) return result;
  const ModelInput prompt = do_build_generation_prompt(messages.first(*generated), "assistant", {});
  if (const auto length = prefix_positions(prompt, result.model_input)) {
    std::fill_n(result.weights.begin(), *length, 0.0f);
  } else if (disables_thinking()) {
    // The prompt closes the think block and this turn does not start there: it reasoned.
    invalid(message_path(*generated) + ": " + std::string(name()) +
            " has thinking turned off (its generation prompt closes the think block, telling the model not "
            "to reason), but this produced turn reasons; training on it would teach the model to reason after "
            "being told not to. Use the family's thinking renderer, or remove the reasoning");
  }
  return result;
}

bool Renderer::output_is_trained(const Message& message, const RenderContext& context, TrainOn train_on) const {
  const bool is_assistant = message.role == "assistant";
  switch (train_on) {
    case TrainOn::last_assistant_message: return context.is_last && is_assistant;
    case TrainOn::last_assistant_turn: return is_assistant && context.in_last_assistant_turn;
    case TrainOn::all_assistant_messages: return is_assistant;
    case TrainOn::all_messages:
    case TrainOn::all_tokens: return true;
    case TrainOn::all_user_and_system_messages: return message.role == "user" || message.role == "system";
    case TrainOn::customized: return message.trainable.value_or(false);
  }
  return false;
}

}  // namespace tinker::renderers
