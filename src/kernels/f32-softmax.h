// Row softmax, numerically stable, in three passes, and the passes themselves (the fused
// attention runs them tile by tile with a running max and sum).
// A row whose every entry is -inf (every key masked) becomes zeros, not NaN: it attends to nothing.
// Out of line on purpose: V8 tiers up functions between calls (see gemm_packed).
#pragma once

#include <cstddef>

namespace wa {

// -inf for an empty or fully masked row.
float row_max(const float* x, std::size_t n);

// x = exp(x − max) in place (max ≥ every x); returns the sum.
float exp_minus_max_sum(float* x, std::size_t n, float max);

void scale_row(float* x, std::size_t n, float factor);

// Returns false when the row was fully masked (and is now zeros).
bool softmax_row(float* x, std::size_t n);

}  // namespace wa
