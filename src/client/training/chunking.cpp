#include "client/training/chunking.hpp"

#include <tinker/error.hpp>

#include <iterator>
#include <type_traits>
#include <variant>

namespace tinker::client::training {

namespace {

std::int64_t estimate_tensor_bytes(const TensorData& tensor) {
  const std::int64_t value_bytes = tensor.dtype() == DType::float32 ? 4 : 8;
  std::int64_t bytes = value_bytes * static_cast<std::int64_t>(tensor.stored_size());
  if (tensor.is_sparse()) {
    const std::size_t cols = tensor.sparse_col_indices ? tensor.sparse_col_indices->size() : 0;
    bytes += 8 * static_cast<std::int64_t>(tensor.sparse_crow_indices->size() + cols);
  }
  return bytes;
}

void require_positive(std::int64_t value, const char* flag) {
  if (value < 1) {
    throw error(errc::invalid_configuration, std::string(flag) + " must be at least 1, got " + std::to_string(value));
  }
}

}  // namespace

std::int64_t estimate_input_bytes(const ModelInput& input, std::int64_t bytes_per_token) {
  std::int64_t bytes = 0;
  for (const ModelInputChunk& chunk : input.chunks) {
    bytes += std::visit(
        [bytes_per_token](const auto& c) -> std::int64_t {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, EncodedTextChunk>) {
            return bytes_per_token * static_cast<std::int64_t>(c.tokens.size());
          } else if constexpr (std::is_same_v<T, ImageChunk>) {
            return static_cast<std::int64_t>(c.data.size());
          } else if constexpr (std::is_same_v<T, ImageAssetPointerChunk>) {
            return static_cast<std::int64_t>(c.location.size());
          } else {
            return static_cast<std::int64_t>(c.dmel.size());
          }
        },
        chunk);
  }
  return bytes;
}

std::int64_t estimate_datum_bytes(const Datum& datum) {
  std::int64_t bytes = 0;
  bytes += estimate_input_bytes(datum.model_input, 4);
  for (const auto& [name, tensor] : datum.loss_fn_inputs) bytes += estimate_tensor_bytes(tensor);
  return bytes;
}

std::vector<DatumRange> split_into_chunks(std::span<const Datum> data, const ChunkLimits& limits) {
  if (data.empty()) throw error(errc::invalid_argument, "data: No data provided");
  require_positive(limits.max_datums, "fwdbwd_max_chunk_len");
  require_positive(limits.max_bytes, "fwdbwd_max_chunk_bytes_count");
  std::vector<DatumRange> ranges;
  DatumRange current(0, 0);
  std::int64_t current_bytes = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::int64_t bytes = estimate_datum_bytes(data[i]);
    const bool over_bytes = current.size() > 0 && current_bytes + bytes > limits.max_bytes;
    const bool full = static_cast<std::int64_t>(current.size()) == limits.max_datums;
    if (over_bytes || full) {
      ranges.push_back(current);
      current = DatumRange(i, i);
      current_bytes = 0;
    }
    current.end = i + 1;
    current_bytes += bytes;
  }
  ranges.push_back(current);  // non-empty: data is non-empty
  return ranges;
}

std::vector<ForwardBackwardInput> take_chunk_inputs(ForwardBackwardInput&& input, std::span<const DatumRange> ranges) {
  std::size_t previous_end = 0;
  for (const DatumRange& range : ranges) {  // validate all before moving anything out
    const bool in_order = range.begin >= previous_end;
    previous_end = range.end;
    if (!in_order || range.begin > range.end || range.end > input.data.size()) {
      throw error(errc::invalid_argument, "chunk range [" + std::to_string(range.begin) + ", " +
                                              std::to_string(range.end) + ") is out of order or outside the batch of " +
                                              std::to_string(input.data.size()) + " datums");
    }
  }
  std::vector<ForwardBackwardInput> chunks;
  chunks.reserve(ranges.size());
  for (const DatumRange& range : ranges) {
    std::vector<Datum> data(std::make_move_iterator(input.data.begin() + static_cast<std::ptrdiff_t>(range.begin)),
                            std::make_move_iterator(input.data.begin() + static_cast<std::ptrdiff_t>(range.end)));
    chunks.emplace_back(std::move(data), input.loss_fn, input.loss_fn_config);
  }
  input.data.clear();
  return chunks;
}

std::vector<std::size_t> chunk_submission_order(std::size_t chunk_count) {
  std::vector<std::size_t> order;
  order.reserve(chunk_count);
  for (std::size_t i = 1; i < chunk_count; ++i) order.push_back(i);
  if (chunk_count > 0) order.push_back(0);
  return order;
}

}  // namespace tinker::client::training
