// See decoders.hpp. Each decoder follows the reference's decode_chain for that type.
#include "text/hf/decoders.hpp"

#include "text/matcher.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/utf8.hpp"

#include <algorithm>
#include <utility>

namespace tinker::tokenizer_detail::hf {
namespace {

// The characters of a UTF-8 string, as views (token strings come from the vocabulary and are valid).
std::vector<std::string_view> characters(std::string_view text) {
  std::vector<std::string_view> chars;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = std::min(utf8_length_of_lead(static_cast<unsigned char>(text[i])), text.size() - i);
    chars.push_back(text.substr(i, length));
    i += length;
  }
  return chars;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit; (hit = text.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(text, pos, hit - pos);
    out.append(to);
  }
  if (pos == 0) return;
  out.append(text, pos);
  text = std::move(out);
}

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& token : tokens) {
      const std::size_t before = bytes.size();
      bool mapped = true;
      for (std::size_t i = 0; i < token.size() && mapped;) {
        const std::size_t length =
            std::min(utf8_length_of_lead(static_cast<unsigned char>(token[i])), token.size() - i);
        const int byte = byte_level_byte(std::string_view(token).substr(i, length));
        if (byte < 0) mapped = false;
        bytes.push_back(static_cast<char>(byte));
        i += length;
      }
      if (!mapped) {
        bytes.resize(before);
        bytes += token;
      }
    }
    std::string text;
    append_utf8_lossy(text, bytes);
    tokens.assign(1, std::move(text));
  }
  bool is_byte_level() const noexcept override { return true; }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, MetaspacePrependScheme scheme)
      : replacement_(std::move(replacement)), scheme_(scheme) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const bool drop = i == 0 && scheme_ != MetaspacePrependScheme::never;
      replace_all(tokens[i], replacement_, drop ? "" : " ");
    }
  }

 private:
  std::string replacement_;
  MetaspacePrependScheme scheme_;
};

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string bytes;
    for (auto& token : tokens) {
      if (const int byte = byte_token(token); byte >= 0) {
        bytes.push_back(static_cast<char>(byte));
        continue;
      }
      flush(bytes, out);
      out.push_back(std::move(token));
    }
    flush(bytes, out);
    tokens = std::move(out);
  }

 private:
  // "<0xNN>" (hex digits in either case, as Rust's from_str_radix takes them), or -1.
  static int byte_token(std::string_view token) {
    if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return -1;
    int value = 0;
    for (const char c : token.substr(3, 2)) {
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }
  static void flush(std::string& bytes, std::vector<std::string>& out) {
    if (bytes.empty()) return;
    if (!first_invalid_utf8(bytes)) {
      out.push_back(bytes);
    } else {
      for (std::size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    bytes.clear();
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const auto& token : tokens) joined += token;
    tokens.assign(1, std::move(joined));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, std::size_t start, std::size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& token : tokens) {
      const auto chars = characters(token);
      std::size_t begin = 0;
      while (begin < std::min(start_, chars.size()) && chars[begin] == content_) ++begin;
      std::size_t end = chars.size();
      for (std::size_t cut = 0; cut < stop_ && end > begin && chars[end - 1] == content_; ++cut) --end;
      std::string kept;
      for (std::size_t i = begin; i < end; ++i) kept += chars[i];
      token = std::move(kept);
    }
  }

 private:
  std::string content_;
  std::size_t start_;
  std::size_t stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string pattern, bool is_regex, std::string content)
      : matcher_(is_regex ? make_regex_matcher(pattern) : make_literal_matcher(pattern)),
        content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<MatchRange> matches;
    for (auto& token : tokens) {
      matches.clear();
      matcher_->find_all(token, matches);
      if (matches.empty()) continue;
      std::string out;
      std::uint32_t pos = 0;
      for (const auto& [begin, end] : matches) {
        out.append(token, pos, begin - pos);
        out += content_;
        pos = end;
      }
      out.append(token, pos);
      token = std::move(out);
    }
  }

 private:
  std::unique_ptr<Matcher> matcher_;
  std::string content_;
};

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& token = tokens[i];
      if (i != 0) {
        if (token.starts_with(prefix_)) {
          token.erase(0, prefix_.size());
        } else {
          // (Built anew: GCC 12's -Wrestrict misfires on insert at 0 with -O2.)
          std::string spaced;
          spaced.reserve(token.size() + 1);
          spaced += ' ';
          spaced += token;
          token = std::move(spaced);
        }
      }
      if (cleanup_) cleanup(token);
    }
  }

 private:
  static void cleanup(std::string& token) {
    static const std::pair<const char*, const char*> rules[] = {
        {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) replace_all(token, from, to);
  }
  std::string prefix_;
  bool cleanup_;
};

class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_byte_level_decoder() {
  return std::make_unique<ByteLevelDecoder>();
}
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, MetaspacePrependScheme scheme) {
  return std::make_unique<MetaspaceDecoder>(std::move(replacement), scheme);
}
std::unique_ptr<Decoder> make_byte_fallback_decoder() {
  return std::make_unique<ByteFallbackDecoder>();
}
std::unique_ptr<Decoder> make_fuse_decoder() {
  return std::make_unique<FuseDecoder>();
}
std::unique_ptr<Decoder> make_strip_decoder(std::string content, std::size_t start, std::size_t stop) {
  return std::make_unique<StripDecoder>(std::move(content), start, stop);
}
std::unique_ptr<Decoder> make_replace_decoder(std::string pattern, bool is_regex, std::string content) {
  return std::make_unique<ReplaceDecoder>(std::move(pattern), is_regex, std::move(content));
}
std::unique_ptr<Decoder> make_word_piece_decoder(std::string prefix, bool cleanup) {
  return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
}
std::unique_ptr<Decoder> make_bpe_decoder(std::string suffix) {
  return std::make_unique<BpeDecoder>(std::move(suffix));
}
std::unique_ptr<Decoder> make_sequence_decoder(std::vector<std::unique_ptr<Decoder>> steps) {
  return std::make_unique<SequenceDecoder>(std::move(steps));
}

}  // namespace tinker::tokenizer_detail::hf
