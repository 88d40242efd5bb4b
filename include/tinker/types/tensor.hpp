// TensorData: the loss-function input and output tensors (spec 9.2).
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
/// (spec 17.3); decoders widen those to int64 and float32.
enum class DType { float32, int64 };
const char* to_string(DType dtype) noexcept;

/// A dense or sparse (CSR) tensor of float32 or int64 values, flattened in row-major order.
///
/// Dense: `values` holds every element; `shape` is optional (absent means 1-D of values' size).
/// Sparse CSR (2-D only): `values` holds the nnz values, `shape` is the dense [rows, cols],
/// `sparse_crow_indices` has rows+1 entries and `sparse_col_indices` one per value.
class TensorData {
 public:
  using Values = std::variant<std::vector<float>, std::vector<std::int64_t>>;

  /// An empty float32 tensor.
  TensorData() = default;
  explicit TensorData(std::vector<float> values_, std::optional<std::vector<std::int64_t>> shape_ = std::nullopt)
      : values(std::move(values_)), shape(std::move(shape_)) {}
  explicit TensorData(std::vector<std::int64_t> values_, std::optional<std::vector<std::int64_t>> shape_ = std::nullopt)
      : values(std::move(values_)), shape(std::move(shape_)) {}
  explicit TensorData(std::span<const float> values_) : values(std::vector<float>(values_.begin(), values_.end())) {}
  explicit TensorData(std::span<const std::int64_t> values_)
      : values(std::vector<std::int64_t>(values_.begin(), values_.end())) {}

  static TensorData from_floats(std::span<const float> values);
  static TensorData from_ints(std::span<const std::int64_t> values);
  /// Token ids widened to the int64 the wire uses for `target_tokens`.
  static TensorData from_tokens(std::span<const TokenId> tokens);
  /// A 2-D CSR tensor; see the class comment for the layout.
  static TensorData sparse_csr(Values values, std::int64_t rows, std::int64_t cols,
                               std::vector<std::int64_t> crow_indices, std::vector<std::int64_t> col_indices);

  Values values;
  std::optional<std::vector<std::int64_t>> shape;
  std::optional<std::vector<std::int64_t>> sparse_crow_indices;
  std::optional<std::vector<std::int64_t>> sparse_col_indices;

  DType dtype() const noexcept { return values.index() == 0 ? DType::float32 : DType::int64; }
  bool is_sparse() const noexcept { return sparse_crow_indices.has_value(); }
  /// Number of stored values (nnz for a sparse tensor).
  std::size_t stored_size() const noexcept;
  /// The shape, with the implicit 1-D shape filled in.
  std::vector<std::int64_t> effective_shape() const;

  /// The float32 values. Throws `tinker::error` (invalid_argument) if the dtype is int64.
  std::span<const float> floats() const;
  /// The int64 values. Throws `tinker::error` (invalid_argument) if the dtype is float32.
  std::span<const std::int64_t> ints() const;

  /// The dense row-major values (a sparse tensor is expanded), converted to float / int64.
  std::vector<float> to_dense_floats() const;
  std::vector<std::int64_t> to_dense_ints() const;

  /// Throws `tinker::error` (invalid_argument) naming `field_path` if the tensor is not
  /// well-formed: shape product differs from the value count, malformed CSR indices, or a
  /// NaN/Inf value (JSON cannot carry them, so requests must not contain them).
  void validate(std::string_view field_path) const;

  friend bool operator==(const TensorData&, const TensorData&) = default;
};

TINKER_DECLARE_PRINTABLE(TensorData);

}  // namespace tinker
