// Does each planned delta fit its base tensor? The cookbook's validate_merge_op_shapes, with errors
// that name the adapter tensor, the base tensor and the file holding it, so a user can tell an
// adapter trained on another size of model from a bug.
#include "weights/key_mapping.hpp"
#include "weights/merge_planning.hpp"

#include <tinker/error.hpp>

namespace tinker::weights::detail {
namespace {

using DimList = std::vector<std::int64_t>;

std::int64_t delta_rank_of(const MergeOp& op) {
  return op.a->shape[op.a->shape.size() - 2];
}

[[noreturn]] void throw_delta_misfit(const MergeOp& op, const ModelLayout& model, const DimList& target_shape,
                                     const std::string& detail) {
  std::string who = "adapter '" + op.adapter_name + "' (rank " + std::to_string(delta_rank_of(op)) + ")";
  if (op.expert >= 0) who += ", expert " + std::to_string(op.expert);
  throw error(errc::invalid_argument, who + ": delta " + format_shape(merge_op_delta_shape(op)) + detail +
                                          " does not fit base tensor '" + op.target + "' " +
                                          format_shape(target_shape) + weight_location(model, op.target));
}

/// Which axis of a fused [E, ., .] gate_up weight holds gate and up for a delta [E, in, out]:
/// 2 when the target is [E, in, 2 out] (gpt-oss, Qwen3-VL), 1 when it is [E, 2 out, in] (Qwen3.5,
/// the delta then goes in transposed), 0 when neither fits.
int gate_up_axis_for(const DimList& target, const DimList& delta) {
  if (delta[1] == target[1] && target[2] == 2 * delta[2]) return 2;
  if (target[2] == delta[1] && target[1] == 2 * delta[2]) return 1;
  return 0;
}

void check_expert_3d_fit(const MergeOp& op, const ModelLayout& model, const DimList& target) {
  const DimList delta = merge_op_delta_shape(op);
  if (target.size() != 3) throw_delta_misfit(op, model, target, " (experts, in, out)");
  if (op.fused_proj_idx >= 0) {
    const std::string half = op.fused_proj_idx == 0 ? " as the gate half" : " as the up half";
    const int axis = gate_up_axis_for(target, delta);
    // Interleaved gate/up alternate along the last axis only.
    if (axis == 0 || (op.interleaved && axis != 2)) throw_delta_misfit(op, model, target, " (experts, in, out)" + half);
    const DimList expected =
        axis == 2 ? DimList{target[0], target[1], target[2] / 2} : DimList{target[0], target[2], target[1] / 2};
    if (delta != expected) throw_delta_misfit(op, model, target, " (experts, in, out)" + half);
    return;
  }
  // Some models store experts [E, out, in], others [E, in, out]: either orientation is accepted.
  if (delta != target && delta != DimList{target[0], target[2], target[1]}) {
    throw_delta_misfit(op, model, target, " (experts, in, out)");
  }
}

void check_matrix_fit(const MergeOp& op, const ModelLayout& model, const DimList& target) {
  const DimList delta = merge_op_delta_shape(op);
  if (op.slice_start >= 0) {
    const std::int64_t end = op.slice_start + delta[0];
    const std::string rows = " at rows " + std::to_string(op.slice_start) + ".." + std::to_string(end);
    if (target.size() != 2 || delta[1] != target[1] || end > target[0]) throw_delta_misfit(op, model, target, rows);
    return;
  }
  if (delta != target) throw_delta_misfit(op, model, target, "");
}

}  // namespace

std::vector<std::int64_t> merge_op_delta_shape(const MergeOp& op) {
  const DimList& a = op.a->shape;
  const DimList& b = op.b->shape;
  if (op.expert_3d) return {std::max(a[0], b[0]), a[2], b[1]};
  if (op.expert >= 0) return {b[1], a[2]};
  return {b[0], a[1]};
}

void validate_merge_op_shapes(const MergePlan& plan, const ModelLayout& model) {
  for (const auto& [target, ops] : plan.ops) {
    const DimList* target_shape = weight_shape(model, target);
    if (target_shape == nullptr) {
      throw error(errc::invalid_argument,
                  "merge plan targets '" + target + "', which " + model.directory.string() + " does not have");
    }
    for (const MergeOp& op : ops) {
      const std::size_t dims = op.expert_3d || op.expert >= 0 ? 3 : 2;
      if (op.a->shape.size() != dims || op.b->shape.size() != dims) {
        throw error(errc::invalid_argument, "adapter '" + op.adapter_name + "': lora_A " + format_shape(op.a->shape) +
                                                " and lora_B " + format_shape(op.b->shape) + " are not " +
                                                std::to_string(dims) + "-D");
      }
      if (op.expert_3d) {
        check_expert_3d_fit(op, model, *target_shape);
      } else {
        check_matrix_fit(op, model, *target_shape);
      }
    }
  }
}

}  // namespace tinker::weights::detail
