// A Kimi-shaped tokenizer for the Kimi renderer tests (kimi_k2_test.cpp, kimi_k25_test.cpp,
// properties_test.cpp), and Kimi's split pattern as the model writes it (for the tokenizer tests).
//
// No npm package carries Kimi's tiktoken.model, so the tokenizer is Kimi-shaped, not Kimi's:
// cl100k_base's ranks (from npm `tiktoken`) loaded the way load_tokenizer loads Kimi
// (TiktokenOptions::kimi_k2(): Kimi's split pattern, 256 reserved ids after the ranks) with Kimi's
// special tokens at their offsets from the end of the ranks, as Kimi's tokenizer_config.json puts
// them (Kimi's ranks end at 163583, so [BOS] is 163584): [BOS] +0, [EOS] +1, <|im_end|> +2,
// <|im_user|> +3, <|im_assistant|> +4, <|im_system|> +10, the tool-call markers +11..+15,
// <|im_middle|> +17, <|media_begin|> +18, <|media_content|> +19, <|media_end|> +20,
// <|media_pad|> +21, [UNK] +254, [PAD] +255, and <think> / </think> as added (not special) tokens
// at +22, +23. What that leaves untested: Kimi's own ranks, so the exact ids of ordinary text;
// the structure (markers, order, which reasoning is kept) is compared in full.
#pragma once

#include <tinker/tokenizer.hpp>

#include <memory>
#include <string>

namespace tinker::test {

/// The id of [BOS]: cl100k's ranks are 0..100255 and Kimi's special tokens follow its ranks.
inline constexpr TokenId kimi_shaped_base = 100256;

/// The Kimi-shaped tokenizer, made once per process (runs node for cl100k's ranks).
std::shared_ptr<const Tokenizer> kimi_shaped_tokenizer();

/// Kimi's split pattern as the model's tokenization_kimi.py writes it (the same for K2, K2.5 and
/// K2.6), with the class intersections ([X&&[^\p{Han}]]) of tiktoken's engine, which PCRE2 lacks.
std::string kimi_original_pattern();

}  // namespace tinker::test
