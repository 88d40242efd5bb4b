// Code point helpers over utf8proc's Unicode data, for the normalizers, pre-tokenizers and
// scanners. Input is valid UTF-8 (the tokenizer checks it before anything runs).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::tokenizer_detail {

/// The code point starting at text[pos] and its length in bytes (text is valid UTF-8).
inline std::pair<char32_t, std::size_t> decode_utf8_at(std::string_view text, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i])); };
  const char32_t lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  if (lead < 0xE0) return {((lead & 0x1F) << 6) | (byte(1) & 0x3F), 2};
  if (lead < 0xF0) return {((lead & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F), 3};
  return {((lead & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F), 4};
}

std::vector<char32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t c);

/// Unicode White_Space (Rust's char::is_whitespace; `\s` of Oniguruma and Rust's regex).
bool is_white_space(char32_t c) noexcept;
/// General category L* (`\p{L}`).
bool is_letter(char32_t c) noexcept;
/// General category N* (`\p{N}`; Rust's char::is_numeric).
bool is_number(char32_t c) noexcept;
/// Hugging Face's is_punctuation: ASCII punctuation or general category P*.
bool is_hf_punctuation(char32_t c) noexcept;

}  // namespace tinker::tokenizer_detail
