// f32 activations × bf16 weights: C[m×n] = A[m×k] · W (+ bias[n]) (+ C) with W's panels stored in
// bfloat16 (ReducedPanels, dtype bf16), and the rounding that stores them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reduced-panels.h"

namespace wa {

void f32_bf16w_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                    const ReducedPanels& w, const float* bias, float* c, std::size_t ldc, bool add);

// Columns [j0, j1) (whole panels) of a float32 weight (column j, step kk at w[j·ld_j + kk·ld_k]),
// rounded to nearest-even bf16 into `out`'s panels.
void pack_bf16w(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
                std::size_t j1, std::uint8_t* out);

}  // namespace wa
