// Each kernel is written once, over the compilers' generic vector types (GCC and Clang lower them
// to whatever the function's target supports), and stamped out in three functions compiled for
// AVX-512, AVX2+FMA and the baseline; `kernel_set()` picks one per process from cpuid. The
// vector types appear only inside the kernels, never in a signature, so no ABI depends on them.
#include "weights/merge_kernels.hpp"

#include <cstdint>
#include <cstring>

namespace tinker::weights::detail::kernels {
namespace merge_kernel_impl {

// GCC ignores vector_size in an alias template with a dependent size, but honours it in a typedef
// member of a class template.
template <std::size_t Lanes>
struct Vec {
  typedef float F __attribute__((vector_size(Lanes * sizeof(float))));
  typedef std::uint32_t U32 __attribute__((vector_size(Lanes * sizeof(std::uint32_t))));
  typedef std::uint16_t U16 __attribute__((vector_size(Lanes * sizeof(std::uint16_t))));
};

// Four rows by two vectors of accumulators stay in registers; each vector of `vecs` loaded is
// used four times, each coefficient broadcast twice.
template <std::size_t Lanes>
[[gnu::always_inline]] inline void low_rank_rows_body(float* delta, std::size_t len, const float* coef,
                                                      std::size_t rank, const float* vecs,
                                                      std::size_t vec_stride) noexcept {
  using F = typename Vec<Lanes>::F;
  static_assert(rows_per_call == 4);
  const float* c0 = coef;
  const float* c1 = coef + rank;
  const float* c2 = coef + 2 * rank;
  const float* c3 = coef + 3 * rank;
  float* d0 = delta;
  float* d1 = delta + len;
  float* d2 = delta + 2 * len;
  float* d3 = delta + 3 * len;
  std::size_t j = 0;
  for (; j + 2 * Lanes <= len; j += 2 * Lanes) {
    F a00{}, a01{}, a10{}, a11{}, a20{}, a21{}, a30{}, a31{};
    for (std::size_t k = 0; k < rank; ++k) {
      F v0;
      F v1;
      std::memcpy(&v0, vecs + k * vec_stride + j, sizeof v0);
      std::memcpy(&v1, vecs + k * vec_stride + j + Lanes, sizeof v1);
      a00 = a00 + c0[k] * v0;
      a01 = a01 + c0[k] * v1;
      a10 = a10 + c1[k] * v0;
      a11 = a11 + c1[k] * v1;
      a20 = a20 + c2[k] * v0;
      a21 = a21 + c2[k] * v1;
      a30 = a30 + c3[k] * v0;
      a31 = a31 + c3[k] * v1;
    }
    std::memcpy(d0 + j, &a00, sizeof a00);
    std::memcpy(d0 + j + Lanes, &a01, sizeof a01);
    std::memcpy(d1 + j, &a10, sizeof a10);
    std::memcpy(d1 + j + Lanes, &a11, sizeof a11);
    std::memcpy(d2 + j, &a20, sizeof a20);
    std::memcpy(d2 + j + Lanes, &a21, sizeof a21);
    std::memcpy(d3 + j, &a30, sizeof a30);
    std::memcpy(d3 + j + Lanes, &a31, sizeof a31);
  }
  for (; j < len; ++j) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      const float v = vecs[k * vec_stride + j];
      s0 = s0 + c0[k] * v;
      s1 = s1 + c1[k] * v;
      s2 = s2 + c2[k] * v;
      s3 = s3 + c3[k] * v;
    }
    d0[j] = s0;
    d1[j] = s1;
    d2[j] = s2;
    d3[j] = s3;
  }
}

template <std::size_t Lanes>
[[gnu::always_inline]] inline void add_strided_body(float* dst, std::size_t stride, const float* src,
                                                    std::size_t count) noexcept {
  using F = typename Vec<Lanes>::F;
  std::size_t j = 0;
  if (stride == 1) {
    for (; j + Lanes <= count; j += Lanes) {
      F a;
      F b;
      std::memcpy(&a, dst + j, sizeof a);
      std::memcpy(&b, src + j, sizeof b);
      a = a + b;
      std::memcpy(dst + j, &a, sizeof a);
    }
  }
  for (; j < count; ++j) dst[j * stride] += src[j];
}

template <std::size_t Lanes>
[[gnu::always_inline]] inline void bf16_to_f32_body(const std::byte* in, float* out, std::size_t count) noexcept {
  using U16 = typename Vec<Lanes>::U16;
  using U32 = typename Vec<Lanes>::U32;
  std::size_t i = 0;
  for (; i + Lanes <= count; i += Lanes) {
    U16 half;
    std::memcpy(&half, in + 2 * i, sizeof half);
    const U32 wide = __builtin_convertvector(half, U32) << 16;
    std::memcpy(out + i, &wide, sizeof wide);
  }
  for (; i < count; ++i) {
    std::uint16_t half = 0;
    std::memcpy(&half, in + 2 * i, sizeof half);
    const std::uint32_t wide = std::uint32_t{half} << 16;
    std::memcpy(out + i, &wide, sizeof wide);
  }
}

inline std::uint16_t round_to_bf16(std::uint32_t bits) noexcept {
  if ((bits & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x0040U);
  return static_cast<std::uint16_t>((bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16);
}

template <std::size_t Lanes>
[[gnu::always_inline]] inline void f32_to_bf16_body(const float* in, std::byte* out, std::size_t count) noexcept {
  using U16 = typename Vec<Lanes>::U16;
  using U32 = typename Vec<Lanes>::U32;
  std::size_t i = 0;
  for (; i + Lanes <= count; i += Lanes) {
    U32 bits;
    std::memcpy(&bits, in + i, sizeof bits);
    // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate. A NaN keeps its
    // top bits with the quiet bit set (rounding could carry it into an infinity).
    const auto is_nan = reinterpret_cast<U32>((bits & 0x7fffffffU) > 0x7f800000U);
    const U32 rounded = (bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16;
    const U32 quiet = (bits >> 16) | 0x0040U;
    const U32 result = (quiet & is_nan) | (rounded & ~is_nan);
    const U16 narrow = __builtin_convertvector(result, U16);
    std::memcpy(out + 2 * i, &narrow, sizeof narrow);
  }
  for (; i < count; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, in + i, sizeof bits);
    const std::uint16_t narrow = round_to_bf16(bits);
    std::memcpy(out + 2 * i, &narrow, sizeof narrow);
  }
}

// One function per kernel and instruction set; TINKER_MERGE_KERNELS stamps them out.
#define TINKER_MERGE_KERNELS(suffix, lanes, attribute)                                                                \
  attribute void low_rank_rows_##suffix(float* delta, std::size_t len, const float* coef, std::size_t rank,           \
                                        const float* vecs, std::size_t vec_stride) noexcept {                         \
    low_rank_rows_body<lanes>(delta, len, coef, rank, vecs, vec_stride);                                              \
  }                                                                                                                   \
  attribute void add_strided_##suffix(float* dst, std::size_t stride, const float* src, std::size_t count) noexcept { \
    add_strided_body<lanes>(dst, stride, src, count);                                                                 \
  }                                                                                                                   \
  attribute void bf16_to_f32_##suffix(const std::byte* in, float* out, std::size_t count) noexcept {                  \
    bf16_to_f32_body<lanes>(in, out, count);                                                                          \
  }                                                                                                                   \
  attribute void f32_to_bf16_##suffix(const float* in, std::byte* out, std::size_t count) noexcept {                  \
    f32_to_bf16_body<lanes>(in, out, count);                                                                          \
  }                                                                                                                   \
  constexpr KernelSet kernels_##suffix{low_rank_rows_##suffix, add_strided_##suffix, bf16_to_f32_##suffix,            \
                                       f32_to_bf16_##suffix, #suffix};

TINKER_MERGE_KERNELS(baseline, 4, )
#if defined(__x86_64__)
TINKER_MERGE_KERNELS(avx2, 8, __attribute__((target("avx2,fma"))))
TINKER_MERGE_KERNELS(avx512, 16, __attribute__((target("avx512f"))))
#endif
#undef TINKER_MERGE_KERNELS

bool cpu_has_avx512() noexcept {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool cpu_has_avx2() noexcept {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

std::vector<KernelSet> supported_sets() {
  std::vector<KernelSet> sets;
#if defined(__x86_64__)
  if (cpu_has_avx512()) sets.push_back(kernels_avx512);
  if (cpu_has_avx2()) sets.push_back(kernels_avx2);
#endif
  sets.push_back(kernels_baseline);
  return sets;
}

const KernelSet& kernel_set() noexcept {
#if defined(__x86_64__)
  static const KernelSet chosen = cpu_has_avx512() ? kernels_avx512 : cpu_has_avx2() ? kernels_avx2 : kernels_baseline;
#else
  static const KernelSet chosen = kernels_baseline;
#endif
  return chosen;
}

}  // namespace merge_kernel_impl

void low_rank_rows(float* delta, std::size_t len, const float* coef, std::size_t rank, const float* vecs,
                   std::size_t vec_stride) noexcept {
  merge_kernel_impl::kernel_set().low_rank_rows(delta, len, coef, rank, vecs, vec_stride);
}

void add_strided(float* dst, std::size_t stride, const float* src, std::size_t count) noexcept {
  merge_kernel_impl::kernel_set().add_strided(dst, stride, src, count);
}

void bf16_to_f32(const std::byte* in, float* out, std::size_t count) noexcept {
  merge_kernel_impl::kernel_set().bf16_to_f32(in, out, count);
}

void f32_to_bf16(const float* in, std::byte* out, std::size_t count) noexcept {
  merge_kernel_impl::kernel_set().f32_to_bf16(in, out, count);
}

const char* instruction_set() noexcept {
  return merge_kernel_impl::kernel_set().name;
}

std::vector<KernelSet> supported_kernel_sets() {
  return merge_kernel_impl::supported_sets();
}

}  // namespace tinker::weights::detail::kernels
