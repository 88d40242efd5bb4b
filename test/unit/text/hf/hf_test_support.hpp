// Helpers of the tokenizer.json tests: hand-made tokenizer.json files in temporary directories, and
// the comparison with the reference implementation.
#pragma once

#include "support/temp_files.hpp"

#include "support/tokenizer_reference.hpp"

#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace tinker::test::hf {

/// A temporary directory holding files written by the test, removed at the end.
class TempTokenizerDir {
 public:
  /// Writes `content` to <dir>/<name> and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& content) const;
  const std::filesystem::path& path() const noexcept { return directory_.path(); }

 private:
  TempDir directory_{"tinker-hf-test"};
};

/// A tokenizer.json with a BPE model over `vocab` (token -> id) and `merges`, and the given
/// components (null when absent). Merges are written as "left right" strings unless `pair_merges`.
boost::json::object bpe_tokenizer_json(const std::vector<std::string>& vocab,
                                       const std::vector<std::pair<std::string, std::string>>& merges,
                                       bool pair_merges);

/// Encode (with and without special tokens) and decode (with and without skipping them) of every
/// case equal the reference's; up to 8 mismatches are shown.
void expect_matches_reference(const Tokenizer& tokenizer, const std::filesystem::path& tokenizer_json,
                              const std::vector<std::string>& cases);

/// The message of the tinker::error that loading `text` as a tokenizer.json throws (the test fails
/// when it loads, throws something else, or the code is not invalid_configuration).
std::string load_error(const std::string& text);

}  // namespace tinker::test::hf
