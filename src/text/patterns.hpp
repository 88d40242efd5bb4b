// The split patterns of the served models, written once: the hand-written scanners recognise them
// by their exact text (scanners.cpp), and the tiktoken encodings carry them (tiktoken_tokenizer.cpp).
#pragma once

#include <string_view>

namespace tinker::tokenizer_detail::patterns {

/// GPT-4's pattern with single digits: Qwen3's tokenizer.json.
constexpr std::string_view qwen3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// GPT-4's pattern (digits in runs of up to three): cl100k_base, Llama 3's tokenizer.json.
constexpr std::string_view cl100k =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// o200k_base's pattern, which gpt-oss's tokenizer.json uses too.
constexpr std::string_view o200k =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace tinker::tokenizer_detail::patterns
