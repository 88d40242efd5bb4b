// Pre-tokenizers and normalizers of the tokenizer.json format, as plain C++ objects built from their
// parameters (the JSON loader in src/text/hf/ reads the parameters). Immutable once built and
// safe to use from many threads at once.
#pragma once

#include "text/pieces.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail {

// ---- Normalizers (whole text in, whole text out) ---------------------------------------------

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  /// Rewrites `text` (valid UTF-8 in, valid UTF-8 out).
  virtual void normalize(std::string& text) const = 0;
};

enum class UnicodeForm { nfc, nfd, nfkc, nfkd };

std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form);
std::unique_ptr<Normalizer> make_lowercase_normalizer();
std::unique_ptr<Normalizer> make_prepend_normalizer(std::string prefix);
/// Replace every match of `pattern` (a literal string, or a regex when `is_regex`) by `content`.
std::unique_ptr<Normalizer> make_replace_normalizer(std::string pattern, bool is_regex, std::string content);
std::unique_ptr<Normalizer> make_strip_normalizer(bool left, bool right);
std::unique_ptr<Normalizer> make_sequence_normalizer(std::vector<std::unique_ptr<Normalizer>> steps);

// ---- Pre-tokenizers (pieces in, finer pieces out) --------------------------------------------

/// What a pre-tokenizer may need to know about the section of input it is given: the input is cut
/// at added tokens first, and Metaspace's prepend_scheme "first" only prepends to the section that
/// starts the input.
class SectionContext {
 public:
  explicit SectionContext(bool starts_input_) : starts_input(starts_input_) {}
  bool starts_input;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  /// Replaces every piece by its sub-pieces, in order. Empty pieces are dropped.
  virtual void pre_tokenize(Pieces& pieces, SectionContext context) const = 0;
};

/// How a Split keeps the delimiters (matches) it finds; names as in tokenizer.json.
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

/// Split on every match of `pattern` (a literal string, or a regex when `is_regex`); with `invert`
/// the matches are the pieces and the text between them the delimiters.
std::unique_ptr<PreTokenizer> make_split_pre_tokenizer(std::string pattern, bool is_regex, SplitBehavior behavior,
                                                       bool invert);

/// GPT-2's byte-level step. `use_regex` first splits with GPT-2's pattern; `add_prefix_space`
/// adds a space in front of the section when it does not start with one. With `map_bytes` every
/// byte becomes its printable stand-in character (the alphabet of byte-level vocabularies);
/// without it pieces stay raw bytes, for a model whose vocabulary was converted to raw bytes.
std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex, bool map_bytes);

enum class PrependScheme { always, first, never };
/// Replaces ' ' by `replacement` ("▁"), prepends it per `scheme`, and with `split` cuts before each.
std::unique_ptr<PreTokenizer> make_metaspace_pre_tokenizer(std::string replacement, PrependScheme scheme, bool split);
std::unique_ptr<PreTokenizer> make_digits_pre_tokenizer(bool individual_digits);
std::unique_ptr<PreTokenizer> make_punctuation_pre_tokenizer(SplitBehavior behavior);
/// `\w+|[^\w\s]+`
std::unique_ptr<PreTokenizer> make_whitespace_pre_tokenizer();
/// Split on whitespace, dropping it.
std::unique_ptr<PreTokenizer> make_whitespace_split_pre_tokenizer();
std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps);

/// The byte -> stand-in character table of byte-level BPE (GPT-2's bytes_to_unicode), as UTF-8.
const std::string& byte_level_char(unsigned char byte);
/// The inverse: the byte a stand-in character (UTF-8) stands for, or -1 if it is not one.
int byte_level_byte(std::string_view utf8_char);

}  // namespace tinker::tokenizer_detail
