// build_merged_model once the plan is made: the checks that need the base's tensors, the staged
// output directory, the streamed shards (merge_stream.hpp) and the base's other files.
#pragma once

#include "weights/lora_plan.hpp"

#include <tinker/weights.hpp>

#include <cstddef>

namespace tinker::weights::detail {

struct MergeEngineTuning {
  /// Bytes per unit of work of the shard stream: the buffers hold threads + 3 of them.
  std::size_t chunk_bytes = std::size_t{16} << 20;
};

/// Merges `plan` into the base at options.base_model_dir (whose layout is `layout`) and writes the
/// result to options.output_dir, through a staging directory renamed into place at the end; on
/// any failure nothing is left at the output path. Refuses (errc::invalid_argument, before anything
/// is written) a target that is not in the base, a target whose dtype is not F16, BF16 or F32, an
/// op whose shape does not fit its target, an undecodable quantized target, and an output that
/// exists. The summary's bytes_read and seconds count this call only.
ExportSummary merge_with_plan(const MergePlan& plan, const ModelLayout& layout, const MergedModelOptions& options,
                              const MergeEngineTuning& tuning = {});

}  // namespace tinker::weights::detail
