// int8 weights with one scale per output row (the contract's rule): s_r = max|w_r| / 127 (1 for a
// row of zeros), q = round-half-to-even(w / s_r) clamped to ±127; the engine computes with q·s_r.
#pragma once

#include <cmath>
#include <cstdint>

namespace wa {

// s_r from max|w_r| (float32 division, as the scale is stored).
inline float int8_scale(float max_abs) { return max_abs > 0.0f ? max_abs / 127.0f : 1.0f; }

// w / s_r in double (no double rounding before the integer rounding), rounded half to even
// (nearbyint in the default rounding mode), clamped to ±127. int8 has no NaN: a NaN weight (or a row
// scaled by an infinite max) stores 0 rather than an undefined conversion.
inline std::int8_t int8_quantize(float w, float scale) {
  const double q = std::nearbyint(static_cast<double>(w) / static_cast<double>(scale));
  if (!(q == q)) return 0;
  return static_cast<std::int8_t>(q > 127.0 ? 127.0 : q < -127.0 ? -127.0 : q);
}

}  // namespace wa
