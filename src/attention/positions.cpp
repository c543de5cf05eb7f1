#include "positions.h"

#include <cmath>

namespace wa {

void rope_table(std::size_t pos0, std::size_t count, std::size_t dim, double base, float* cos_sin) {
  const std::size_t pairs = dim / 2;
  for (std::size_t r = 0; r < count; ++r) {
    const double p = static_cast<double>(pos0 + r);
    float* row = cos_sin + r * dim;
    for (std::size_t k = 0; k < pairs; ++k) {
      const double phi = p * std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(dim));
      row[2 * k] = static_cast<float>(std::cos(phi));
      row[2 * k + 1] = static_cast<float>(std::sin(phi));
    }
  }
}

void rope_table(std::size_t pos0, std::size_t count, std::size_t dim, double base, const double* inverse_frequencies,
                float* cos_sin) {
  if (!inverse_frequencies) return rope_table(pos0, count, dim, base, cos_sin);
  const std::size_t pairs = dim / 2;
  for (std::size_t r = 0; r < count; ++r) {
    const double p = static_cast<double>(pos0 + r);
    float* row = cos_sin + r * dim;
    for (std::size_t k = 0; k < pairs; ++k) {
      const double phi = p * inverse_frequencies[k];
      row[2 * k] = static_cast<float>(std::cos(phi));
      row[2 * k + 1] = static_cast<float>(std::sin(phi));
    }
  }
}

void apply_rope(float* x, std::size_t rows, std::size_t ld, const float* cos_sin, std::size_t dim, bool interleaved) {
  const std::size_t pairs = dim / 2;
  // Element indices of pair k: (k, k + dim/2) or (2k, 2k + 1).
  const std::size_t first_step = interleaved ? 2 : 1, second_offset = interleaved ? 1 : pairs;
  for (std::size_t r = 0; r < rows; ++r) {
    float* v = x + r * ld;
    const float* cs = cos_sin + r * dim;
    for (std::size_t k = 0; k < pairs; ++k) {
      float& a = v[k * first_step];
      float& b = v[k * first_step + second_offset];
      const float c = cs[2 * k], s = cs[2 * k + 1];
      const float a0 = a, b0 = b;
      a = a0 * c - b0 * s;
      b = b0 * c + a0 * s;
    }
  }
}

namespace {
// 2^(−8k/n) for k = 1 … count, n a power of two.
void power_of_two_slopes(std::size_t n, std::size_t first_k, std::size_t k_step, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const double k = static_cast<double>(first_k + i * k_step);
    out[i] = static_cast<float>(std::exp2(-8.0 * k / static_cast<double>(n)));
  }
}
}  // namespace

void alibi_slopes(std::size_t heads, float* slopes) {
  std::size_t m = 1;
  while (m * 2 <= heads) m *= 2;  // the largest power of two ≤ heads
  power_of_two_slopes(m, 1, 1, m, slopes);
  if (m < heads) power_of_two_slopes(2 * m, 1, 2, heads - m, slopes + m);
}

}  // namespace wa
