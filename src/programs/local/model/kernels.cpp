// The numeric inner loops of the tiny model. Written for -O0 too (the test suite runs there
// under sanitizers): raw pointers, four-way unrolled dot products and axpys.
#include "programs/local/model/kernels.hpp"

#include <algorithm>
#include <cmath>

namespace tinker::local::model::kernels {
namespace {

template <class B>
double dot_impl(const double* a, const B* b, int n) noexcept {
  double s0 = 0.0;
  double s1 = 0.0;
  double s2 = 0.0;
  double s3 = 0.0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

template <class X>
void axpy_impl(double alpha, const X* x, double* y, int n) noexcept {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    y[i] += alpha * x[i];
    y[i + 1] += alpha * x[i + 1];
    y[i + 2] += alpha * x[i + 2];
    y[i + 3] += alpha * x[i + 3];
  }
  for (; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace

double dot(const double* a, const double* b, int n) noexcept {
  return dot_impl(a, b, n);
}
double dot(const double* a, const float* b, int n) noexcept {
  return dot_impl(a, b, n);
}
void axpy(double alpha, const double* x, double* y, int n) noexcept {
  axpy_impl(alpha, x, y, n);
}
void axpy(double alpha, const float* x, double* y, int n) noexcept {
  axpy_impl(alpha, x, y, n);
}

void matvec(const double* w, int rows, int cols, const double* x, double* y) noexcept {
  for (int o = 0; o < rows; ++o, w += cols) y[o] = dot_impl(w, x, cols);
}

void add_matvec_transposed(const double* w, int rows, int cols, const double* x, double* y) noexcept {
  for (int o = 0; o < rows; ++o, w += cols) {
    if (x[o] != 0.0) axpy_impl(x[o], w, y, cols);
  }
}

void add_outer(double* g, int rows, int cols, const double* dy, const double* x) noexcept {
  for (int o = 0; o < rows; ++o, g += cols) {
    if (dy[o] != 0.0) axpy_impl(dy[o], x, g, cols);
  }
}

void log_softmax_in_place(double* z, int n) noexcept {
  const double max_z = *std::max_element(z, z + n);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += std::exp(z[i] - max_z);
  const double log_norm = max_z + std::log(sum);
  for (int i = 0; i < n; ++i) z[i] -= log_norm;
}

void scaled_negative_softmax(const double* logprobs, double scale, double* dz, int n) noexcept {
  for (int i = 0; i < n; ++i) dz[i] = -scale * std::exp(logprobs[i]);
}

}  // namespace tinker::local::model::kernels
