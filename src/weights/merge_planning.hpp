// The merge planner's second pass, apart from the first (merge_planning.cpp) because it is the
// part that decides whether an adapter fits a base at all.
#pragma once

#include "weights/lora_plan.hpp"

namespace tinker::weights::detail {

/// Checks every op's delta against its target's shape as the cookbook's validate_merge_op_shapes
/// does: 2-D deltas equal to the target (or inside it, for row slices); a fused expert delta equal
/// to the gate or up half on whichever axis is twice its own; other 3-D deltas equal to the target
/// or to its transpose. Throws errc::invalid_argument naming the adapter tensor, the base tensor
/// and its file.
void validate_merge_op_shapes(const MergePlan& plan, const ModelLayout& model);

/// The delta's shape of `op`: [out, in] for a 2-D or one-expert op, [E, in, out] for a 3-D one.
std::vector<std::int64_t> merge_op_delta_shape(const MergeOp& op);

}  // namespace tinker::weights::detail
