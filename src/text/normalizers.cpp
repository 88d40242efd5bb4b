// Normalizers of the tokenizer.json format. Unicode data (normalization forms, case mapping,
// categories) comes from utf8proc.
#include <tinker/error.hpp>

#include "text/matcher.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <utility>

namespace tinker::tokenizer_detail {

namespace {

bool all_ascii(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}

  void normalize(std::string& text) const override {
    // ASCII is invariant under all four forms.
    if (all_ascii(text)) return;
    int options = UTF8PROC_STABLE;
    switch (form_) {
      case UnicodeForm::nfc: options |= UTF8PROC_COMPOSE; break;
      case UnicodeForm::nfd: options |= UTF8PROC_DECOMPOSE; break;
      case UnicodeForm::nfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
      case UnicodeForm::nfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                     &result, static_cast<utf8proc_option_t>(options));
    if (length < 0) {
      throw error(errc::invalid_argument, std::string("Unicode normalization failed: ") +
                                              utf8proc_errmsg(static_cast<utf8proc_ssize_t>(length)));
    }
    text.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(length));
    std::free(result);
  }

 private:
  UnicodeForm form_;
};

// Hugging Face lowercases character by character with Rust's char::to_lowercase: the simple
// lowercase mapping, except U+0130, the only character whose lowercase is two characters. There
// is no final-sigma rule (that belongs to str::to_lowercase): every capital sigma becomes σ.
class LowercaseNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    if (all_ascii(text)) {
      for (char& c : text) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      return;
    }
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
      const auto [c, length] = decode_utf8_at(text, pos);
      pos += length;
      if (c == 0x130) {
        append_utf8(out, U'i');
        append_utf8(out, 0x307);
      } else {
        append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
      }
    }
    text = std::move(out);
  }
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::string pattern, bool is_regex, std::string content)
      : matcher_(is_regex ? make_matcher(pattern) : make_literal_matcher(std::move(pattern))),
        content_(std::move(content)) {}

  void normalize(std::string& text) const override {
    std::vector<MatchRange> matches;
    matcher_->find_all(text, matches);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size() + matches.size() * content_.size());
    std::size_t previous = 0;
    for (const auto& [begin, end] : matches) {
      out.append(text, previous, begin - previous);
      out += content_;
      previous = end;
    }
    out.append(text, previous, std::string::npos);
    text = std::move(out);
  }

 private:
  std::unique_ptr<Matcher> matcher_;
  std::string content_;
};

// Strips Unicode White_Space (Rust's char::is_whitespace).
class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}

  void normalize(std::string& text) const override {
    std::size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        const auto [c, length] = decode_utf8_at(text, begin);
        if (!is_white_space(c)) break;
        begin += length;
      }
    }
    if (right_) {
      while (end > begin) {
        std::size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        if (!is_white_space(decode_utf8_at(text, start).first)) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form) {
  return std::make_unique<UnicodeNormalizer>(form);
}
std::unique_ptr<Normalizer> make_lowercase_normalizer() {
  return std::make_unique<LowercaseNormalizer>();
}
std::unique_ptr<Normalizer> make_prepend_normalizer(std::string prefix) {
  return std::make_unique<PrependNormalizer>(std::move(prefix));
}
std::unique_ptr<Normalizer> make_replace_normalizer(std::string pattern, bool is_regex, std::string content) {
  return std::make_unique<ReplaceNormalizer>(std::move(pattern), is_regex, std::move(content));
}
std::unique_ptr<Normalizer> make_strip_normalizer(bool left, bool right) {
  return std::make_unique<StripNormalizer>(left, right);
}
std::unique_ptr<Normalizer> make_sequence_normalizer(std::vector<std::unique_ptr<Normalizer>> steps) {
  return std::make_unique<SequenceNormalizer>(std::move(steps));
}

}  // namespace tinker::tokenizer_detail
