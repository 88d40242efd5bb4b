// A small deterministic byte-level BPE trainer, and the Hugging Face files of tinker-local's
// byte-level BPE tokenizers (`tokenizer.json` shaped like Qwen3's, `tokenizer_config.json`).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::local::detail {

/// The split pattern of the byte-level BPE tokenizer: Qwen3's (GPT-4's with single digits).
inline constexpr std::string_view bpe_split_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// The special tokens, added after the learned vocabulary in this order (Qwen's names).
inline constexpr std::string_view bpe_endoftext = "<|endoftext|>";
inline constexpr std::string_view bpe_im_start = "<|im_start|>";
inline constexpr std::string_view bpe_im_end = "<|im_end|>";

/// The vision tokenizer's further special tokens, after the three above: the rest of the tokens
/// Qwen3 and Qwen3.5 add to their vocabulary, in Qwen's order (so in Qwen's id order too, offset).
/// Qwen3.5's chat format needs the thinking, vision and tool ones; the rest are there so the
/// markup a real Qwen tokenizer would keep whole is kept whole here as well.
// clang-format off
inline constexpr std::string_view bpe_vl_added_tokens[] = {
    "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
    "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    "<tool_call>", "</tool_call>",
    "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
    "<tool_response>", "</tool_response>", "<think>", "</think>"};
// clang-format on

/// Whether an added token is marked "special" in `tokenizer.json`, as Qwen marks it: the chat,
/// vision and padding tokens are; the tool, fill-in-the-middle, repository and thinking markup is
/// not (so a decode that skips special tokens keeps it, as with Qwen's tokenizer).
bool is_marked_special(std::string_view added_token) noexcept;

/// A trained byte-level BPE model. Token texts are raw bytes (not yet in the byte-level alphabet).
class ByteLevelBpe {
 public:
  std::vector<std::string> tokens;                          ///< id -> bytes; the first 256 are single bytes
  std::vector<std::pair<std::string, std::string>> merges;  ///< in rank order
  std::vector<std::string> special_tokens;                  ///< ids tokens.size(), tokens.size() + 1, ...
  int vocab_size() const noexcept { return static_cast<int>(tokens.size() + special_tokens.size()); }
};

/// Trains on `corpus` (UTF-8) split by `bpe_split_pattern`: 256 byte tokens (in GPT-2's
/// bytes_to_unicode order), then merges of the most frequent adjacent pair (ties: the pair whose
/// left, then right, token bytes sort first) until the learned tokens plus `special_tokens`
/// number `vocab_size`, or no pair is left. The same inputs always give the same result.
ByteLevelBpe train_byte_level_bpe(std::string_view corpus, int vocab_size, std::span<const std::string> special_tokens);

/// tinker-local's tokenizer: 1024 ids trained on `bundled_corpus()`, specials <|endoftext|>,
/// <|im_start|>, <|im_end|> last. Trained at most once per process.
const ByteLevelBpe& tiny_byte_level_bpe();

/// How many times `tiny_byte_level_bpe()` actually trained in this process.
int tiny_bpe_training_runs() noexcept;

/// tinker-local's vision tokenizer: `tiny_byte_level_bpe()` (the same merges, so text encodes to
/// the same ids) with `bpe_vl_added_tokens` after its three specials: 1047 ids.
const ByteLevelBpe& tiny_byte_level_bpe_vl();

/// SHA-256 (hex) of what the BPE snapshot is made from (trainer version, options, corpus).
std::string tiny_bpe_training_fingerprint();
/// The same for the vision tokenizer's snapshot (also covering its added tokens).
std::string tiny_bpe_vl_training_fingerprint();

/// `tokenizer.json` of `bpe` (Qwen3's shape: NFC, Split + ByteLevel, BPE with ["a","b"] merges,
/// ByteLevel post-processor and decoder, the specials as added special tokens). Byte-stable.
std::string bpe_tokenizer_json(const ByteLevelBpe& bpe);

/// `tokenizer_config.json` for `bpe_tokenizer_json`: no BOS, eos <|im_end|>, pad <|endoftext|>,
/// a ChatML chat template (whose generation prompt opens a thinking block when `bpe` has
/// <think>, as Qwen3.5's does), and `fingerprint` under "tinker_local_training_fingerprint".
std::string bpe_tokenizer_config_json(const ByteLevelBpe& bpe, std::string_view fingerprint);

/// `text` as a JSON string literal (quotes included): `"`, `\` and control characters escaped,
/// everything else (UTF-8 included) kept as is.
std::string json_string(std::string_view text);

}  // namespace tinker::local::detail
