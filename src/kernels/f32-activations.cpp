#include "f32-activations.h"

#include <cstdint>

#include "f32-exp.h"
#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kLanes = Batch::size;

// Lanes where x < 0 (a NaN is not), as a mask of all-one or all-zero words.
Batch negative_mask(const Batch& x) { return Batch((x < Batch(0.0f)).data); }

// mask ? a : b per lane, from the one bitwise operation both builds share (andnot: ~m & v).
Batch select(const Batch& mask, const Batch& a, const Batch& b) {
  const Batch ones = simd::bitwise_cast<Batch>(simd::batch<std::int32_t>(-1));
  return simd::bitwise_andnot(simd::bitwise_andnot(mask, ones), a) + simd::bitwise_andnot(mask, b);
}

Batch abs(const Batch& x) { return simd::bitwise_andnot(Batch(-0.0f), x); }

// sigmoid(x) with exp only of −|x| (never overflows): r = 1/(1 + e^−|x|) is sigmoid(|x|), and
// sigmoid(−|x|) = e^−|x| · r. ±inf give 1 and 0; NaN stays NaN.
Batch sigmoid(const Batch& x, const ExpConstants& k) {
  const Batch e = exp_nonpositive(Batch(0.0f) - abs(x), k);
  const Batch r = Batch(1.0f) / (Batch(1.0f) + e);
  return r * select(negative_mask(x), e, Batch(1.0f));
}

// Φ(x) = 0.5·erfc(−x/√2). erfc(z) for z ≥ 0 as t·exp(−z² + P(t)), t = 1/(1 + z/2), P the Chebyshev
// fit of Numerical Recipes' erfcc (relative error below 1.2e-7 for every z ≥ 0); the negative side
// by symmetry, 1 − Φ(|x|). Keeping the small tail as h avoids 1 − (1 − h) losing it.
Batch normal_cdf(const Batch& x, const ExpConstants& k) {
  const Batch z = abs(x) * Batch(0.70710678118654752f);
  const Batch t = Batch(1.0f) / (Batch(1.0f) + Batch(0.5f) * z);
  static constexpr float kP[] = {0.17087277f,  -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                 -0.18628806f, 0.09678418f,  0.37409196f, 1.00002368f,  -1.26551223f};
  Batch p(kP[0]);
  for (std::size_t i = 1; i < sizeof kP / sizeof kP[0]; ++i) p = simd::madd(p, t, Batch(kP[i]));
  // The exponent is ≤ 3e-8 (P(1) rounds just above 0): exp_nonpositive is exact to 1 ulp there too.
  const Batch h = Batch(0.5f) * t * exp_nonpositive(p - z * z, k);  // 0.5·erfc(|x|/√2) = Φ(−|x|)
  return select(negative_mask(x), h, Batch(1.0f) - h);
}

Batch silu_of(const Batch& x, const ExpConstants& k) { return x * sigmoid(x, k); }

Batch gelu_tanh_of(const Batch& x, const ExpConstants& k) {
  // 2·√(2/π) and 2·√(2/π)·0.044715
  const Batch u = x * (Batch(1.5957691216057308f) + Batch(0.071354816272f) * x * x);
  return x * sigmoid(u, k);
}

Batch gelu_erf_of(const Batch& x, const ExpConstants& k) { return x * normal_cdf(x, k); }

// y = f(x), times `up` when given, over n floats: the vector body, then the tail padded with zeros
// through the same vector code.
template <class F>
void apply(const float* x, const float* up, std::size_t n, float* y, F f) {
  const ExpConstants k = exp_constants();
  const std::size_t vec_end = n - n % kLanes;
  for (std::size_t j = 0; j < vec_end; j += kLanes) {
    Batch v = f(Batch::load_unaligned(x + j), k);
    if (up) v *= Batch::load_unaligned(up + j);
    v.store_unaligned(y + j);
  }
  if (vec_end == n) return;
  alignas(16) float tail[kLanes] = {};
  alignas(16) float tail_up[kLanes] = {};
  for (std::size_t j = vec_end; j < n; ++j) {
    tail[j - vec_end] = x[j];
    if (up) tail_up[j - vec_end] = up[j];
  }
  Batch v = f(Batch::load_aligned(tail), k);
  if (up) v *= Batch::load_aligned(tail_up);
  v.store_aligned(tail);
  for (std::size_t j = vec_end; j < n; ++j) y[j] = tail[j - vec_end];
}

}  // namespace

void silu(const float* x, std::size_t n, float* y) { apply(x, nullptr, n, y, silu_of); }
void silu_mul(const float* gate, const float* up, std::size_t n, float* y) { apply(gate, up, n, y, silu_of); }
void gelu_tanh(const float* x, std::size_t n, float* y) { apply(x, nullptr, n, y, gelu_tanh_of); }
void gelu_erf(const float* x, std::size_t n, float* y) { apply(x, nullptr, n, y, gelu_erf_of); }

}  // namespace wa
