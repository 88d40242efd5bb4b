// Decoders of tokenizer.json: token strings -> text, as Hugging Face's decode_chain steps (each
// step rewrites the list of token strings; the results are concatenated at the end).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tinker::tokenizer_detail::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
  /// True for the ByteLevel decoder (the tokenizer decodes byte-level ids without strings).
  virtual bool is_byte_level() const noexcept { return false; }
};

enum class MetaspacePrependScheme { always, first, never };

/// Byte-level characters back to bytes (a token with any other character is kept as it is);
/// the bytes are joined into one string, invalid UTF-8 becoming U+FFFD.
std::unique_ptr<Decoder> make_byte_level_decoder();
/// `replacement` back to spaces; in the first token it is dropped unless the scheme is "never".
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, MetaspacePrependScheme scheme);
/// Runs of <0xNN> tokens back to their bytes (one U+FFFD per byte when they are not UTF-8).
std::unique_ptr<Decoder> make_byte_fallback_decoder();
/// Joins every token into one.
std::unique_ptr<Decoder> make_fuse_decoder();
/// Removes up to `start` leading and `stop` trailing `content` characters from each token.
std::unique_ptr<Decoder> make_strip_decoder(std::string content, std::size_t start, std::size_t stop);
/// Replaces every match of `pattern` (a literal, or a regex when `is_regex`) by `content`.
std::unique_ptr<Decoder> make_replace_decoder(std::string pattern, bool is_regex, std::string content);
/// WordPiece: tokens after the first lose `prefix`, or get a space in front when they lack it;
/// `cleanup` removes the spaces tokenization put before punctuation and contractions.
std::unique_ptr<Decoder> make_word_piece_decoder(std::string prefix, bool cleanup);
/// BPE end-of-word suffix: a space in every token but the last, nothing in the last.
std::unique_ptr<Decoder> make_bpe_decoder(std::string suffix);
std::unique_ptr<Decoder> make_sequence_decoder(std::vector<std::unique_ptr<Decoder>> steps);

}  // namespace tinker::tokenizer_detail::hf
