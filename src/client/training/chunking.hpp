// Splitting a forward / forward_backward batch into requests (doc/training.md#chunking; the byte estimate:
// doc/protocol.md#pools-timeouts-and-throttles).
//
// The batch is split greedily in order: a chunk is closed before a datum when it already holds
// `max_datums` datums, or when it is non-empty and the datum's estimated bytes would take it past
// `max_bytes`. A datum larger than `max_bytes` on its own therefore forms a chunk by itself
// (doc/training.md#chunking: it is still sent; the server decides). Empty data is refused ("No data provided").
//
// seq_ids and submission order (doc/training.md#chunking, parallel_fwdbwd_chunks = true): one turn hands out
// consecutive seq_ids, chunk i (0-based) keeps seq_id base + i. Chunks 1..n-1 are submitted
// concurrently first and chunk 0 (the lowest seq_id) last, after the others have their tickets:
// the server holds later seq_ids until the lowest arrives, so the whole batch is queued when
// chunk 0 lands and it still runs first. `chunk_submission_order` gives that order.
#pragma once

#include <tinker/types/datum.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tinker::client::training {

/// The server's chunk limits (client/config flags fwdbwd_max_chunk_len and
/// fwdbwd_max_chunk_bytes_count; the defaults are the values the real service sends).
class ChunkLimits {
 public:
  ChunkLimits() = default;
  ChunkLimits(std::int64_t max_datums_, std::int64_t max_bytes_) : max_datums(max_datums_), max_bytes(max_bytes_) {}

  std::int64_t max_datums = 1024;
  std::int64_t max_bytes = 5'000'000;

  friend bool operator==(const ChunkLimits&, const ChunkLimits&) = default;
};

/// Datums [begin, end) of the batch.
class DatumRange {
 public:
  DatumRange() = default;
  DatumRange(std::size_t begin_, std::size_t end_) : begin(begin_), end(end_) {}

  std::size_t begin = 0;
  std::size_t end = 0;

  std::size_t size() const noexcept { return end - begin; }
  friend bool operator==(const DatumRange&, const DatumRange&) = default;
};

/// The 0.25.0 proto-sized request estimate of one datum (doc/protocol.md#pools-timeouts-and-throttles): 4 bytes per
/// text token; raw bytes of an image, the location's length for an image asset pointer, raw bytes of a dmel chunk; per
/// loss input tensor 4 (float32) or 8 (int64) bytes per stored value (nnz for CSR) plus 8 bytes per CSR index.
std::int64_t estimate_datum_bytes(const Datum& datum);

/// doc/protocol.md#pools-timeouts-and-throttles's estimate of a model input: `bytes_per_token` per text token (4 for
/// the 0.25 fwd/bwd estimate, 10 for sampling prompts), raw bytes of an image, the location's length for an image asset
/// pointer, raw bytes of a dmel chunk.
std::int64_t estimate_input_bytes(const ModelInput& input, std::int64_t bytes_per_token);

/// The chunk boundaries of `data` under `limits`, covering every datum once, in order.
/// Throws tinker::error: invalid_argument "No data provided" for empty data,
/// invalid_configuration naming the flag if a limit is < 1.
std::vector<DatumRange> split_into_chunks(std::span<const Datum> data, const ChunkLimits& limits);

/// The per-chunk inputs, moving the datums out of `input` (loss_fn and loss_fn_config are copied
/// into every chunk). `ranges` must be the result of split_into_chunks on `input.data`.
std::vector<ForwardBackwardInput> take_chunk_inputs(ForwardBackwardInput&& input, std::span<const DatumRange> ranges);

/// Chunk indices in submission order: 1, 2, ..., n-1, then 0. For n == 1: {0}.
std::vector<std::size_t> chunk_submission_order(std::size_t chunk_count);

/// The seq_id of chunk `index` when the turn's first seq_id is `first_seq_id`.
inline std::int64_t chunk_seq_id(std::int64_t first_seq_id, std::size_t index) noexcept {
  return first_seq_id + static_cast<std::int64_t>(index);
}

}  // namespace tinker::client::training
