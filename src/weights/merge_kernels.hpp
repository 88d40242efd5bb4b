// The arithmetic of a merge, vectorised: the LoRA delta of a few rows at a time, and BF16 <-> f32
// conversion of whole rows. The merge spends nearly all its CPU time here, so each function has
// AVX-512, AVX2+FMA and baseline forms chosen once from the CPU (the project builds for baseline
// x86-64, where GCC 12 at -O2 would not vectorise these loops at all).
//
// Results depend only on the inputs and the CPU's instruction set, never on how rows are grouped
// or split between threads: every output element is summed over the rank in the same order.
#pragma once

#include <cstddef>
#include <vector>

namespace tinker::weights::detail::kernels {

/// Rows computed together by `low_rank_rows`.
inline constexpr std::size_t rows_per_call = 4;

/// delta[i * len + j] = sum over k < rank of coef[i * rank + k] * vecs[k * vec_stride + j], for
/// i < rows_per_call and j < len, the sum taken in order of k (each product added to the running
/// sum, fused where the CPU has FMA). `delta` holds rows_per_call * len floats.
void low_rank_rows(float* delta, std::size_t len, const float* coef, std::size_t rank, const float* vecs,
                   std::size_t vec_stride) noexcept;

/// dst[j * stride] += src[j] for j < count.
void add_strided(float* dst, std::size_t stride, const float* src, std::size_t count) noexcept;

/// `count` BF16 values (little-endian bytes) to float: exact.
void bf16_to_f32(const std::byte* in, float* out, std::size_t count) noexcept;
/// `count` floats to BF16, rounded to nearest, ties to even; NaN stays a quiet NaN. The same bits
/// as safetensors::from_f32 (dtypes.cpp), which the tests check.
void f32_to_bf16(const float* in, std::byte* out, std::size_t count) noexcept;

/// The instruction set the functions above use on this CPU: "avx512", "avx2" or "baseline".
const char* instruction_set() noexcept;

/// One form of the functions above, for the tests to check each form the CPU can run.
struct KernelSet {
  void (*low_rank_rows)(float*, std::size_t, const float*, std::size_t, const float*, std::size_t) noexcept;
  void (*add_strided)(float*, std::size_t, const float*, std::size_t) noexcept;
  void (*bf16_to_f32)(const std::byte*, float*, std::size_t) noexcept;
  void (*f32_to_bf16)(const float*, std::byte*, std::size_t) noexcept;
  const char* name;
};
/// Every form this CPU can run, the one in use first.
std::vector<KernelSet> supported_kernel_sets();

}  // namespace tinker::weights::detail::kernels
