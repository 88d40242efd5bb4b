// Finding the matches of a split pattern: PCRE2 (JIT, UTF + Unicode properties) for any pattern,
// and hand-written scanners for the GPT-style patterns the served models use, chosen automatically
// by make_matcher. The two must give the same matches (tested on the same corpus).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::tokenizer_detail {

/// A match as [begin, end) byte offsets into the searched text.
using MatchRange = std::pair<std::uint32_t, std::uint32_t>;

class Matcher {
 public:
  virtual ~Matcher() = default;
  /// Appends every non-overlapping match in `text` (valid UTF-8), left to right, as a regex
  /// engine's find-all does (an empty match advances one character and is not reported).
  virtual void find_all(std::string_view text, std::vector<MatchRange>& matches) const = 0;
  /// "pcre2" or the scanner's name (for tests and benchmarks).
  virtual std::string_view engine() const noexcept = 0;
};

/// Compiles `pattern` with PCRE2. Throws tinker::error (invalid_configuration) with PCRE2's
/// message and the offset in the pattern when it does not compile.
std::unique_ptr<Matcher> make_regex_matcher(std::string_view pattern);
/// A hand-written scanner when `pattern` is one it knows, else make_regex_matcher(pattern).
std::unique_ptr<Matcher> make_matcher(std::string_view pattern);
/// A matcher finding a literal string.
std::unique_ptr<Matcher> make_literal_matcher(std::string literal);

}  // namespace tinker::tokenizer_detail
