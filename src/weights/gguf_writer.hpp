// A small writer of GGUF version 3 files, the format llama.cpp loads models and adapters from.
//
// Layout (all integers little-endian): the magic "GGUF", the version (u32 3), the tensor count and
// the key-value count (u64 each); the key-value pairs (key: u64 length + UTF-8 bytes; value type
// u32; value); the tensor infos (name as a string, n_dims u32, the dimensions as u64 in ggml order
// (the contiguous dimension first, the reverse of a row-major shape), the element type u32, the
// offset u64 from the start of the data section); zero padding to the alignment; the data section,
// each tensor's bytes padded with zeros to the alignment, in the order of the infos. llama.cpp's
// loader requires exactly this order and these offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace tinker::weights::detail {

/// The ggml element types the writer stores (their numbers in ggml.h).
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  bf16 = 30,
};

/// Bytes per element of `type`.
std::size_t ggml_type_size(GgmlType type) noexcept;

/// The value types of GGUF metadata (their numbers in the format).
enum class GgufValueType : std::uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

/// A metadata value: one scalar, one string, or an array of u32, i32, f32 or strings.
using GgufValue =
    std::variant<std::uint32_t, std::int32_t, std::uint64_t, float, bool, std::string, std::vector<std::uint32_t>,
                 std::vector<std::int32_t>, std::vector<float>, std::vector<std::string>>;

/// The default alignment of the data section; another one is written as "general.alignment".
inline constexpr std::uint32_t gguf_default_alignment = 32;

/// Writes one GGUF file: metadata and tensor declarations first, then each tensor's bytes in
/// declaration order. The file is written under a temporary sibling name and renamed to `path` by
/// `finish()` only if `path` still does not exist; destroying an unfinished writer removes the
/// temporary file.
class GgufWriter {
 public:
  /// Fails (errc::invalid_argument) when `alignment` is not a power of two or `path` exists.
  explicit GgufWriter(std::filesystem::path path, std::uint32_t alignment = gguf_default_alignment);
  GgufWriter(GgufWriter&&) noexcept;
  GgufWriter& operator=(GgufWriter&&) noexcept;
  ~GgufWriter();

  /// Adds a key (unique, non-empty). Only before the first tensor data.
  void add(std::string key, GgufValue value);

  /// Declares a tensor named `name` (unique, shorter than 64 bytes: ggml's limit) of row-major
  /// `shape` (1 to 4 dimensions, none negative), as its bytes are laid out; the file stores the
  /// dimensions reversed. Only before the first tensor data. Returns its index.
  std::size_t add_tensor(std::string name, std::span<const std::int64_t> shape, GgmlType type);

  std::size_t tensor_count() const noexcept;
  /// The byte size of tensor `index` (without padding).
  std::uint64_t byte_size(std::size_t index) const;
  /// The size of the whole file once every tensor is written.
  std::uint64_t file_size() const;

  /// Writes the bytes of the next tensor in declaration order (the first call writes the header).
  /// `bytes` may be a piece: a tensor is complete when byte_size(index) bytes were given.
  /// Throws errc::invalid_argument when `index` is not the tensor being written or the piece
  /// overflows it, errc::io_error when the write fails.
  void write(std::size_t index, std::span<const std::byte> bytes);

  /// Checks that every tensor is complete, flushes, and renames the file into place. Throws
  /// errc::invalid_argument naming the first incomplete tensor or when `path` appeared meanwhile.
  void finish();

  /// The serialized header, metadata, tensor infos and padding: the bytes before the data section.
  std::string header_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::weights::detail
