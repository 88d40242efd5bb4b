// The shards of a merged model, streamed: every base shard rewritten under the same file name with
// the same tensors (names, dtypes, shapes, order), the adapted ones with their LoRA deltas added.
//
// Three kinds of thread share the work, so reading, arithmetic and writing overlap:
// - a reader takes the tensors in file order, cut into chunks of whole rows (about chunk_bytes
//   each), and reads each chunk with pread into one of a fixed set of buffers;
// - `threads` workers convert a chunk of an adapted tensor to f32, add the deltas of its rows and
//   round it back into the buffer (chunks of other tensors pass through untouched);
// - the calling thread writes the chunks in order and hands each buffer back to the reader; a
//   finished shard is flushed to the disk and renamed (SafetensorsWriter::finish) by another
//   thread while this one starts the next shard.
// Resident memory is therefore the buffers (threads + 3 chunks, 128 MiB at most: more threads get
// smaller chunks), the workers' f32 rows and the adapter, whatever the size of the model. pread rather than the
// mapping: the pages a read brings in belong to the page cache, not to this process, and a file shrinking under us is
// an I/O error rather than a SIGBUS. (Quantized weights are decoded from the mapping, one expert range at a time, and
// their pages released once the weight is written.)
#pragma once

#include "weights/lora_plan.hpp"

#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace tinker::weights::detail {

struct MergeStreamInput {
  const safetensors::SafetensorsModel* model = nullptr;
  const MergePlan* plan = nullptr;
  const ModelLayout* layout = nullptr;  // the quantized weights a plan target may be
  std::filesystem::path output_dir;     // each shard is written here under its base file name
  unsigned threads = 1;
  std::size_t chunk_bytes = std::size_t{16} << 20;
  const ProgressCallback* progress = nullptr;
};

struct MergeStreamTotals {
  std::size_t tensors_written = 0;
  std::size_t tensors_changed = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
};

/// Writes every shard of `input.model` into `input.output_dir`. Every plan target must be a float
/// (F16, BF16, F32) tensor of the model or a quantized weight of the layout (checked by the
/// caller). Throws what a read, a conversion or a write throws, after stopping every thread.
MergeStreamTotals stream_merged_shards(const MergeStreamInput& input);

}  // namespace tinker::weights::detail
