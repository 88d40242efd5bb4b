// The numeric inner loops of the tiny model, kept in one translation unit so that a build can
// optimise them on their own (e.g. -O2 for this file in Debug builds) without changing results:
// the code uses no FMA-prone or reassociable constructs beyond what the C++ source states.
#pragma once

#include <cstddef>

namespace tinker::local::model::kernels {

/// sum_i a[i] * b[i], accumulated in four interleaved partial sums (fixed order).
double dot(const double* a, const double* b, int n) noexcept;
/// y[i] += alpha * x[i].
void axpy(double alpha, const double* x, double* y, int n) noexcept;
/// y[i] += alpha * x[i] for float x.
void axpy(double alpha, const float* x, double* y, int n) noexcept;
/// sum_i a[i] * b[i] for float b.
double dot(const double* a, const float* b, int n) noexcept;

/// y = W x for a row-major [rows, cols] matrix.
void matvec(const double* w, int rows, int cols, const double* x, double* y) noexcept;
/// y += W^T x.
void add_matvec_transposed(const double* w, int rows, int cols, const double* x, double* y) noexcept;
/// G += dy x^T.
void add_outer(double* g, int rows, int cols, const double* dy, const double* x) noexcept;

/// Overwrites z (n entries) with log_softmax(z).
void log_softmax_in_place(double* z, int n) noexcept;
/// dz[i] = -scale * exp(logprobs[i]) (the softmax part of d logprob[target] / dz, times scale).
void scaled_negative_softmax(const double* logprobs, double scale, double* dz, int n) noexcept;

}  // namespace tinker::local::model::kernels
