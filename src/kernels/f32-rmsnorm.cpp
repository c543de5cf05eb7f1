#include "f32-rmsnorm.h"

#include <cmath>

#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kLanes = Batch::size;

float sum_of_squares(const float* x, std::size_t n) {
  const std::size_t vec_end = n - n % kLanes;
  Batch acc(0.0f);
  for (std::size_t j = 0; j < vec_end; j += kLanes) {
    const Batch v = Batch::load_unaligned(x + j);
    acc += v * v;
  }
  float sum = simd::hadd(acc);
  for (std::size_t j = vec_end; j < n; ++j) sum += x[j] * x[j];
  return sum;
}

}  // namespace

void rmsnorm(const float* x, const float* weight, std::size_t rows, std::size_t n, float eps, float* y) {
  const std::size_t vec_end = n - n % kLanes;
  for (std::size_t r = 0; r < rows; ++r, x += n, y += n) {
    // One scalar per row: its reciprocal root in double costs nothing and rounds once.
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_of_squares(x, n)) / n + eps));
    const Batch vinv(inv);
    for (std::size_t j = 0; j < vec_end; j += kLanes)
      (Batch::load_unaligned(x + j) * vinv * Batch::load_unaligned(weight + j)).store_unaligned(y + j);
    for (std::size_t j = vec_end; j < n; ++j) y[j] = x[j] * inv * weight[j];
  }
}

}  // namespace wa
