// A layer's weights: copied and packed into GEMM panels once (or, for a one-shot call of a few
// tokens, read in place), and the products of rows by them.
#pragma once

#include <cstddef>

#include "../attention.h"

namespace wa {

// out[rows, ldo] = x[rows, in] · W[c0, c0 + cols)ᵀ + b[c0, c0 + cols) of one head's block of W.
void project_cols(const Layer::Projection& p, std::size_t h, std::size_t c0, std::size_t cols, const float* x,
                  std::size_t rows, float* out, std::size_t ldo);

// out[rows, width] = x[rows, in] · W_hᵀ + b_h for head h.
inline void project_rows(const Layer::Projection& p, std::size_t h, const float* x, std::size_t rows, float* out) {
  project_cols(p, h, 0, p.width, x, rows, out, p.width);
}

}  // namespace wa
