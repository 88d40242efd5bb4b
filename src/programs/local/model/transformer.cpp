// The transformer's forward step (one position at a time, with the activations as KV cache) and
// its backward pass to the adapted matrices. The inner loops live in kernels.cpp; the loops here
// use raw pointers because the test suite runs at -O0 under sanitizers.
#include "programs/local/model/kernels.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tinker::local::model {
namespace {

double* grow(std::vector<double>& values, int n) {
  values.resize(values.size() + static_cast<std::size_t>(n));
  return values.data() + values.size() - static_cast<std::size_t>(n);
}

// Fixed sinusoidal position encoding, computed on the fly so there is no length cap.
void add_position(int position, int d, double* h) {
  for (int i = 0; i < d; i += 2) {
    const double angle = position * std::pow(10000.0, -static_cast<double>(i) / d);
    h[i] += std::sin(angle);
    if (i + 1 < d) h[i + 1] += std::cos(angle);
  }
}

}  // namespace

void matvec(const Matrix& w, const double* x, double* y) noexcept {
  kernels::matvec(w.data(), w.rows, w.cols, x, y);
}

void add_matvec_transposed(const Matrix& w, const double* x, double* y) noexcept {
  kernels::add_matvec_transposed(w.data(), w.rows, w.cols, x, y);
}

void add_outer(Matrix& g, const double* dy, const double* x) noexcept {
  kernels::add_outer(g.data(), g.rows, g.cols, dy, x);
}

namespace {

// Runs position `acts.length` whose input embedding (before the position encoding) is `embedding`.
void step_embedded(const EffectiveWeights& weights, const double* embedding, Activations& acts, double* logprobs) {
  const int d = acts.d;
  const int m = acts.m;
  const int t = acts.length;
  const BaseModel::Weights& base = weights.base;

  double* h0 = grow(acts.h0, d);
  std::copy_n(embedding, d, h0);
  add_position(t, d, h0);

  double* q = grow(acts.q, d);
  grow(acts.k, d);
  grow(acts.v, d);
  matvec(weights.get(Target::query), h0, q);
  matvec(base.wk, h0, acts.k.data() + static_cast<std::size_t>(t) * d);
  matvec(weights.get(Target::value), h0, acts.v.data() + static_cast<std::size_t>(t) * d);

  // Causal attention of position t over positions 0..t.
  std::vector<double> attention(static_cast<std::size_t>(t) + 1);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  const double* keys = acts.k.data();
  double max_score = -HUGE_VAL;
  for (int j = 0; j <= t; ++j) {
    attention[j] = kernels::dot(q, keys + static_cast<std::size_t>(j) * d, d) * inv_sqrt_d;
    max_score = std::max(max_score, attention[j]);
  }
  double total = 0.0;
  for (double& a : attention) total += (a = std::exp(a - max_score));
  for (double& a : attention) a /= total;

  double* c = grow(acts.c, d);
  const double* values = acts.v.data();
  for (int j = 0; j <= t; ++j) kernels::axpy(attention[j], values + static_cast<std::size_t>(j) * d, c, d);
  if (acts.keep_for_backward) acts.attention.insert(acts.attention.end(), attention.begin(), attention.end());

  double* h1 = grow(acts.h1, d);
  matvec(base.wo, c, h1);
  for (int i = 0; i < d; ++i) h1[i] += h0[i];

  double* g = grow(acts.g, m);
  matvec(weights.get(Target::mlp_up), h1, g);
  for (int i = 0; i < m; ++i) g[i] = std::tanh(g[i]);

  double* h2 = grow(acts.h2, d);
  matvec(weights.get(Target::mlp_down), g, h2);
  for (int i = 0; i < d; ++i) h2[i] += h1[i];

  matvec(weights.get(Target::unembed), h2, logprobs);
  kernels::log_softmax_in_place(logprobs, weights.arch.vocab_size);
  acts.length = t + 1;
}

}  // namespace

void step(const EffectiveWeights& weights, TokenId token, Activations& acts, double* logprobs) {
  step_embedded(weights, weights.base.embed.row(token), acts, logprobs);
}

void step(const EffectiveWeights& weights, const InputSequence& sequence, std::size_t position, Activations& acts,
          double* logprobs) {
  if (!sequence.is_image(position)) return step(weights, sequence.tokens[position], acts, logprobs);
  const Matrix& projection = weights.base.image_projection;
  if (projection.rows != acts.d) throw std::logic_error("tiny_lm: an image position for a model without vision");
  std::vector<double> embedding(static_cast<std::size_t>(acts.d));
  matvec(projection, sequence.features(position), embedding.data());
  step_embedded(weights, embedding.data(), acts, logprobs);
}

void backward(const EffectiveWeights& weights, const Activations& acts, const std::vector<TokenId>& targets,
              const std::vector<double>& logprobs, const std::vector<double>& dlogprob, WeightGrads& grads) {
  const int d = acts.d;
  const int m = acts.m;
  const int n = acts.length;
  const int vocab = weights.arch.vocab_size;
  const bool attn = grads.has(Target::query) || grads.has(Target::value);
  const bool mlp_or_attn = attn || grads.has(Target::mlp_up) || grads.has(Target::mlp_down);

  std::vector<double> dz(static_cast<std::size_t>(vocab));
  std::vector<double> dh2(static_cast<std::size_t>(d));
  std::vector<double> dg(static_cast<std::size_t>(m));
  std::vector<double> dh1(static_cast<std::size_t>(d));
  std::vector<double> dc(attn ? static_cast<std::size_t>(n) * d : 0, 0.0);  // dL/dc_t, per position

  // K targets per position (top-k cross-entropy); 1 for the usual (N,) targets.
  const std::size_t k = n == 0 ? 1 : targets.size() / static_cast<std::size_t>(n);
  for (int t = 0; t < n; ++t) {
    const double* dlp = dlogprob.data() + static_cast<std::size_t>(t) * k;
    const TokenId* target = targets.data() + static_cast<std::size_t>(t) * k;
    double dlp_sum = 0.0;
    bool any = false;
    for (std::size_t j = 0; j < k; ++j) {
      dlp_sum += dlp[j];
      any = any || dlp[j] != 0.0;
    }
    if (!any) continue;
    // d logprob[target_j] / dz = onehot(target_j) - softmax(z), summed over the K targets.
    const double* lp = logprobs.data() + static_cast<std::size_t>(t) * vocab;
    kernels::scaled_negative_softmax(lp, dlp_sum, dz.data(), vocab);
    for (std::size_t j = 0; j < k; ++j) dz[target[j]] += dlp[j];
    const double* h2 = acts.h2.data() + static_cast<std::size_t>(t) * d;
    if (grads.has(Target::unembed)) add_outer(grads.of[index_of(Target::unembed)], dz.data(), h2);
    if (!mlp_or_attn) continue;

    std::fill(dh2.begin(), dh2.end(), 0.0);
    add_matvec_transposed(weights.get(Target::unembed), dz.data(), dh2.data());
    const double* g = acts.g.data() + static_cast<std::size_t>(t) * m;
    if (grads.has(Target::mlp_down)) add_outer(grads.of[index_of(Target::mlp_down)], dh2.data(), g);
    std::fill(dg.begin(), dg.end(), 0.0);
    add_matvec_transposed(weights.get(Target::mlp_down), dh2.data(), dg.data());
    for (int i = 0; i < m; ++i) dg[i] *= 1.0 - g[i] * g[i];  // now dL/du, u = W1 h1
    const double* h1 = acts.h1.data() + static_cast<std::size_t>(t) * d;
    if (grads.has(Target::mlp_up)) add_outer(grads.of[index_of(Target::mlp_up)], dg.data(), h1);
    if (!attn) continue;

    std::copy(dh2.begin(), dh2.end(), dh1.begin());
    add_matvec_transposed(weights.get(Target::mlp_up), dg.data(), dh1.data());
    add_matvec_transposed(weights.base.wo, dh1.data(), dc.data() + static_cast<std::size_t>(t) * d);
  }
  if (!attn) return;

  // Attention: c_t = sum_j a_tj v_j, a_t = softmax(q_t . k_j / sqrt(d)). Keys and embeddings are
  // frozen, so only dL/dq_t and dL/dv_j are needed.
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> dv(grads.has(Target::value) ? static_cast<std::size_t>(n) * d : 0, 0.0);
  std::vector<double> dq(static_cast<std::size_t>(d));
  std::vector<double> dscore(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const double* dct = dc.data() + static_cast<std::size_t>(t) * d;
    if (std::all_of(dct, dct + d, [](double x) { return x == 0.0; })) continue;
    const double* a = acts.attention.data() + static_cast<std::size_t>(t) * (t + 1) / 2;
    double weighted = 0.0;
    for (int j = 0; j <= t; ++j) {
      dscore[j] = kernels::dot(dct, acts.v.data() + static_cast<std::size_t>(j) * d, d);
      weighted += a[j] * dscore[j];
    }
    if (grads.has(Target::value)) {
      for (int j = 0; j <= t; ++j) kernels::axpy(a[j], dct, dv.data() + static_cast<std::size_t>(j) * d, d);
    }
    if (grads.has(Target::query)) {
      std::fill(dq.begin(), dq.end(), 0.0);
      for (int j = 0; j <= t; ++j) {
        const double ds = a[j] * (dscore[j] - weighted) * inv_sqrt_d;
        kernels::axpy(ds, acts.k.data() + static_cast<std::size_t>(j) * d, dq.data(), d);
      }
      add_outer(grads.of[index_of(Target::query)], dq.data(), acts.h0.data() + static_cast<std::size_t>(t) * d);
    }
  }
  if (grads.has(Target::value)) {
    for (int j = 0; j < n; ++j) {
      add_outer(grads.of[index_of(Target::value)], dv.data() + static_cast<std::size_t>(j) * d,
                acts.h0.data() + static_cast<std::size_t>(j) * d);
    }
  }
}

}  // namespace tinker::local::model
