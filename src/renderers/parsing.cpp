// Helpers shared by the renderer families (see parsing.hpp).
#include "renderers/parsing.hpp"

#include "core/wire/json_reader.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <exception>
#include <iterator>
#include <string>

namespace tinker::renderers::detail {
namespace {

[[noreturn]] void invalid(std::string message) {
  throw error(errc::invalid_argument, std::move(message));
}

std::string message_path(std::size_t index) {
  return "messages[" + std::to_string(index) + "]";
}

bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// ---- Positions in JSON text that is already known to be valid ----

std::size_t skip_space(std::string_view text, std::size_t pos) noexcept {
  while (pos < text.size() && is_ascii_space(text[pos])) ++pos;
  return pos;
}

// `pos` is at an opening quote: the position after the closing one.
std::size_t end_of_string(std::string_view text, std::size_t pos) noexcept {
  for (++pos; pos < text.size(); ++pos) {
    if (text[pos] == '\\') {
      ++pos;
    } else if (text[pos] == '"') {
      return pos + 1;
    }
  }
  return text.size();
}

std::size_t end_of_value(std::string_view text, std::size_t pos) noexcept {
  if (pos >= text.size()) return pos;
  if (text[pos] == '"') return end_of_string(text, pos);
  if (text[pos] == '{' || text[pos] == '[') {
    int depth = 0;
    while (pos < text.size()) {
      const char c = text[pos];
      if (c == '"') {
        pos = end_of_string(text, pos);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return pos + 1;
      }
      ++pos;
    }
    return pos;
  }
  while (pos < text.size() && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' && !is_ascii_space(text[pos])) {
    ++pos;
  }
  return pos;
}

// The text of the top-level member `key` of the JSON object `text` (last one wins, as in the
// DOM), when its key is written without escapes.
std::optional<std::string_view> member_text(std::string_view text, std::string_view key) {
  std::optional<std::string_view> found;
  std::size_t pos = skip_space(text, 0);
  if (pos >= text.size() || text[pos] != '{') return std::nullopt;
  pos = skip_space(text, pos + 1);
  while (pos < text.size() && text[pos] == '"') {
    const std::size_t key_end = end_of_string(text, pos);
    const std::string_view written_key = text.substr(pos + 1, key_end - pos - 2);
    pos = skip_space(text, key_end);
    if (pos >= text.size() || text[pos] != ':') return std::nullopt;
    pos = skip_space(text, pos + 1);
    const std::size_t value_end = end_of_value(text, pos);
    if (written_key == key) found = text.substr(pos, value_end - pos);
    pos = skip_space(text, value_end);
    if (pos >= text.size() || text[pos] != ',') break;
    pos = skip_space(text, pos + 1);
  }
  return found;
}

// The arguments as they were written, or (when that text cannot be singled out) re-serialized.
std::string arguments_text(std::string_view json_text, const boost::json::value& arguments) {
  if (const auto written = member_text(json_text, "arguments")) {
    try {
      if (wire::parse_json(*written) == arguments) return std::string(*written);
    } catch (const std::exception&) {
      // fall through to re-serializing
    }
  }
  std::string out;
  wire::write_value(arguments, out);
  return out;
}

std::optional<boost::json::value> parse_or_error(std::string_view json_text, std::string& error_message) {
  try {
    return wire::parse_json(json_text);
  } catch (const std::exception& e) {
    error_message = std::string("invalid JSON: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace

TokenId require_token(const Tokenizer& tokenizer, std::string_view token, std::string_view family) {
  const std::optional<TokenId> id = tokenizer.token_to_id(token);
  if (!id || tokenizer.encode(token, false) != std::vector<TokenId>{*id}) {
    invalid(std::string(family) + " renderer: the tokenizer \"" + tokenizer.id() + "\" has no special token \"" +
            std::string(token) + "\"");
  }
  return *id;
}

void require_role(const Message& message, std::size_t index, std::initializer_list<std::string_view> roles,
                  std::string_view family) {
  if (std::find(roles.begin(), roles.end(), message.role) != roles.end()) return;
  std::string known;
  for (std::string_view role : roles) known += (known.empty() ? "" : ", ") + std::string(role);
  invalid(message_path(index) + ".role: the " + std::string(family) + " renderer cannot render a \"" + message.role +
          "\" message (it knows " + known + ")");
}

void require_text_parts(const Message& message, std::size_t index, std::string_view family, bool thinking_allowed) {
  for (std::size_t part = 0; part < message.content.size(); ++part) {
    const ContentPart& content = message.content[part];
    const std::string where = message_path(index) + ".content[" + std::to_string(part) + "]: the " +
                              std::string(family) + " renderer cannot render ";
    if (std::holds_alternative<ImagePart>(content)) invalid(where + "an image part (it is text only)");
    if (!thinking_allowed && std::holds_alternative<ThinkingPart>(content)) {
      invalid(where + "a thinking part in a \"" + message.role + "\" message");
    }
  }
}

void require_no_tool_calls(const Message& message, std::size_t index, std::string_view family, std::string_view why) {
  if (message.tool_calls.empty()) return;
  invalid(message_path(index) + ".tool_calls: the " + std::string(family) + " renderer cannot render tool calls" +
          (why.empty() ? std::string() : ": " + std::string(why)));
}

std::string_view lstrip_newlines(std::string_view text) noexcept {
  const std::size_t first = text.find_first_not_of('\n');
  return first == std::string_view::npos ? std::string_view() : text.substr(first);
}

std::string_view rstrip_newlines(std::string_view text) noexcept {
  const std::size_t last = text.find_last_not_of('\n');
  return last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
}

std::string_view strip_newlines(std::string_view text) noexcept {
  return rstrip_newlines(lstrip_newlines(text));
}

std::string_view trim_whitespace(std::string_view text) noexcept {
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ascii_space(text.back())) text.remove_suffix(1);
  return text;
}

StopSplit split_at_stop_token(std::span<const TokenId> tokens, TokenId stop, std::optional<TokenId> eos) {
  const auto first = std::find(tokens.begin(), tokens.end(), stop);
  if (first != tokens.end()) {
    const auto body_size = static_cast<std::size_t>(first - tokens.begin());
    const bool another = std::find(first + 1, tokens.end(), stop) != tokens.end();
    return {tokens.first(body_size), another ? ParseTermination::malformed : ParseTermination::stop_sequence};
  }
  if (eos && *eos != stop && !tokens.empty() && tokens.back() == *eos) {
    return {tokens.first(tokens.size() - 1), ParseTermination::eos};
  }
  return {tokens, ParseTermination::malformed};
}

DecodedText decode_sampled(const Tokenizer& tokenizer, std::span<const TokenId> tokens) {
  const auto in_vocabulary = [&tokenizer](TokenId id) { return id >= 0 && id < tokenizer.vocab_size(); };
  DecodedText decoded;
  if (std::all_of(tokens.begin(), tokens.end(), in_vocabulary)) {
    decoded.text = tokenizer.decode(tokens);
    return decoded;
  }
  std::vector<TokenId> valid;
  std::copy_if(tokens.begin(), tokens.end(), std::back_inserter(valid), in_vocabulary);
  decoded.text = tokenizer.decode(valid);
  decoded.all_ids_valid = false;
  return decoded;
}

std::vector<TextBlock> split_blocks(std::string_view text, std::span<const BlockMarkers> markers) {
  std::vector<TextBlock> blocks;
  auto add_text = [&blocks](std::string_view piece) {
    if (!piece.empty()) blocks.push_back(TextBlock{BlockKind::text, piece, piece, std::nullopt});
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    // The earliest open marker from here on.
    std::size_t open_at = std::string_view::npos;
    const BlockMarkers* opened = nullptr;
    for (const BlockMarkers& marker : markers) {
      if (marker.open.empty()) continue;
      const std::size_t at = text.find(marker.open, pos);
      if (at < open_at) {
        open_at = at;
        opened = &marker;
      }
    }
    if (opened == nullptr) break;
    add_text(text.substr(pos, open_at - pos));
    const std::size_t inner_at = open_at + opened->open.size();
    const std::size_t close_at = text.find(opened->close, inner_at);
    if (opened->close.empty() || close_at == std::string_view::npos) {
      const std::string_view rest = text.substr(open_at);
      blocks.push_back(TextBlock{BlockKind::text, rest, rest, opened->kind});
      return blocks;
    }
    const std::size_t end = close_at + opened->close.size();
    blocks.push_back(TextBlock{opened->kind, text.substr(inner_at, close_at - inner_at),
                               text.substr(open_at, end - open_at), std::nullopt});
    pos = end;
  }
  add_text(text.substr(std::min(pos, text.size())));
  return blocks;
}

void add_tool_call(Message& message, std::variant<ToolCall, UnparsedToolCall> call) {
  if (auto* read = std::get_if<ToolCall>(&call)) {
    message.tool_calls.push_back(std::move(*read));
  } else {
    message.unparsed_tool_calls.push_back(std::get<UnparsedToolCall>(std::move(call)));
  }
}

std::variant<ToolCall, UnparsedToolCall> read_tool_call_json(std::string_view json_text, std::string_view raw_text) {
  const std::string_view trimmed = trim_whitespace(json_text);
  auto unparsed = [raw_text](std::string why) { return UnparsedToolCall(std::string(raw_text), std::move(why)); };
  std::string parse_error;
  const std::optional<boost::json::value> document = parse_or_error(trimmed, parse_error);
  if (!document) return unparsed(parse_error);
  if (!document->is_object()) return unparsed("the tool call is not a JSON object");
  const boost::json::object& call = document->get_object();
  const boost::json::value* name = call.if_contains("name");
  const boost::json::value* arguments = call.if_contains("arguments");
  if (name == nullptr || !name->is_string()) return unparsed("missing or invalid \"name\" (a string)");
  if (arguments == nullptr || !arguments->is_object()) {
    return unparsed("missing or invalid \"arguments\" (a JSON object)");
  }
  ToolCall tool_call(std::string(name->get_string()), arguments_text(trimmed, *arguments));
  if (const boost::json::value* id = call.if_contains("id"); id != nullptr && id->is_string()) {
    tool_call.id = std::string(id->get_string());
  }
  return tool_call;
}

std::optional<std::string> json_object_error(std::string_view json_text) {
  std::string parse_error;
  const std::optional<boost::json::value> document = parse_or_error(trim_whitespace(json_text), parse_error);
  if (!document) return parse_error;
  if (!document->is_object()) return std::string("not a JSON object");
  return std::nullopt;
}

UnparsedToolCall unterminated_tool_call(std::string_view raw_text, std::string_view open, std::string_view close) {
  return UnparsedToolCall(std::string(raw_text), "unterminated tool block: \"" + std::string(open) +
                                                     "\" opened without a matching \"" + std::string(close) + "\"");
}

}  // namespace tinker::renderers::detail
