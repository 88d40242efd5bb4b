// Helpers shared by the protobuf codec tests: golden files, error expectations, raw wire bytes.
#pragma once

#include <tinker/codec.hpp>
#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::test {

/// Contents of a file written by test/golden/make_proto_goldens.py.
inline std::string read_golden(std::string_view name) {
  const std::string path = std::string(TINKER_GOLDEN_DIR) + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "missing golden file " << path << " (built by target tinker_proto_goldens)";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs `fn` and checks it throws tinker::error with `code` and a message containing `text`
/// (the field path, usually).
template <class F>
void expect_error(errc code, std::string_view text, F&& fn) {
  try {
    fn();
    ADD_FAILURE() << "expected an error mentioning \"" << text << "\", got none";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(code)) << e.what();
    EXPECT_NE(e.diag().message.find(text), std::string::npos)
        << "message \"" << e.diag().message << "\" does not contain \"" << text << "\"";
  }
}

template <class T>
void expect_decode_error(std::string_view bytes, std::string_view text) {
  expect_error(errc::decode_error, text, [&] { (void)from_protobuf<T>(bytes); });
}

/// Little-endian bytes of an array, as the wire's packed `bytes` fields hold them.
template <class T>
std::string le_bytes(std::span<const T> values) {
  std::string out(values.size_bytes(), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), values.size_bytes());
  return out;
}
template <class T>
std::string le_bytes(std::initializer_list<T> values) {
  return le_bytes(std::span<const T>(values.begin(), values.size()));
}

inline std::vector<std::uint8_t> hex_bytes(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

/// Hand-written protobuf wire bytes, for encodings the generated code never produces
/// (unpacked repeated scalars) and for malformed input.
class WireWriter {
 public:
  WireWriter& varint(int field, std::uint64_t value) {
    put_varint(static_cast<std::uint64_t>(field) << 3);
    put_varint(value);
    return *this;
  }
  WireWriter& bytes(int field, std::string_view payload) {
    put_varint((static_cast<std::uint64_t>(field) << 3) | 2);
    put_varint(payload.size());
    out_.append(payload);
    return *this;
  }
  WireWriter& message(int field, const WireWriter& inner) { return bytes(field, inner.str()); }
  /// A packed repeated varint field.
  WireWriter& packed(int field, std::initializer_list<std::int64_t> values) {
    WireWriter inner;
    for (std::int64_t v : values) inner.put_varint(static_cast<std::uint64_t>(v));
    return bytes(field, inner.str());
  }
  /// The same field unpacked: one tag per element.
  WireWriter& unpacked(int field, std::initializer_list<std::int64_t> values) {
    for (std::int64_t v : values) varint(field, static_cast<std::uint64_t>(v));
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  void put_varint(std::uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  std::string out_;
};

}  // namespace tinker::test
