// Row softmax, numerically stable, in three passes, and the passes themselves (the fused
// attention runs them tile by tile with a running max and sum).
// A row whose every entry is -inf (every key masked) becomes zeros, not NaN: it attends to nothing.
// Out of line on purpose: V8 tiers up functions between calls (see gemm_packed).
#pragma once

#include <cmath>
#include <cstddef>

namespace wa {

// -inf for an empty or fully masked row.
float row_max(const float* x, std::size_t n);

// x = exp(x − max) in place (max ≥ every x); returns the sum.
float exp_minus_max_sum(float* x, std::size_t n, float max);

void scale_row(float* x, std::size_t n, float factor);

// Whether some x is NaN (row_max skips NaN, so a fully NaN row looks fully masked to it).
bool has_nan(const float* x, std::size_t n);

// Whether every x is finite (no NaN, no ±inf).
inline bool all_finite(const float* x, std::size_t n) {
  for (std::size_t d = 0; d < n; ++d)
    if (!std::isfinite(x[d])) return false;
  return true;
}

// Returns false when the row was fully masked (and is now zeros). A NaN anywhere in the row makes
// every entry NaN, as a float64 evaluation does (a +inf score too: exp(inf − inf)).
bool softmax_row(float* x, std::size_t n);

}  // namespace wa
