// Byte-level BPE training as Hugging Face's BpeTrainer does it, reduced to what tinker-local
// needs: words are the pieces of the split pattern, counted; every word starts as its bytes; the
// most frequent adjacent pair of the whole corpus is merged, and the counts of the pairs around
// each merged occurrence are updated in place (only the words holding the pair are visited).
//
// Determinism: the next pair is the one with the highest count, ties broken by the pair's token
// bytes (left, then right), so no hash order ever decides. A merge whose text is already a token
// (e.g. "ab"+"c" after "a"+"bc") reuses that token's id, as Hugging Face's trainer does.
#include "programs/local/tokenizer/bpe_training.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "text/matcher.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

namespace tinker::local::detail {
namespace {

constexpr int tiny_bpe_vocab_size = 1024;

// Changes whenever the trainer or the files change in a way that changes their bytes.
constexpr std::string_view trainer_version = "tinker-local byte-level BPE trainer 1";

// GPT-2's bytes_to_unicode order: the printable bytes first, then the rest ascending. The byte
// tokens get ids in this order, as in GPT-2's and Qwen's vocabularies.
std::vector<unsigned char> byte_token_order() {
  std::vector<unsigned char> order;
  auto printable = [](int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); };
  for (int b = 0; b < 256; ++b) {
    if (printable(b)) order.push_back(static_cast<unsigned char>(b));
  }
  for (int b = 0; b < 256; ++b) {
    if (!printable(b)) order.push_back(static_cast<unsigned char>(b));
  }
  return order;
}

using PairKey = std::uint64_t;

PairKey pair_key(int left, int right) {
  return (static_cast<PairKey>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}
int left_of(PairKey key) {
  return static_cast<int>(key >> 32);
}
int right_of(PairKey key) {
  return static_cast<int>(key & 0xFFFFFFFFu);
}

class Word {
 public:
  std::vector<int> symbols;
  std::int64_t count = 0;
};

class Trainer {
 public:
  Trainer(std::string_view corpus, int target_tokens) : target_tokens_(target_tokens) {
    const std::vector<unsigned char> order = byte_token_order();
    std::array<int, 256> byte_id{};
    for (std::size_t id = 0; id < order.size(); ++id) {
      byte_id[order[id]] = static_cast<int>(id);
      add_token(std::string(1, static_cast<char>(order[id])));
    }
    for (const auto& [text, count] : count_words(corpus)) {
      Word word;
      word.count = count;
      for (const char c : text) word.symbols.push_back(byte_id[static_cast<unsigned char>(c)]);
      words_.push_back(std::move(word));
    }
    for (std::size_t w = 0; w < words_.size(); ++w) add_pairs(static_cast<std::uint32_t>(w));
  }

  ByteLevelBpe run() {
    while (static_cast<int>(result_.tokens.size()) < target_tokens_) {
      const auto best = best_pair();
      if (!best) break;
      merge(*best);
    }
    return std::move(result_);
  }

 private:
  // The split pattern's pieces and how often each occurs, in byte order.
  static std::map<std::string_view, std::int64_t> count_words(std::string_view corpus) {
    const auto matcher = tokenizer_detail::make_matcher(bpe_split_pattern);
    std::vector<tokenizer_detail::MatchRange> pieces;
    matcher->find_all(corpus, pieces);
    std::map<std::string_view, std::int64_t> counts;
    for (const auto& [begin, end] : pieces) ++counts[corpus.substr(begin, end - begin)];
    return counts;
  }

  int add_token(std::string text) {
    const auto [it, added] = token_ids_.emplace(text, static_cast<int>(result_.tokens.size()));
    if (added) result_.tokens.push_back(std::move(text));
    return it->second;
  }

  void add_pairs(std::uint32_t w) {
    const Word& word = words_[w];
    for (std::size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const PairKey key = pair_key(word.symbols[i], word.symbols[i + 1]);
      pair_counts_[key] += word.count;
      pair_words_[key].push_back(w);
    }
  }

  void remove_pairs(std::uint32_t w) {
    const Word& word = words_[w];
    for (std::size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const auto it = pair_counts_.find(pair_key(word.symbols[i], word.symbols[i + 1]));
      it->second -= word.count;
      if (it->second == 0) pair_counts_.erase(it);
    }
  }

  // Highest count first; ties by the left token's bytes, then the right one's.
  bool before(const std::pair<const PairKey, std::int64_t>& a, const std::pair<const PairKey, std::int64_t>& b) const {
    if (a.second != b.second) return a.second > b.second;
    const std::string& a_left = result_.tokens[static_cast<std::size_t>(left_of(a.first))];
    const std::string& b_left = result_.tokens[static_cast<std::size_t>(left_of(b.first))];
    if (a_left != b_left) return a_left < b_left;
    return result_.tokens[static_cast<std::size_t>(right_of(a.first))] <
           result_.tokens[static_cast<std::size_t>(right_of(b.first))];
  }

  std::optional<PairKey> best_pair() const {
    const std::pair<const PairKey, std::int64_t>* best = nullptr;
    for (const auto& entry : pair_counts_) {
      if (best == nullptr || before(entry, *best)) best = &entry;
    }
    if (best == nullptr) return std::nullopt;
    return best->first;
  }

  void merge(PairKey key) {
    const int left = left_of(key);
    const int right = right_of(key);
    std::string left_text = result_.tokens[static_cast<std::size_t>(left)];
    std::string right_text = result_.tokens[static_cast<std::size_t>(right)];
    std::string merged_text = left_text + right_text;
    result_.merges.emplace_back(std::move(left_text), std::move(right_text));
    const int merged = add_token(std::move(merged_text));

    std::vector<std::uint32_t> holders = std::move(pair_words_[key]);
    pair_words_.erase(key);
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    for (const std::uint32_t w : holders) {
      std::vector<int>& symbols = words_[w].symbols;
      if (!contains_pair(symbols, left, right)) continue;  // merged away by an earlier merge
      remove_pairs(w);
      std::vector<int> merged_symbols;
      merged_symbols.reserve(symbols.size());
      for (std::size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          merged_symbols.push_back(merged);
          ++i;
        } else {
          merged_symbols.push_back(symbols[i]);
        }
      }
      symbols = std::move(merged_symbols);
      add_pairs(w);
    }
  }

  static bool contains_pair(const std::vector<int>& symbols, int left, int right) {
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (symbols[i] == left && symbols[i + 1] == right) return true;
    }
    return false;
  }

  int target_tokens_;
  ByteLevelBpe result_;
  std::unordered_map<std::string, int> token_ids_;
  std::vector<Word> words_;
  std::unordered_map<PairKey, std::int64_t> pair_counts_;
  std::unordered_map<PairKey, std::vector<std::uint32_t>> pair_words_;  // may list a word twice
};

std::atomic<int> bpe_training_runs{0};

}  // namespace

ByteLevelBpe train_byte_level_bpe(std::string_view corpus, int vocab_size,
                                  std::span<const std::string> special_tokens) {
  const int learned = vocab_size - static_cast<int>(special_tokens.size());
  if (learned < 256) {
    throw tinker::error(errc::invalid_argument, "byte-level BPE: vocab_size " + std::to_string(vocab_size) +
                                                    " leaves fewer than 256 ids for the byte tokens");
  }
  ByteLevelBpe bpe = Trainer(corpus, learned).run();
  bpe.special_tokens.assign(special_tokens.begin(), special_tokens.end());
  return bpe;
}

const ByteLevelBpe& tiny_byte_level_bpe() {
  static const ByteLevelBpe bpe = [] {
    const std::vector<std::string> specials{std::string(bpe_endoftext), std::string(bpe_im_start),
                                            std::string(bpe_im_end)};
    ByteLevelBpe trained = train_byte_level_bpe(bundled_corpus(), tiny_bpe_vocab_size, specials);
    bpe_training_runs.fetch_add(1, std::memory_order_relaxed);
    return trained;
  }();
  return bpe;
}

int tiny_bpe_training_runs() noexcept {
  return bpe_training_runs.load(std::memory_order_relaxed);
}

const ByteLevelBpe& tiny_byte_level_bpe_vl() {
  static const ByteLevelBpe bpe = [] {
    ByteLevelBpe extended = tiny_byte_level_bpe();
    for (const std::string_view token : bpe_vl_added_tokens) extended.special_tokens.emplace_back(token);
    return extended;
  }();
  return bpe;
}

bool is_marked_special(std::string_view added_token) noexcept {
  // Qwen's tokenizer.json marks its <|...|> chat, vision and padding tokens special, and the
  // others (tool calls and responses, thinking, fill-in-the-middle, repository markup) not.
  const bool bar_token = added_token.starts_with("<|") && added_token.ends_with("|>");
  if (!bar_token) return false;
  return !added_token.starts_with("<|fim_") && added_token != "<|repo_name|>" && added_token != "<|file_sep|>";
}

std::string tiny_bpe_training_fingerprint() {
  std::string input(trainer_version);
  input += "\nvocab_size=" + std::to_string(tiny_bpe_vocab_size) + "\npattern=";
  input += bpe_split_pattern;
  input += '\n';
  input += bundled_corpus();
  return sha256_hex(input);
}

std::string tiny_bpe_vl_training_fingerprint() {
  std::string input = tiny_bpe_training_fingerprint();
  input += "\nvision added tokens:";
  for (const std::string_view token : bpe_vl_added_tokens) input.append(" ").append(token);
  return sha256_hex(input);
}

}  // namespace tinker::local::detail
