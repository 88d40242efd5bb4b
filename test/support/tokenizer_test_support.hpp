// Helpers of the tokenizer tests: a tiny SentencePiece model trained in-process, temporary
// directories, the Hugging Face hub layout, and injected environments.
#pragma once

#include "support/temp_files.hpp"

#include <tinker/tokenizer.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::test {

/// Vocabulary size of the tiny models.
inline constexpr int tiny_vocab_size = 150;

/// The generated training text, one sentence per element (deterministic).
const std::vector<std::string>& tiny_training_lines();

/// A serialized SentencePiece model (unigram, vocab 150, unk 0, bos 1, eos 2, pad 3), trained
/// once per process on `tiny_training_lines()`.
const std::string& tiny_model_bytes();

/// Like `tiny_model_bytes()` but without BOS, EOS and PAD (only unk 0).
const std::string& tiny_model_without_markers_bytes();

/// Writes `bytes` to `file`, creating parent directories.
void write_file(const std::filesystem::path& file, std::string_view bytes);

/// Installs `files` (name -> bytes) as a hub-cache snapshot of `id` at `commit`, and, unless
/// `ref_name` is empty, refs/<ref_name> holding `commit` (no newline, as huggingface_hub writes
/// it). Returns the snapshot directory.
std::filesystem::path install_in_hub(const std::filesystem::path& hub, std::string_view id, std::string_view commit,
                                     const std::map<std::string, std::string>& files,
                                     std::string_view ref_name = "main");

/// An environment holding exactly `variables`.
EnvLookup environment(std::map<std::string, std::string> variables);

}  // namespace tinker::test
