/// \file
/// safetensors files, read and written (`doc/export.md#safetensors`).
///
/// A safetensors file is an 8-byte little-endian header length N, N bytes of JSON naming each
/// tensor's dtype, shape and [begin, end) byte range within the data that follows, then the data.
/// `SafetensorsFile` maps a file read-only and checks the whole header before anything is read:
/// every range inside the data, no two ranges overlapping, dtype x shape = byte length, a header
/// of at most 100 MB; a file that breaks a rule is a `tinker::error` (`errc::invalid_file`) naming
/// the file and the tensor, never a crash. `SafetensorsModel` is a model directory: one
/// `model.safetensors`, or shards listed by `model.safetensors.index.json`.
///
/// `SafetensorsWriter` writes one file at computed offsets (tensors may be written in any order
/// and from several threads), into a temporary name renamed into place by `finish()`; an
/// unfinished writer removes its temporary file. `StagedDirectory` does the same for a whole
/// output directory, so an interrupted export leaves nothing that looks complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::safetensors {

/// The element types of the format. `f8_e8m0` is the power-of-two scale of MX formats.
enum class Dtype {
  boolean,
  u8,
  i8,
  i16,
  u16,
  i32,
  u32,
  i64,
  u64,
  f16,
  bf16,
  f32,
  f64,
  f8_e4m3,
  f8_e5m2,
  f8_e8m0,
};

/// The format's name: "BOOL", "U8", ..., "BF16", "F32", "F8_E4M3", "F8_E8M0".
std::string_view to_string(Dtype dtype) noexcept;
/// The dtype named `name` in a header, or nullopt.
std::optional<Dtype> dtype_from_string(std::string_view name) noexcept;
/// Bytes per element.
std::size_t dtype_size(Dtype dtype) noexcept;
/// True for f16, bf16, f32 and f64: the types a LoRA delta is added to.
bool is_float(Dtype dtype) noexcept;

/// One tensor of a header. `begin`/`end` are offsets into the data section (after the header).
struct TensorInfo {
  std::string name;                 ///< the header's key
  Dtype dtype = Dtype::f32;         ///< element type
  std::vector<std::int64_t> shape;  ///< dimensions, outermost first (empty: a scalar)
  std::uint64_t begin = 0;          ///< first byte, from the start of the data section
  std::uint64_t end = 0;            ///< one past the last byte

  /// end - begin.
  std::uint64_t byte_size() const noexcept { return end - begin; }
  /// The product of the shape (1 for a scalar).
  std::uint64_t element_count() const noexcept;
};

/// Converts `count` elements of `dtype` at `bytes` to float (f16, bf16, f32, f64; exact for all
/// but f64). Throws errc::invalid_argument for other dtypes.
void to_f32(Dtype dtype, std::span<const std::byte> bytes, std::span<float> out);
/// Converts floats to `dtype` (f16, bf16 or f32), rounding to nearest, ties to even; NaN stays
/// NaN, values beyond the type's range become infinities. `out` holds dtype_size(dtype) * size.
void from_f32(Dtype dtype, std::span<const float> values, std::span<std::byte> out);

/// One safetensors file, mapped read-only. Moveable, not copyable; the tensor spans stay valid
/// while the object lives.
class SafetensorsFile {
 public:
  /// Maps `path` and checks its header (see the file comment). Throws errc::io_error when the
  /// file cannot be opened or mapped, errc::invalid_file naming the file (and tensor) when the
  /// content breaks a rule.
  static SafetensorsFile open(const std::filesystem::path& path);
  /// The same checks over bytes in memory (`label` names them in errors). For tests and fuzzing.
  static SafetensorsFile from_bytes(std::string bytes, std::string label);

  /// Takes over the mapping; `other` is left empty.
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  /// Unmaps this file and takes over `other`'s mapping.
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  /// Unmaps the file (spans from data() become invalid).
  ~SafetensorsFile();

  /// The path given to `open`, or the label of `from_bytes`.
  const std::filesystem::path& path() const noexcept;
  /// Every tensor, in the order of their data (ascending `begin`).
  const std::vector<TensorInfo>& tensors() const noexcept;
  /// The tensor called `name`, or nullptr.
  const TensorInfo* find(std::string_view name) const noexcept;
  /// The tensor called `name`; throws errc::invalid_argument naming the file and the tensor.
  const TensorInfo& at(std::string_view name) const;
  /// The `__metadata__` object of the header (string values only, as the format requires).
  const std::map<std::string, std::string>& metadata() const noexcept;
  /// Size of the header (8-byte length prefix included): where the data section starts.
  std::uint64_t data_offset() const noexcept;
  /// The whole file's size in bytes.
  std::uint64_t file_size() const noexcept;

  /// The mapped bytes of `tensor` (which must be one of this file's).
  std::span<const std::byte> data(const TensorInfo& tensor) const;
  /// The tensor converted to float (see to_f32).
  std::vector<float> read_f32(const TensorInfo& tensor) const;
  /// Tells the kernel the tensor's pages are no longer needed, so a pass over a large file keeps
  /// its resident memory at the tensors in use (madvise MADV_DONTNEED; no-op for from_bytes).
  void release(const TensorInfo& tensor) const noexcept;

 private:
  struct Impl;
  explicit SafetensorsFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A model directory's weights: `model.safetensors.index.json` and its shards, else the one
/// `model.safetensors`, else every `*.safetensors` file of the directory (sorted by name).
class SafetensorsModel {
 public:
  /// Opens every shard (see SafetensorsFile::open). Throws errc::invalid_file when the index
  /// names a missing shard, maps a tensor to a shard that lacks it, or two shards hold the same
  /// tensor; errc::invalid_argument when `dir` is not a directory or has no safetensors file.
  static SafetensorsModel open(const std::filesystem::path& dir);

  /// Takes over the shards; `other` is left empty.
  SafetensorsModel(SafetensorsModel&& other) noexcept;
  /// Closes this model's shards and takes over `other`'s.
  SafetensorsModel& operator=(SafetensorsModel&& other) noexcept;
  /// Unmaps every shard.
  ~SafetensorsModel();

  /// The directory given to `open`.
  const std::filesystem::path& directory() const noexcept;
  /// The shards in index order (file name order without an index); one for a single file.
  const std::vector<SafetensorsFile>& shards() const noexcept;
  /// True when the weights came with `model.safetensors.index.json`.
  bool has_index() const noexcept;

  /// A tensor and the shard holding it (both null when there is no such tensor).
  struct Location {
    const SafetensorsFile* file = nullptr;  ///< the shard
    const TensorInfo* tensor = nullptr;     ///< the tensor within it
  };
  /// Where the tensor `name` is, or {nullptr, nullptr}.
  Location find(std::string_view name) const noexcept;
  /// Every tensor name with its shard (sorted by name).
  std::vector<std::string> tensor_names() const;
  /// Sum of the tensors' byte sizes.
  std::uint64_t total_bytes() const noexcept;

 private:
  struct Impl;
  explicit SafetensorsModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What a writer is told about a tensor before any data.
struct TensorDecl {
  std::string name;                 ///< unique within the file
  Dtype dtype = Dtype::f32;         ///< element type
  std::vector<std::int64_t> shape;  ///< non-negative dimensions, outermost first
};

/// Writes one safetensors file whose layout (header and each tensor's offset) is fixed by the
/// declarations given to the constructor; data then goes to `write(index, bytes)` in any order,
/// from any thread (each tensor from one thread at a time). `finish()` checks that every byte was
/// written, flushes and renames the temporary file `<path>.partial` to `path`. Destroying an
/// unfinished writer removes the temporary file.
class SafetensorsWriter {
 public:
  /// Declares the tensors (names unique; shapes non-negative) and `metadata` (`__metadata__`).
  /// The header lists them in the given order and their data follows in the same order with no
  /// gap (the reference reader refuses gaps); the header is padded to 8 bytes, so the data starts
  /// aligned and declaring wider dtypes first keeps every tensor aligned. Throws
  /// errc::invalid_argument for a duplicate name, errc::io_error when the file cannot be created.
  SafetensorsWriter(std::filesystem::path path, std::vector<TensorDecl> tensors,
                    std::map<std::string, std::string> metadata = {});
  /// Takes over the file being written; `other` is left empty.
  SafetensorsWriter(SafetensorsWriter&& other) noexcept;
  /// Abandons this writer's unfinished file (removing it) and takes over `other`'s.
  SafetensorsWriter& operator=(SafetensorsWriter&& other) noexcept;
  /// Removes the temporary file unless finish() succeeded.
  ~SafetensorsWriter();

  /// The declarations, in the order of the header.
  const std::vector<TensorDecl>& tensors() const noexcept;
  /// The byte size of tensor `index`.
  std::uint64_t byte_size(std::size_t index) const;
  /// Writes `bytes` at `offset` within tensor `index` (a tensor may be written in pieces).
  /// Throws errc::invalid_argument when the piece does not fit, errc::io_error on a write failure.
  void write(std::size_t index, std::span<const std::byte> bytes, std::uint64_t offset = 0);
  /// The whole file's size once finished.
  std::uint64_t file_size() const noexcept;
  /// Flushes and renames into place. Throws errc::invalid_argument naming the first tensor not
  /// completely written.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A tensor with its bytes in memory, for write_file.
struct OwnedTensor {
  std::string name;                 ///< unique within the file
  Dtype dtype = Dtype::f32;         ///< element type
  std::vector<std::int64_t> shape;  ///< dimensions, outermost first
  std::vector<std::byte> bytes;     ///< dtype_size(dtype) x the product of the shape, little-endian
};
/// Writes a small file in one call (through SafetensorsWriter: atomically, in the given order).
void write_file(const std::filesystem::path& path, const std::vector<OwnedTensor>& tensors,
                const std::map<std::string, std::string>& metadata = {});
/// An f32 tensor as OwnedTensor (values converted to `dtype`, one of f16, bf16, f32).
OwnedTensor make_tensor(std::string name, std::vector<std::int64_t> shape, std::span<const float> values,
                        Dtype dtype = Dtype::f32);

/// `model.safetensors.index.json` for shards: {"metadata": {"total_size": N}, "weight_map":
/// {tensor: file}}. Returns the JSON text.
std::string make_index_json(std::uint64_t total_size, const std::map<std::string, std::string>& weight_map);

/// An output directory built under a temporary sibling name (`<final>.partial-<random>`) and
/// renamed to `final` by `commit()`. The final directory must not exist (errc::invalid_argument
/// otherwise, checked at construction and again at commit). Destroying an uncommitted staging
/// directory removes it and everything in it.
class StagedDirectory {
 public:
  /// Creates the staging directory (and missing parents of `final_path`); refuses an existing
  /// `final_path` with errc::invalid_argument.
  explicit StagedDirectory(std::filesystem::path final_path);
  /// Takes over the staging directory; `other` no longer removes it.
  StagedDirectory(StagedDirectory&& other) noexcept;
  /// Removes this object's uncommitted staging directory and takes over `other`'s.
  StagedDirectory& operator=(StagedDirectory&& other) noexcept;
  /// Removes the staging directory and its contents unless committed.
  ~StagedDirectory();

  /// Where to write now.
  const std::filesystem::path& staging_path() const noexcept;
  /// Where the directory ends up.
  const std::filesystem::path& final_path() const noexcept;
  /// Renames the staging directory to the final path.
  void commit();

 private:
  std::filesystem::path final_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace tinker::safetensors
