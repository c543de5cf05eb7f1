// f32 activations × qc8 weights (int8, one float scale per output channel, i.e. per column of C):
// C[m×n] = A[m×k] · W (+ bias[n]) (+ C) with W's panels stored as the integers q (ReducedPanels,
// dtype int8, scales set), summed as integers and times the column's scale before the bias; and the
// quantization that stores them (int8-quantize.h's rule).
#pragma once

#include <cstddef>
#include <cstdint>

#include "reduced-panels.h"

namespace wa {

void f32_qc8w_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                   const float* bias, float* c, std::size_t ldc, bool add);

// Columns [j0, j1) (whole panels) of a float32 weight (column j, step kk at w[j·ld_j + kk·ld_k]),
// quantized per column into `out`'s panels and `scales` [j1] (padding columns: q 0, scale 1).
void pack_qc8w(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
               std::size_t j1, std::uint8_t* out, float* scales);

}  // namespace wa
