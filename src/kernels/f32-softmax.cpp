#include "f32-softmax.h"

#include <cmath>

#include "f32-exp.h"
#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kLanes = Batch::size;

}  // namespace

float row_max(const float* x, std::size_t n) {
  const std::size_t vec_end = n - n % kLanes;
  float max = -INFINITY;
  if (vec_end > 0) {
    Batch vmax(-INFINITY);
    for (std::size_t j = 0; j < vec_end; j += kLanes) vmax = simd::max(vmax, Batch::load_unaligned(x + j));
    alignas(16) float lanes[kLanes];
    vmax.store_aligned(lanes);
    for (std::size_t l = 0; l < kLanes; ++l) max = std::fmax(max, lanes[l]);
  }
  for (std::size_t j = vec_end; j < n; ++j) max = std::fmax(max, x[j]);
  return max;
}

float exp_minus_max_sum(float* x, std::size_t n, float max) {
  const std::size_t vec_end = n - n % kLanes;
  const ExpConstants k = exp_constants();
  const Batch vmax(max);
  Batch vsum(0.0f);
  for (std::size_t j = 0; j < vec_end; j += kLanes) {
    const Batch e = exp_nonpositive(Batch::load_unaligned(x + j) - vmax, k);
    e.store_unaligned(x + j);
    vsum += e;
  }
  float sum = simd::hadd(vsum);
  if (vec_end < n) {
    // The tail goes through the same vector exp (padded with -inf, whose exp is 0), so every
    // element is computed by one function whatever its position.
    alignas(16) float tail[kLanes];
    for (std::size_t l = 0; l < kLanes; ++l) tail[l] = vec_end + l < n ? x[vec_end + l] : -INFINITY;
    exp_nonpositive(Batch::load_aligned(tail) - vmax, k).store_aligned(tail);
    for (std::size_t j = vec_end; j < n; ++j) sum += x[j] = tail[j - vec_end];
  }
  return sum;
}

void scale_row(float* x, std::size_t n, float factor) {
  const std::size_t vec_end = n - n % kLanes;
  const Batch vf(factor);
  for (std::size_t j = 0; j < vec_end; j += kLanes) (Batch::load_unaligned(x + j) * vf).store_unaligned(x + j);
  for (std::size_t j = vec_end; j < n; ++j) x[j] *= factor;
}

bool has_nan(const float* x, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j)
    if (std::isnan(x[j])) return true;
  return false;
}

bool softmax_row(float* x, std::size_t n) {
  // 1. max, starting at -inf so a fully masked row is recognised (a NaN is skipped: checked here,
  //    or else it makes the sum below NaN, and 1/sum every entry).
  const float max = row_max(x, n);
  if (max == -INFINITY) {
    const bool nan = has_nan(x, n);
    for (std::size_t j = 0; j < n; ++j) x[j] = nan ? NAN : 0.0f;
    return nan;
  }
  // 2. exp(x - max) and its sum.
  const float sum = exp_minus_max_sum(x, n, max);
  // 3. scale by 1/sum.
  scale_row(x, n, 1.0f / sum);
  return true;
}

}  // namespace wa
