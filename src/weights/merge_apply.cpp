// A LoRA delta added to a base tensor, with the semantics of the cookbook's apply_merge_op
// (tinker_cookbook/weights/_merge.py):
// - a 2-D op adds scale * B A ([out, r] x [r, in]) to the whole target [out, in], or to rows
//   [slice_start, slice_start + out) of a fused target (Qwen3.5's in_proj_qkv);
// - a per-expert op does the same with expert e's A and B (a side with one expert is shared);
// - an expert_3d op adds every expert's delta, bmm(A^T, B^T) = [E, in, out], to a 3-D target:
//   into the gate (0) or up (1) half of a fused gate_up_proj, interleaved along the last dimension
//   (gpt-oss: g0, u0, g1, u1, ...) or concatenated along the axis that is twice the delta's
//   (transposing the delta when that is axis 1), else to the whole target, transposed when the
//   target stores [E, out, in].
// The cookbook pre-scales B in f32 before the product; so does prepare(). Every case comes down
// to one shape of work: a target row gets sum_k c_k v_k with r coefficients c and r vectors v,
// rows of A or of (scale * B) transposed.
#include "weights/merge_apply.hpp"

#include "weights/merge_kernels.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <exception>
#include <thread>

namespace tinker::weights::detail {
namespace merge_apply_impl {

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t element_count(std::span<const std::int64_t> shape) {
  std::int64_t count = 1;
  for (const auto dim : shape) count *= dim;
  return count;
}

// A 2-D factor seen as one block of a 3-D one: [r, in] -> [1, r, in].
std::vector<std::int64_t> as_3d(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 2) return {1, shape[0], shape[1]};
  return shape;
}

}  // namespace merge_apply_impl

using merge_apply_impl::shape_text;

TargetMerge::TargetMerge(std::string name, std::span<const std::int64_t> shape, const std::vector<MergeOp>& ops)
    : name_(std::move(name)), shape_(shape.begin(), shape.end()) {
  if (shape_.size() < 2 || shape_.size() > 3 ||
      std::any_of(shape_.begin(), shape_.end(), [](auto d) { return d < 0; })) {
    throw error(errc::invalid_argument, "base tensor '" + name_ + "' of shape " + shape_text(shape_) +
                                            " cannot receive a LoRA delta (not 2-D or 3-D)");
  }
  row_length_ = shape_.back();
  rows_ = merge_apply_impl::element_count(std::span(shape_).first(shape_.size() - 1));
  ops_.reserve(ops.size());
  for (const auto& op : ops) ops_.push_back(prepare(op));
}

error TargetMerge::misfit(const MergeOp& op, const std::string& why) const {
  return error(errc::invalid_argument, "base tensor '" + name_ + "' " + shape_text(shape_) + ": adapter tensor '" +
                                           op.adapter_name + "': " + why);
}

TargetMerge::PreparedOp TargetMerge::prepare(const MergeOp& op) const {
  if (!op.a || !op.b) throw misfit(op, "lora_A or lora_B missing");
  for (const auto* factor : {op.a.get(), op.b.get()}) {
    if (factor->shape.size() < 2 || factor->shape.size() > 3 ||
        merge_apply_impl::element_count(factor->shape) != static_cast<std::int64_t>(factor->values.size())) {
      throw misfit(op, "lora tensor of shape " + shape_text(factor->shape) + " is not a 2-D or 3-D matrix");
    }
  }
  const auto a_shape = merge_apply_impl::as_3d(op.a->shape);  // [Ea, r, in]
  const auto b_shape = merge_apply_impl::as_3d(op.b->shape);  // [Eb, out, r]
  const Dims dims{a_shape[0], a_shape[1], a_shape[2], b_shape[0], b_shape[1]};
  if (b_shape[2] != dims.rank) {
    throw misfit(
        op, "lora_A " + shape_text(op.a->shape) + " and lora_B " + shape_text(op.b->shape) + " disagree on the rank");
  }
  PreparedOp prepared;
  prepared.rank = dims.rank;
  prepared.a = op.a;
  if (op.expert_3d) {
    prepare_expert_op(op, dims, prepared);
  } else {
    prepare_matrix_op(op, dims, prepared);
  }
  return prepared;
}

// Form R: target row o gets sum_k (scale B[o, k]) A[k, :]: coefficients from scale * B kept as
// [E, out, r] (blocks [b_first, b_first + b_blocks) of B), vectors the rows of A.
void TargetMerge::use_rows_of_a(const MergeOp& op, const Dims& dims, std::int64_t b_first, std::int64_t b_blocks,
                                std::int64_t a_first, std::int64_t a_blocks, PreparedOp& prepared) {
  prepared.scaled_b.resize(static_cast<std::size_t>(b_blocks * dims.out * dims.rank));
  const float* source = op.b->values.data() + b_first * dims.out * dims.rank;
  for (std::size_t i = 0; i < prepared.scaled_b.size(); ++i) prepared.scaled_b[i] = op.scale * source[i];
  prepared.delta_length = dims.in;
  prepared.coefficients = {Factor::scaled_b, 0, b_blocks, dims.out * dims.rank, dims.rank, 1};
  prepared.vectors = {Factor::a, a_first * dims.rank * dims.in, a_blocks, dims.rank * dims.in, 0, dims.in};
}

// Form T: target row i gets sum_k A[k, i] (scale B^T)[k, :]: coefficients a column of A,
// vectors the rows of scale * B transposed to [E, r, out].
void TargetMerge::use_rows_of_bt(const MergeOp& op, const Dims& dims, PreparedOp& prepared) {
  const std::int64_t rank = dims.rank, out = dims.out;
  prepared.scaled_b.resize(static_cast<std::size_t>(dims.b_experts * rank * out));
  for (std::int64_t e = 0; e < dims.b_experts; ++e) {
    const float* source = op.b->values.data() + e * out * rank;
    float* target = prepared.scaled_b.data() + e * rank * out;
    for (std::int64_t o = 0; o < out; ++o) {
      for (std::int64_t k = 0; k < rank; ++k) target[k * out + o] = op.scale * source[o * rank + k];
    }
  }
  prepared.delta_length = out;
  prepared.coefficients = {Factor::a, 0, dims.a_experts, rank * dims.in, 1, dims.in};
  prepared.vectors = {Factor::scaled_b, 0, dims.b_experts, rank * out, 0, out};
}

// A 2-D op, or one expert of 3-D factors, into a 2-D target (whole, or a block of its rows).
void TargetMerge::prepare_matrix_op(const MergeOp& op, const Dims& dims, PreparedOp& prepared) const {
  if (shape_.size() != 2) {
    throw misfit(op, "a 2-D delta cannot be added to a " + std::to_string(shape_.size()) + "-D tensor");
  }
  const std::int64_t expert = op.expert < 0 ? 0 : op.expert;
  if ((dims.a_experts > 1 && expert >= dims.a_experts) || (dims.b_experts > 1 && expert >= dims.b_experts)) {
    throw misfit(op, "expert " + std::to_string(op.expert) + " is out of range of lora_A " + shape_text(op.a->shape) +
                         " and lora_B " + shape_text(op.b->shape));
  }
  if (op.expert < 0 && (op.a->shape.size() != 2 || op.b->shape.size() != 2)) {
    throw misfit(op, "3-D lora tensors need an expert index");
  }
  const std::int64_t first = op.slice_start < 0 ? 0 : op.slice_start;
  const bool fits =
      shape_[1] == dims.in && (op.slice_start < 0 ? dims.out == shape_[0] : first + dims.out <= shape_[0]);
  if (!fits) {
    throw misfit(
        op, "the delta [" + std::to_string(dims.out) + ", " + std::to_string(dims.in) + "]" +
                (op.slice_start < 0 ? std::string()
                                    : " at rows " + std::to_string(first) + ".." + std::to_string(first + dims.out)) +
                " does not fit");
  }
  prepared.rows_per_expert = shape_[0];
  prepared.first_row = first;
  prepared.row_count = dims.out;
  use_rows_of_a(op, dims, dims.b_experts > 1 ? expert : 0, 1, dims.a_experts > 1 ? expert : 0, 1, prepared);
}

// Every expert at once into a 3-D target [E, t1, t2]: a half of a fused gate_up_proj, or the whole.
void TargetMerge::prepare_expert_op(const MergeOp& op, const Dims& dims, PreparedOp& prepared) const {
  if (op.slice_start >= 0) throw misfit(op, "a row slice is not supported for a 3-D expert delta");
  if (shape_.size() != 3) throw misfit(op, "a 3-D expert delta cannot be added to a 2-D tensor");
  const std::int64_t experts = shape_[0], t1 = shape_[1], t2 = shape_[2];
  if (op.a->shape.size() != 3 || op.b->shape.size() != 3 || (dims.a_experts != 1 && dims.a_experts != experts) ||
      (dims.b_experts != 1 && dims.b_experts != experts)) {
    throw misfit(op, "lora_A " + shape_text(op.a->shape) + " and lora_B " + shape_text(op.b->shape) +
                         " do not have one expert or one per expert of the target");
  }
  prepared.experts = experts;
  prepared.rows_per_expert = t1;
  const std::int64_t in = dims.in, out = dims.out;
  const auto delta_text =
      "the expert delta [" + std::to_string(experts) + ", " + std::to_string(in) + ", " + std::to_string(out) + "]";
  if (op.fused_proj_idx >= 0) {
    if (op.fused_proj_idx > 1) {
      throw misfit(op, "fused projection index " + std::to_string(op.fused_proj_idx) + " is not 0 or 1");
    }
    // The fused axis is the one twice the delta's (dimension 2 checked first, as the cookbook does).
    const bool axis2 = in == t1 && t2 == 2 * out;
    const bool axis1 = !axis2 && t2 == in && t1 == 2 * out;
    if (!axis1 && !axis2) throw misfit(op, delta_text + " fits neither half of the fused target");
    if (op.interleaved && !axis2) throw misfit(op, delta_text + ": an interleaved target must be [E, in, 2 * out]");
    if (axis2) {
      use_rows_of_bt(op, dims, prepared);
      prepared.row_count = t1;
      prepared.column_offset = op.interleaved ? op.fused_proj_idx : op.fused_proj_idx * out;
      prepared.column_stride = op.interleaved ? 2 : 1;
    } else {
      use_rows_of_a(op, dims, 0, dims.b_experts, 0, dims.a_experts, prepared);
      prepared.first_row = op.fused_proj_idx * out;
      prepared.row_count = out;
    }
    return;
  }
  if (t1 == in && t2 == out) {  // as bmm gives it, checked first as the cookbook does
    use_rows_of_bt(op, dims, prepared);
  } else if (t1 == out && t2 == in) {
    use_rows_of_a(op, dims, 0, dims.b_experts, 0, dims.a_experts, prepared);
  } else {
    throw misfit(op, delta_text + " fits the target neither as it is nor transposed");
  }
  prepared.row_count = t1;
}

void TargetMerge::add_to_rows(std::span<float> values, std::int64_t first_row, MergeScratch& scratch) const {
  if (values.empty()) return;
  const auto row_count = row_length_ == 0 ? 0 : static_cast<std::int64_t>(values.size()) / row_length_;
  if (row_count * row_length_ != static_cast<std::int64_t>(values.size()) || first_row < 0 ||
      first_row + row_count > rows_) {
    throw error(errc::invalid_argument, "base tensor '" + name_ + "': rows " + std::to_string(first_row) + ".." +
                                            std::to_string(first_row + row_count) + " are not rows of " +
                                            shape_text(shape_));
  }
  for (const auto& op : ops_) add_op_to_rows(op, values, first_row, scratch);
}

void TargetMerge::add_op_to_rows(const PreparedOp& op, std::span<float> values, std::int64_t first_row,
                                 MergeScratch& scratch) const {
  constexpr auto group = static_cast<std::int64_t>(kernels::rows_per_call);
  const std::int64_t end_row = first_row + static_cast<std::int64_t>(values.size()) / row_length_;
  const auto rank = static_cast<std::size_t>(op.rank);
  scratch.coefficients.resize(kernels::rows_per_call * rank);
  scratch.delta.resize(kernels::rows_per_call * static_cast<std::size_t>(op.delta_length));
  const auto factor_data = [&](const FactorView& view, std::int64_t expert) {
    const float* base = view.factor == Factor::a ? op.a->values.data() : op.scaled_b.data();
    return base + view.offset + (view.blocks > 1 ? expert * view.block_stride : 0);
  };
  const std::int64_t first_expert = first_row / op.rows_per_expert;
  const std::int64_t last_expert = std::min(op.experts, (end_row + op.rows_per_expert - 1) / op.rows_per_expert);
  for (std::int64_t expert = first_expert; expert < last_expert; ++expert) {
    const std::int64_t block_start = expert * op.rows_per_expert + op.first_row;
    const std::int64_t begin = std::max(block_start, first_row);
    const std::int64_t end = std::min(block_start + op.row_count, end_row);
    if (begin >= end) continue;
    const float* coefficients = factor_data(op.coefficients, expert);
    const float* vectors = factor_data(op.vectors, expert);
    for (std::int64_t row = begin; row < end; row += group) {
      const std::int64_t rows_here = std::min(group, end - row);
      // Rows past the end of this group get zero coefficients: computed, never added.
      std::fill(scratch.coefficients.begin(), scratch.coefficients.end(), 0.0F);
      for (std::int64_t i = 0; i < rows_here; ++i) {
        const float* source = coefficients + (row + i - block_start) * op.coefficients.row_stride;
        for (std::size_t k = 0; k < rank; ++k) {
          scratch.coefficients[static_cast<std::size_t>(i) * rank + k] =
              source[static_cast<std::int64_t>(k) * op.coefficients.rank_stride];
        }
      }
      kernels::low_rank_rows(scratch.delta.data(), static_cast<std::size_t>(op.delta_length),
                             scratch.coefficients.data(), rank, vectors,
                             static_cast<std::size_t>(op.vectors.rank_stride));
      for (std::int64_t i = 0; i < rows_here; ++i) {
        float* target = values.data() + (row + i - first_row) * row_length_ + op.column_offset;
        kernels::add_strided(target, static_cast<std::size_t>(op.column_stride),
                             scratch.delta.data() + i * op.delta_length, static_cast<std::size_t>(op.delta_length));
      }
    }
  }
}

void apply_merge_ops(std::span<float> target, std::span<const std::int64_t> shape, const std::vector<MergeOp>& ops,
                     unsigned threads) {
  if (ops.empty()) return;
  const TargetMerge merge(ops.front().target, shape, ops);
  if (static_cast<std::int64_t>(target.size()) != merge.rows() * merge.row_length()) {
    throw error(errc::invalid_argument, "base tensor '" + merge.name() + "': " + std::to_string(target.size()) +
                                            " values for shape " + shape_text(shape));
  }
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  const auto workers =
      static_cast<std::int64_t>(std::min<std::int64_t>(threads, std::max<std::int64_t>(merge.rows(), 1)));
  const auto rows_of = [&](std::int64_t worker) { return merge.rows() * worker / workers; };
  const auto run = [&](std::int64_t worker) {
    MergeScratch scratch;
    const auto first = rows_of(worker);
    const auto length = static_cast<std::size_t>((rows_of(worker + 1) - first) * merge.row_length());
    merge.add_to_rows(target.subspan(static_cast<std::size_t>(first * merge.row_length()), length), first, scratch);
  };
  if (workers <= 1) {
    run(0);
    return;
  }
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(workers));
  {
    std::vector<std::jthread> pool;
    for (std::int64_t worker = 1; worker < workers; ++worker) {
      pool.emplace_back([&, worker] {
        try {
          run(worker);
        } catch (...) {
          failures[static_cast<std::size_t>(worker)] = std::current_exception();
        }
      });
    }
    try {
      run(0);
    } catch (...) {
      failures[0] = std::current_exception();
    }
  }
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace tinker::weights::detail
