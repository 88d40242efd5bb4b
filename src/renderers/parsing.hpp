// Helpers the renderer families share: checking that a message holds only what a family can
// write, finding where sampled tokens end, splitting sampled text into reasoning / tool-call
// blocks, and reading a tool call's JSON. Family-neutral: the markers are parameters.
#pragma once

#include <tinker/renderers.hpp>

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tinker::renderers::detail {

// ---- Rendering checks ---------------------------------------------------------------------

/// The id of a special token the family needs. Throws tinker::error (invalid_argument) naming the
/// family and the token when the tokenizer lacks it (or it does not encode to that one id).
TokenId require_token(const Tokenizer& tokenizer, std::string_view token, std::string_view family);

/// Throws tinker::error (invalid_argument) naming messages[index].role unless `message.role` is
/// one of `roles`.
void require_role(const Message& message, std::size_t index, std::initializer_list<std::string_view> roles,
                  std::string_view family);

/// Throws tinker::error (invalid_argument) naming messages[index].content[part] for the first
/// image part, and for the first thinking part unless `thinking_allowed`.
void require_text_parts(const Message& message, std::size_t index, std::string_view family, bool thinking_allowed);

/// Throws tinker::error (invalid_argument) naming messages[index].tool_calls when the message has
/// tool calls; `why` ends the sentence ("... cannot render tool calls: <why>").
void require_no_tool_calls(const Message& message, std::size_t index, std::string_view family, std::string_view why);

// ---- Text ---------------------------------------------------------------------------------

/// `text` without leading / trailing '\n' (Jinja's strip('\n'), lstrip('\n'), rstrip('\n')).
std::string_view strip_newlines(std::string_view text) noexcept;
std::string_view lstrip_newlines(std::string_view text) noexcept;
std::string_view rstrip_newlines(std::string_view text) noexcept;
/// `text` without leading / trailing ASCII whitespace (Jinja's `trim` on ASCII text).
std::string_view trim_whitespace(std::string_view text) noexcept;

// ---- Where a response ends ----------------------------------------------------------------

/// Sampled tokens cut at the family's end-of-turn token.
class StopSplit {
 public:
  std::span<const TokenId> body;  ///< the tokens before the end marker (all of them when none)
  ParseTermination termination = ParseTermination::malformed;
};

/// Cuts `tokens` at the first `stop` token: stop_sequence when there is exactly one. Without a
/// stop token, a final `eos` token (when given and distinct from `stop`) is a clean eos end and
/// is left out of the body; anything else, and a second stop token, is malformed.
StopSplit split_at_stop_token(std::span<const TokenId> tokens, TokenId stop, std::optional<TokenId> eos);

/// Sampled tokens as text.
class DecodedText {
 public:
  std::string text;
  bool all_ids_valid = true;  ///< false: ids outside the vocabulary were left out
};

/// `tokenizer.decode(tokens)` that never throws: ids outside the vocabulary are left out and
/// reported, so the caller can call the response malformed.
DecodedText decode_sampled(const Tokenizer& tokenizer, std::span<const TokenId> tokens);

// ---- Blocks in sampled text ---------------------------------------------------------------

enum class BlockKind { text, thinking, tool_call };

/// The markers of one kind of block, e.g. {"<think>", "</think>", BlockKind::thinking}.
class BlockMarkers {
 public:
  std::string_view open;
  std::string_view close;
  BlockKind kind = BlockKind::text;
};

/// A piece of sampled text: plain text between blocks, or a block's inside.
class TextBlock {
 public:
  BlockKind kind = BlockKind::text;
  std::string_view inner;  ///< the text between the markers (all of it for plain text)
  std::string_view raw;    ///< with the markers
  /// For a plain-text piece: it starts with the open marker of `unterminated` but has no close
  /// marker (a block cut off or left open); the piece runs to the end of the text.
  std::optional<BlockKind> unterminated;
};

/// Splits `text` at the blocks given by `markers`, in order: the earliest open marker wins, its
/// block ends at the first close marker after it. Blocks do not nest. Empty plain-text pieces
/// are left out. Never throws.
std::vector<TextBlock> split_blocks(std::string_view text, std::span<const BlockMarkers> markers);

// ---- Tool calls ---------------------------------------------------------------------------

/// Reads a tool call written as a JSON object {"name": string, "arguments": object, "id": string
/// (optional)} with surrounding whitespace allowed. `arguments` keeps the exact text written in
/// `json_text` (so a call renders back the same); an UnparsedToolCall (with `raw_text` and the
/// reason) when it is not such an object. Never throws.
std::variant<ToolCall, UnparsedToolCall> read_tool_call_json(std::string_view json_text, std::string_view raw_text);

/// Appends what a reader gave to `message`: a ToolCall to `tool_calls`, an UnparsedToolCall to
/// `unparsed_tool_calls`.
void add_tool_call(Message& message, std::variant<ToolCall, UnparsedToolCall> call);

/// Why `json_text` is not one JSON object (empty when it is), for families that write the name
/// outside the JSON and only the arguments inside it. Never throws.
std::optional<std::string> json_object_error(std::string_view json_text);

/// An UnparsedToolCall for a block opened with `open` and never closed.
UnparsedToolCall unterminated_tool_call(std::string_view raw_text, std::string_view open, std::string_view close);

}  // namespace tinker::renderers::detail
