// The general matcher: PCRE2 (8-bit, UTF + Unicode properties, JIT compiled), and the literal
// matcher. The patterns come from tokenizer.json files written for Oniguruma (Hugging Face's
// engine) and from tiktoken encodings written for fancy-regex; translate_pattern closes the few
// gaps between those engines and PCRE2 that change matches (see there).
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <tinker/error.hpp>

#include "text/matcher.hpp"

#include <string>
#include <utility>

namespace tinker::tokenizer_detail {

namespace {

// Unicode White_Space, which is `\s` for Oniguruma and Rust's regex crates. PCRE2's `\s` under
// PCRE2_UCP also matches U+180E (MONGOLIAN VOWEL SEPARATOR, no longer a space since Unicode 6.3).
constexpr std::string_view kWhiteSpaceClass =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";
// Oniguruma's Unicode `\w`: letters, marks, numbers and connector punctuation. PCRE2 10.42's
// `\w` under PCRE2_UCP is only letters, numbers and '_'.
constexpr std::string_view kWordClass = "\\p{L}\\p{M}\\p{N}\\p{Pc}";

// Rewrites `\s`, `\S`, `\w` and `\W` as explicit classes with the reference engines' meaning.
// Inside a character class `\s` and `\w` are inlined; `\S` and `\W` there are left to PCRE2 (no
// served pattern has them; they differ only on U+180E and on marks/connector punctuation).
std::string translate_pattern(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 64);
  int class_depth = 0;  // > 0 inside [...]; POSIX [:name:] inside a class nests once
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      ++i;
      if (e == 'Q') {  // \Q...\E quotes everything up to \E
        const std::size_t end = pattern.find("\\E", i + 1);
        const std::size_t stop = end == std::string_view::npos ? pattern.size() : end + 2;
        out.append(pattern.substr(i - 1, stop - (i - 1)));
        i = stop - 1;
        continue;
      }
      const bool space = e == 's' || e == 'S';
      const bool word = e == 'w' || e == 'W';
      const bool negated = e == 'S' || e == 'W';
      if ((space || word) && class_depth == 0) {
        out += negated ? "[^" : "[";
        out += space ? kWhiteSpaceClass : kWordClass;
        out += ']';
      } else if ((space || word) && !negated) {
        out += space ? kWhiteSpaceClass : kWordClass;
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (class_depth == 0 && c == '[') {
      class_depth = 1;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (class_depth > 0 && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const std::size_t end = pattern.find(":]", i + 2);
      if (end != std::string_view::npos) {
        out.append(pattern.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
    }
    if (class_depth > 0 && c == ']') class_depth = 0;
    out += c;
  }
  return out;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int length = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (length < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
}

// Per-thread match state: match data (only the whole match is read, so one pair suffices for any
// pattern) and a JIT stack large enough for long runs of the served patterns' repeats.
class ThreadMatchState {
 public:
  ThreadMatchState()
      : match_data(pcre2_match_data_create(1, nullptr)),
        context(pcre2_match_context_create(nullptr)),
        jit_stack(pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr)) {
    if (match_data == nullptr || context == nullptr || jit_stack == nullptr) {
      release();
      throw error(errc::invalid_argument, "PCRE2: out of memory creating the match state");
    }
    pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~ThreadMatchState() { release(); }
  ThreadMatchState(const ThreadMatchState&) = delete;
  ThreadMatchState& operator=(const ThreadMatchState&) = delete;

  pcre2_match_data* match_data;
  pcre2_match_context* context;
  pcre2_jit_stack* jit_stack;

 private:
  void release() noexcept {
    if (match_data != nullptr) pcre2_match_data_free(match_data);
    if (context != nullptr) pcre2_match_context_free(context);
    if (jit_stack != nullptr) pcre2_jit_stack_free(jit_stack);
  }
};

ThreadMatchState& thread_match_state() {
  thread_local ThreadMatchState state;
  return state;
}

class RegexMatcher final : public Matcher {
 public:
  explicit RegexMatcher(std::string_view pattern) : pattern_(pattern) {
    const std::string translated = translate_pattern(pattern);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                          PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error_code, &error_offset, nullptr);
    if (code_ == nullptr) {
      throw error(errc::invalid_configuration, "the regex \"" + pattern_ + "\" does not compile (as \"" + translated +
                                                   "\" at offset " + std::to_string(error_offset) +
                                                   "): " + pcre2_message(error_code));
    }
    jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
  }
  ~RegexMatcher() override { pcre2_code_free(code_); }
  RegexMatcher(const RegexMatcher&) = delete;
  RegexMatcher& operator=(const RegexMatcher&) = delete;

  void find_all(std::string_view text, std::vector<MatchRange>& matches) const override {
    ThreadMatchState& state = thread_match_state();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t start = 0;
    while (start <= text.size()) {
      const int rc =
          jit_ ? pcre2_jit_match(code_, subject, text.size(), start, 0, state.match_data, state.context)
               : pcre2_match(code_, subject, text.size(), start, PCRE2_NO_UTF_CHECK, state.match_data, state.context);
      if (rc == PCRE2_ERROR_NOMATCH) return;
      if (rc < 0) {
        throw error(errc::invalid_argument, "matching the regex \"" + pattern_ + "\" failed at byte " +
                                                std::to_string(start) + ": " + pcre2_message(rc));
      }
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.match_data);
      const std::size_t begin = ovector[0], end = ovector[1];
      if (end > begin) {
        matches.emplace_back(static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end));
        start = end;
      } else {
        // An empty match: not reported; the search goes on one character further.
        if (begin >= text.size()) return;
        start = begin + 1;
        while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
      }
    }
  }

  std::string_view engine() const noexcept override { return "pcre2"; }

 private:
  std::string pattern_;
  pcre2_code* code_ = nullptr;
  bool jit_ = false;
};

class LiteralMatcher final : public Matcher {
 public:
  explicit LiteralMatcher(std::string literal) : literal_(std::move(literal)) {}

  void find_all(std::string_view text, std::vector<MatchRange>& matches) const override {
    if (literal_.empty()) return;
    for (std::size_t at = text.find(literal_); at != std::string_view::npos;
         at = text.find(literal_, at + literal_.size())) {
      matches.emplace_back(static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at + literal_.size()));
    }
  }

  std::string_view engine() const noexcept override { return "literal"; }

 private:
  std::string literal_;
};

}  // namespace

std::unique_ptr<Matcher> make_regex_matcher(std::string_view pattern) {
  return std::make_unique<RegexMatcher>(pattern);
}

std::unique_ptr<Matcher> make_literal_matcher(std::string literal) {
  return std::make_unique<LiteralMatcher>(std::move(literal));
}

}  // namespace tinker::tokenizer_detail
