// Deterministic SentencePiece training of the tiny tokenizer, in memory (no temporary files).
#include "programs/local/tokenizer/tokenizer_training.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <tinker/error.hpp>

#include <openssl/evp.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tinker::local::detail {
namespace {

// Choices, modelled on the Llama SentencePiece tokenizers so the files behave like a real
// model's:
// - BPE with byte_fallback: any UTF-8 text encodes (unknown characters become <0xNN> pieces),
//   and decode(encode(s)) == s for every valid UTF-8 string because normalization is the
//   identity, whitespace is kept as is, and no dummy prefix is added. Without a dummy prefix the
//   tokens of "a" followed by those of " b" are the tokens of "a b", which suits prompt chunks.
// - vocabulary 1024 (the id promises ~1k): <unk>=0, <s>=1, </s>=2, no padding piece, then 256
//   byte pieces, then merges and characters learned from the corpus.
// - determinism: one thread, the whole corpus in its given order (no sampling, no shuffling).
// - minloglevel=2 keeps the trainer's progress log off stderr. The options go to the trainer as a
//   key/value map: its string overload logs "Running command: <options>" before it reads
//   minloglevel, a line every server start (and so every quickstart run) printed.
constexpr std::string_view training_args =
    "--model_type=bpe --vocab_size=1024 --character_coverage=1.0 --byte_fallback=true --split_digits=true "
    "--add_dummy_prefix=false --remove_extra_whitespaces=false --normalization_rule_name=identity "
    "--unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 --unk_piece=<unk> --bos_piece=<s> --eos_piece=</s> "
    "--num_threads=1 --shuffle_input_sentence=false --input_sentence_size=0 --max_sentence_length=16384 "
    "--hard_vocab_limit=true --minloglevel=2";

// Feeds the corpus to the trainer one non-empty line at a time.
class CorpusLines final : public sentencepiece::SentenceIterator {
 public:
  explicit CorpusLines(std::string_view text) : rest_(text) { Next(); }

  bool done() const override { return done_; }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

  void Next() override {
    while (!rest_.empty()) {
      const std::size_t end = rest_.find('\n');
      const std::string_view line = rest_.substr(0, end);
      rest_ = end == std::string_view::npos ? std::string_view{} : rest_.substr(end + 1);
      if (!line.empty()) {
        line_.assign(line);
        return;
      }
    }
    done_ = true;
  }

 private:
  std::string_view rest_;
  std::string line_;
  bool done_ = false;
};

// "--key=value --key=value" -> {key: value}.
std::unordered_map<std::string, std::string> options_map(std::string_view args) {
  std::unordered_map<std::string, std::string> options;
  while (!args.empty()) {
    const std::size_t end = std::min(args.find(' '), args.size());
    std::string_view option = args.substr(0, end);
    args.remove_prefix(std::min(end + 1, args.size()));
    if (option.starts_with("--")) option.remove_prefix(2);
    const std::size_t equals = option.find('=');
    if (option.empty() || equals == std::string_view::npos) continue;
    options.emplace(std::string(option.substr(0, equals)), std::string(option.substr(equals + 1)));
  }
  return options;
}

std::atomic<int> training_runs{0};

// The trainer has process-wide state (log level, random seed); one training at a time.
std::mutex training_mutex;

std::string digest_hex(const EVP_MD* algorithm, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &size, algorithm, nullptr) != 1) {
    throw tinker::error(errc::invalid_configuration, "OpenSSL digest failed");
  }
  static constexpr char hex_digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += hex_digits[digest[i] >> 4];
    hex += hex_digits[digest[i] & 0xF];
  }
  return hex;
}

}  // namespace

std::string tiny_tokenizer_training_args() {
  return std::string(training_args);
}

std::string train_tiny_sentencepiece_model() {
  require_usable_sentencepiece();
  const std::lock_guard lock(training_mutex);
  // BPE training draws no random numbers today; a fixed seed keeps it so if that ever changes.
  sentencepiece::SetRandomGeneratorSeed(20240601);
  CorpusLines lines(bundled_corpus());
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(options_map(training_args), &lines, &model);
  if (!status.ok()) {
    throw tinker::error(errc::invalid_configuration,
                        "training the tiny SentencePiece tokenizer failed: " + std::string(status.message()));
  }
  training_runs.fetch_add(1, std::memory_order_relaxed);
  return model;
}

const std::string& tiny_sentencepiece_model() {
  static const std::string model = train_tiny_sentencepiece_model();  // retried if training throws
  return model;
}

int tiny_tokenizer_training_runs() noexcept {
  return training_runs.load(std::memory_order_relaxed);
}

std::string tiny_tokenizer_training_fingerprint() {
  std::string input(training_args);
  input += '\n';
  input += bundled_corpus();
  return sha256_hex(input);
}

std::string sha1_hex(std::string_view data) {
  return digest_hex(EVP_sha1(), data);
}
std::string sha256_hex(std::string_view data) {
  return digest_hex(EVP_sha256(), data);
}

}  // namespace tinker::local::detail
