// A merge plan as lines of text ("target <- adapter module, expert 3, 3-D gate interleaved, rows
// from 8"), so a test compares a plan with a hand-written list.
#pragma once

#include "unit/weights/family_models.hpp"
#include "weights/lora_plan.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace tinker::test::lora_fixtures {

inline std::string describe_op(const weights::detail::MergeOp& op) {
  std::string text = op.target + " <- " + op.adapter_name;
  if (op.expert >= 0) text += " expert " + std::to_string(op.expert);
  if (op.expert_3d) text += " 3-D";
  if (op.fused_proj_idx == 0) text += " gate";
  if (op.fused_proj_idx == 1) text += " up";
  if (op.interleaved) text += " interleaved";
  if (op.slice_start >= 0) text += " rows from " + std::to_string(op.slice_start);
  return text;
}

/// Every op of the plan described, sorted; checks each op is filed under its own target.
inline std::vector<std::string> describe_plan(const weights::detail::MergePlan& plan) {
  std::vector<std::string> lines;
  for (const auto& [target, ops] : plan.ops) {
    for (const auto& op : ops) {
      EXPECT_EQ(op.target, target);
      lines.push_back(describe_op(op));
    }
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

inline std::vector<std::string> sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

/// Plans `family` as written to disk under `root`.
inline weights::detail::MergePlan plan_family(const std::filesystem::path& root, const FamilyCase& family) {
  write_family(root, family);
  return weights::detail::plan_merge(weights::detail::load_tinker_adapter(root / "adapter"),
                                     weights::detail::read_model_layout(root / "base"));
}

}  // namespace tinker::test::lora_fixtures
