// Softmax of one row in place, numerically stable, in three passes.
// A row whose every entry is -inf (every key masked) becomes zeros, not NaN: it attends to nothing.
#pragma once

#include <cstddef>

namespace wa {

// Returns false when the row was fully masked (and is now zeros). Out of line for V8's tier-up
// (see gemm_packed).
bool softmax_row(float* x, std::size_t n);

}  // namespace wa
