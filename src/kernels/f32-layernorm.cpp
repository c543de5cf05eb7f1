#include "f32-layernorm.h"

#include <cmath>

#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kLanes = Batch::size;

// Σ (x − center)²; with center 0, Σ x.
float sum_of(const float* x, std::size_t n, float center, bool squared) {
  const std::size_t vec_end = n - n % kLanes;
  const Batch c(center);
  Batch acc(0.0f);
  for (std::size_t j = 0; j < vec_end; j += kLanes) {
    const Batch d = Batch::load_unaligned(x + j) - c;
    acc += squared ? d * d : d;
  }
  float sum = simd::hadd(acc);
  for (std::size_t j = vec_end; j < n; ++j) {
    const float d = x[j] - center;
    sum += squared ? d * d : d;
  }
  return sum;
}

}  // namespace

void layernorm(const float* x, const float* weight, const float* bias, std::size_t rows, std::size_t n, float eps,
               float* y) {
  const std::size_t vec_end = n - n % kLanes;
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    // 1. the mean; 2. the variance about it; 3. normalise, scale, shift.
    const float mean = sum_of(x, n, 0.0f, false) / static_cast<float>(n);
    const double var = static_cast<double>(sum_of(x, n, mean, true)) / n;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const Batch vmean(mean), vinv(inv);
    for (std::size_t j = 0; j < vec_end; j += kLanes) {
      Batch v = (Batch::load_unaligned(x + j) - vmean) * vinv * Batch::load_unaligned(weight + j);
      if (bias) v += Batch::load_unaligned(bias + j);
      v.store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < n; ++j) y[j] = (x[j] - mean) * inv * weight[j] + (bias ? bias[j] : 0.0f);
  }
}

}  // namespace wa
