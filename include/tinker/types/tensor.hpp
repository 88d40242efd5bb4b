/// \file
/// TensorData: the loss-function input and output tensors (`doc/protocol.md#core-types`).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace tinker {

/// Element types on the public wire. The protobuf form may also carry int32 and bfloat16
/// (`doc/protocol.md#protobuf`); decoders widen those to int64 and float32.
enum class DType {
  float32,  ///< 32-bit IEEE float (`"float32"`)
  int64,    ///< 64-bit signed integer (`"int64"`)
};
/// The wire name: "float32" or "int64".
const char* to_string(DType dtype) noexcept;

/// A dense or sparse (CSR) tensor of float32 or int64 values, flattened in row-major order.
///
/// Dense: `values` holds every element; `shape` is optional (absent means 1-D of values' size).
/// Sparse CSR (2-D only): `values` holds the nnz values, `shape` is the dense [rows, cols],
/// `sparse_crow_indices` has rows+1 entries and `sparse_col_indices` one per value.
class TensorData {
 public:
  /// The stored values; the alternative held is the dtype (float32 or int64).
  using Values = std::variant<std::vector<float>, std::vector<std::int64_t>>;

  /// An empty float32 tensor.
  TensorData() = default;
  /// A dense float32 tensor; without `shape_` it is 1-D.
  explicit TensorData(std::vector<float> values_, std::optional<std::vector<std::int64_t>> shape_ = std::nullopt)
      : values(std::move(values_)), shape(std::move(shape_)) {}
  /// A dense int64 tensor; without `shape_` it is 1-D.
  explicit TensorData(std::vector<std::int64_t> values_, std::optional<std::vector<std::int64_t>> shape_ = std::nullopt)
      : values(std::move(values_)), shape(std::move(shape_)) {}
  /// A 1-D float32 tensor holding a copy of `values_`.
  explicit TensorData(std::span<const float> values_) : values(std::vector<float>(values_.begin(), values_.end())) {}
  /// A 1-D int64 tensor holding a copy of `values_`.
  explicit TensorData(std::span<const std::int64_t> values_)
      : values(std::vector<std::int64_t>(values_.begin(), values_.end())) {}

  /// A 1-D float32 tensor (e.g. `weights`, `advantages`, `logprobs`).
  static TensorData from_floats(std::span<const float> values);
  /// A 1-D int64 tensor.
  static TensorData from_ints(std::span<const std::int64_t> values);
  /// Token ids widened to the int64 the wire uses for `target_tokens`.
  static TensorData from_tokens(std::span<const TokenId> tokens);
  /// A 2-D CSR tensor of dense shape [rows, cols]; see the class comment for the layout.
  /// Throws `tinker::error` (invalid_argument) if the indices do not describe a valid CSR tensor
  /// (as validate()).
  static TensorData sparse_csr(Values values, std::int64_t rows, std::int64_t cols,
                               std::vector<std::int64_t> crow_indices, std::vector<std::int64_t> col_indices);

  /// The stored values, row-major (`data` on the wire): every element, or the nnz values of a
  /// sparse tensor.
  Values values;
  /// The dense shape. Empty: 1-D with as many elements as `values` (required for a sparse tensor).
  std::optional<std::vector<std::int64_t>> shape;
  /// CSR row pointers, rows+1 entries; present exactly when the tensor is sparse.
  std::optional<std::vector<std::int64_t>> sparse_crow_indices;
  /// CSR column index of each stored value; present with `sparse_crow_indices`.
  std::optional<std::vector<std::int64_t>> sparse_col_indices;

  /// float32 or int64, from the alternative `values` holds.
  DType dtype() const noexcept { return values.index() == 0 ? DType::float32 : DType::int64; }
  /// True for a CSR tensor (`sparse_crow_indices` set).
  bool is_sparse() const noexcept { return sparse_crow_indices.has_value(); }
  /// Number of stored values (nnz for a sparse tensor).
  std::size_t stored_size() const noexcept;
  /// The shape, with the implicit 1-D shape filled in.
  std::vector<std::int64_t> effective_shape() const;

  /// The float32 values. Throws `tinker::error` (invalid_argument) if the dtype is int64.
  std::span<const float> floats() const;
  /// The int64 values. Throws `tinker::error` (invalid_argument) if the dtype is float32.
  std::span<const std::int64_t> ints() const;

  /// The dense row-major values as float (a sparse tensor is expanded, int64 values are
  /// converted). Throws `tinker::error` (invalid_argument) if the tensor is malformed (validate()).
  std::vector<float> to_dense_floats() const;
  /// The dense row-major values as int64 (a sparse tensor is expanded, float values are
  /// truncated). Throws `tinker::error` (invalid_argument) if the tensor is malformed (validate()).
  std::vector<std::int64_t> to_dense_ints() const;

  /// Throws `tinker::error` (invalid_argument) naming `field_path` if the tensor is not
  /// well-formed: shape product differs from the value count, malformed CSR indices, or a
  /// NaN/Inf value (JSON cannot carry them, so requests must not contain them).
  void validate(std::string_view field_path) const;

  /// Equal when every field is equal (the same dtype, values, shape and indices).
  friend bool operator==(const TensorData&, const TensorData&) = default;
};

TINKER_DECLARE_PRINTABLE(TensorData);

}  // namespace tinker
