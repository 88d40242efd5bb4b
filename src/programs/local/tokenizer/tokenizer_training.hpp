// Internals of the tiny tokenizer shared by the installer and the tests: deterministic
// SentencePiece training on the bundled corpus, and the digests that name what was trained.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace tinker::local::detail {

/// The sentencepiece trainer options (a command-line style string) the tiny tokenizer uses.
std::string tiny_tokenizer_training_args();

/// Trains a fresh model on `bundled_corpus()`; returns the serialized ModelProto (the bytes of a
/// `.model` file). The same corpus and options always give the same bytes.
std::string train_tiny_sentencepiece_model();

/// `train_tiny_sentencepiece_model()` run at most once per process (later calls reuse the bytes),
/// so servers started with fresh cache directories do not each pay for training.
const std::string& tiny_sentencepiece_model();

/// How many times `train_tiny_sentencepiece_model()` actually trained in this process.
int tiny_tokenizer_training_runs() noexcept;

/// SHA-256 (hex) of the training options and the corpus: an installed snapshot trained from
/// anything else is stale and gets replaced.
std::string tiny_tokenizer_training_fingerprint();

/// A Hugging Face snapshot's files: name -> bytes.
using SnapshotFiles = std::map<std::string, std::string, std::less<>>;

/// The revision (40 hex digits, like a git commit id) naming a snapshot: SHA-1 over each file as
/// "name\0size\0bytes", in name order. Any change to any file gives a new revision.
std::string snapshot_revision(const SnapshotFiles& files);

/// Throws tinker::error if libsentencepiece's bundled protobuf runtime is shadowed by another
/// one in this process (which would make SentencePiece abort or hang); see sentencepiece_runtime.cpp.
void require_usable_sentencepiece();

/// Lower-case hex digests (OpenSSL EVP).
std::string sha1_hex(std::string_view data);
std::string sha256_hex(std::string_view data);

}  // namespace tinker::local::detail
