// The backend-independent part of tinker::Tokenizer: id checks and special-token handling in
// decode, so every backend treats out-of-range ids and special tokens the same way.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include "text/utf8.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace tinker {

const char* to_string(TokenizerFormat format) noexcept {
  switch (format) {
    case TokenizerFormat::sentencepiece: return "sentencepiece";
    case TokenizerFormat::tokenizer_json: return "tokenizer.json";
    case TokenizerFormat::tiktoken: return "tiktoken";
  }
  return "unknown";
}

Tokenizer::Tokenizer(std::string id, std::filesystem::path file, TokenizerFormat format, TokenizerConfig config)
    : id_(std::move(id)), file_(std::move(file)), format_(format), config_(std::move(config)) {}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  return encode(text, options);
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  if (const auto offset = tokenizer_detail::first_invalid_utf8(text)) {
    throw error(errc::invalid_argument, "encode with tokenizer " + id_ +
                                            ": the text is not valid UTF-8 at byte offset " + std::to_string(*offset));
  }
  return do_encode(text, options);
}

namespace {

// A new thread starts with cold per-thread caches (the backends remember recent pieces per
// thread) and costs its start-up, so each one should have at least this much text to encode:
// about 5 ms of work at 13 MB/s.
constexpr std::size_t bytes_per_extra_thread = 64 * 1024;

unsigned useful_threads(std::span<const std::string> texts, unsigned requested) {
  if (requested == 0) requested = std::max(1U, std::thread::hardware_concurrency());
  std::size_t bytes = 0;
  for (const auto& text : texts) bytes += text.size();
  const std::size_t useful = std::min(texts.size(), 1 + bytes / bytes_per_extra_thread);
  return static_cast<unsigned>(std::min<std::size_t>(requested, useful));
}

}  // namespace

std::vector<std::vector<TokenId>> Tokenizer::encode_batch(std::span<const std::string> texts, bool add_special_tokens,
                                                          unsigned threads) const {
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  return encode_batch(texts, options, threads);
}

// Threads take texts from a shared counter, so one long text does not hold up a whole share.
std::vector<std::vector<TokenId>> Tokenizer::encode_batch(std::span<const std::string> texts,
                                                          const EncodeOptions& options, unsigned threads) const {
  std::vector<std::vector<TokenId>> results(texts.size());
  threads = useful_threads(texts, threads);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    for (std::size_t i = next++; i < texts.size() && !failed; i = next++) {
      try {
        results[i] = encode(texts[i], options);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!first_failure) first_failure = std::current_exception();
        failed = true;
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }  // the jthreads join here
  if (first_failure) std::rethrow_exception(first_failure);
  return results;
}

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (!in_vocabulary(id)) return std::nullopt;
  return do_id_to_token(id);
}

// Ordinary tokens are decoded in runs, so the backend sees whole words (SentencePiece joins
// pieces and turns "▁" into spaces); a special token ends a run and is written as its token text,
// as Hugging Face's slow tokenizers do.
std::string Tokenizer::decode(std::span<const TokenId> tokens, bool skip_special_tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!in_vocabulary(tokens[i])) {
      throw error(errc::invalid_argument, "decode: token id " + std::to_string(tokens[i]) + " at index " +
                                              std::to_string(i) + " is outside the vocabulary [0, " +
                                              std::to_string(vocab_size()) + ") of tokenizer " + id_);
    }
  }
  return do_decode(tokens, skip_special_tokens);
}

std::string Tokenizer::do_decode(std::span<const TokenId> tokens, bool skip_special_tokens) const {
  std::string text;
  std::size_t run_start = 0;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    const bool at_end = i == tokens.size();
    if (!at_end && !do_is_special(tokens[i])) continue;
    if (i > run_start) text += do_decode_ordinary(tokens.subspan(run_start, i - run_start));
    if (!at_end && !skip_special_tokens) text += do_id_to_token(tokens[i]);
    run_start = i + 1;
  }
  return text;
}

}  // namespace tinker
