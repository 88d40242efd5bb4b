#include "support/tokenizer_test_support.hpp"

#include <sentencepiece_trainer.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace tinker::test {
namespace {

// Feeds the generated lines to the trainer, so nothing is written to disk.
class LinesIterator final : public sentencepiece::SentenceIterator {
 public:
  explicit LinesIterator(const std::vector<std::string>& lines) : lines_(lines) {}

  bool done() const override { return index_ >= lines_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return lines_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  std::size_t index_ = 0;
};

std::string train(std::string_view marker_args) {
  LinesIterator lines(tiny_training_lines());
  std::string model;
  const std::string args = "--model_type=unigram --vocab_size=" + std::to_string(tiny_vocab_size) +
                           " --num_threads=1 --character_coverage=1.0 --minloglevel=2 " + std::string(marker_args);
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
  if (!status.ok()) throw std::runtime_error("training the tiny SentencePiece model failed: " + status.ToString());
  return model;
}

}  // namespace

// Sentences of common English words mixed with made-up words of two or three syllables, so the
// trainer finds well over 150 distinct pieces.
const std::vector<std::string>& tiny_training_lines() {
  static const std::vector<std::string> lines = [] {
    const std::array<std::string_view, 16> words{"the",   "model",  "reads",   "a",    "tokenizer", "server",
                                                 "and",   "then",   "learns",  "new",  "stories",   "of",
                                                 "small", "bright", "numbers", "times"};
    const std::array<std::string_view, 12> onsets{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t"};
    const std::array<std::string_view, 5> vowels{"a", "e", "i", "o", "u"};
    std::uint32_t state = 12345;  // a fixed LCG: the same text, so the same model, on every run
    auto next = [&state](std::uint32_t bound) {
      state = state * 1664525u + 1013904223u;
      return (state >> 16) % bound;
    };
    auto made_up_word = [&] {
      std::string word;
      for (std::uint32_t syllables = 2 + next(2); syllables > 0; --syllables) {
        word += onsets[next(onsets.size())];
        word += vowels[next(vowels.size())];
      }
      return word;
    };
    std::vector<std::string> result;
    for (int i = 0; i < 300; ++i) {
      std::string line;
      for (std::uint32_t n = 6 + next(6); n > 0; --n) {
        if (!line.empty()) line += ' ';
        line += next(3) == 0 ? made_up_word() : std::string(words[next(words.size())]);
      }
      result.push_back(line + ", " + std::to_string(next(1000)) + ".");
    }
    return result;
  }();
  return lines;
}

const std::string& tiny_model_bytes() {
  static const std::string model = train("--unk_id=0 --bos_id=1 --eos_id=2 --pad_id=3");
  return model;
}

const std::string& tiny_model_without_markers_bytes() {
  static const std::string model = train("--unk_id=0 --bos_id=-1 --eos_id=-1 --pad_id=-1");
  return model;
}

void write_file(const std::filesystem::path& file, std::string_view bytes) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::filesystem::path install_in_hub(const std::filesystem::path& hub, std::string_view id, std::string_view commit,
                                     const std::map<std::string, std::string>& files, std::string_view ref_name) {
  std::string folder = "models--";
  for (char c : id) folder += c == '/' ? std::string("--") : std::string(1, c);
  const auto repo = hub / folder;
  const auto snapshot = repo / "snapshots" / std::string(commit);
  std::filesystem::create_directories(snapshot);
  for (const auto& [name, bytes] : files) write_file(snapshot / name, bytes);
  if (!ref_name.empty()) write_file(repo / "refs" / std::string(ref_name), commit);
  return snapshot;
}

EnvLookup environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace tinker::test
