#include "text/utf8.hpp"

namespace tinker::tokenizer_detail {

std::size_t valid_sequence_length(std::string_view text, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  if (byte(pos + 1) < low || byte(pos + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    // Fast path: eight ASCII bytes at a time.
    while (pos + 8 <= text.size()) {
      unsigned long long word = 0;
      for (int i = 0; i < 8; ++i)
        word |= static_cast<unsigned long long>(static_cast<unsigned char>(text[pos + i])) << (8 * i);
      if ((word & 0x8080808080808080ULL) != 0) break;
      pos += 8;
    }
    if (pos >= text.size()) break;
    const std::size_t length = valid_sequence_length(text, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

namespace {

// How many bytes from `pos` are a prefix of some valid sequence (at least 1): that is what one
// U+FFFD replaces.
std::size_t maximal_invalid_subpart(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 1;
  }
  std::size_t taken = 1;
  for (std::size_t i = 1; i < length && pos + i < text.size(); ++i) {
    const unsigned char next = byte(pos + i);
    if (i == 1 ? (next < low || next > high) : (next & 0xC0) != 0x80) break;
    ++taken;
  }
  return taken;
}

}  // namespace

void append_utf8_lossy(std::string& out, std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t length = valid_sequence_length(bytes, pos);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      pos += maximal_invalid_subpart(bytes, pos);
    }
  }
}

}  // namespace tinker::tokenizer_detail
