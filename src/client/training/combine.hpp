// Combining the per-chunk results of one chunked forward / forward_backward (doc/training.md#chunking,
// doc/protocol.md#futures).
//
// Result: loss_fn_output_type of the first chunk (informational), loss_fn_outputs concatenated
// in chunk order (= datum order), metrics reduced by the suffix after ':' of each key, with
// weights w_i = number of loss_fn_outputs of chunk i:
//   sum            Σ v_i
//   mean           Σ w_i·v_i / Σ w_i  (choice: the plain mean if Σ w_i == 0, where Python divides by 0)
//   min / max      min / max of v_i
//   slack          max(v) − weighted mean(v)
//   hash_unordered a deterministic order-insensitive hash of the integer parts (see hash_unordered)
//   unique         key = v_0, key_1 = v_1, key_2 = v_2, ...
// Like the Python SDK (doc/training.md#chunking): only the first chunk's keys are considered, a key missing
// from any chunk is dropped, and a key with an unknown reduction is dropped (a newer server may
// add reductions; failing every training step over an informational metric would be worse).
// A first-chunk key without exactly one ':' is a protocol error naming the key (Python crashes
// on it; doc/protocol.md#core-types says every key must be <name>:<reduction>). The combiner runs for a single
// chunk too, so single-chunk results get the same checks and the same hash_unordered form.
#pragma once

#include <tinker/types/datum.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace tinker::client::training {

/// Combines `chunks` (in chunk order, at least one). If `datum_counts` is not empty it holds the
/// number of datums sent in each chunk, and each chunk must have returned exactly that many
/// loss_fn_outputs. Throws tinker::error: protocol_error naming the chunk or metric key;
/// invalid_argument for no chunks or a datum_counts of the wrong size.
ForwardBackwardOutput combine_chunk_outputs(std::vector<ForwardBackwardOutput> chunks,
                                            std::span<const std::size_t> datum_counts = {});

/// The metric reduction alone (see the file comment).
Metrics combine_metrics(std::span<const ForwardBackwardOutput> chunks);

/// Order-insensitive hash of the integer parts (truncated toward zero) of `values`: FNV-1a 64
/// over the sorted values' 8-byte little-endian two's complement, keeping the low 53 bits so
/// the result is an exact double. Multiplicity counts. Throws tinker::error (protocol_error,
/// naming `key`) for a value that is not finite or outside the int64 range.
double hash_unordered(std::span<const double> values, std::string_view key);

}  // namespace tinker::client::training
