#include "f32-softmax.h"

#include <cmath>

#include <xsimd/xsimd.hpp>

#include "f32-exp.h"

namespace wa {

bool softmax_row(float* x, std::size_t n) {
  using Batch = xsimd::batch<float>;
  constexpr std::size_t lanes = Batch::size;
  const std::size_t vec_end = n - n % lanes;

  // 1. max, starting at -inf so a fully masked row is recognised.
  float max = -INFINITY;
  if (vec_end > 0) {
    Batch vmax(-INFINITY);
    for (std::size_t j = 0; j < vec_end; j += lanes) vmax = xsimd::max(vmax, Batch::load_unaligned(x + j));
    alignas(16) float lanes_max[lanes];
    vmax.store_aligned(lanes_max);
    for (std::size_t l = 0; l < lanes; ++l) max = std::fmax(max, lanes_max[l]);
  }
  for (std::size_t j = vec_end; j < n; ++j) max = std::fmax(max, x[j]);
  if (max == -INFINITY) {
    for (std::size_t j = 0; j < n; ++j) x[j] = 0.0f;
    return false;
  }

  // 2. exp(x - max) and its sum.
  Batch vsum(0.0f);
  const Batch vmax(max);
  for (std::size_t j = 0; j < vec_end; j += lanes) {
    const Batch e = exp_nonpositive(Batch::load_unaligned(x + j) - vmax);
    e.store_unaligned(x + j);
    vsum += e;
  }
  float sum = xsimd::hadd(vsum);
  for (std::size_t j = vec_end; j < n; ++j) {
    x[j] = std::exp(x[j] - max);
    sum += x[j];
  }

  // 3. scale by 1/sum.
  const float inv = 1.0f / sum;
  const Batch vinv(inv);
  for (std::size_t j = 0; j < vec_end; j += lanes) (Batch::load_unaligned(x + j) * vinv).store_unaligned(x + j);
  for (std::size_t j = vec_end; j < n; ++j) x[j] *= inv;
  return true;
}

}  // namespace wa
