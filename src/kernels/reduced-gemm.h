// C[m×n] = A[m×k] · W (+ bias[n]) (+ C) with W stored reduced (f16, bf16, or int8 with a scale per
// column of C, i.e. per output row of nn.Linear's W), in gemm_packed's panel layout: element (step kk,
// column j) at panel j/16, [kk][j % 16], packed_k steps per panel, zero-padded past n.
//
// Two paths with the same bits: a product of few rows (a decode step: 1–4 tokens) reads the weights as
// stored, widening each step of 16 columns in registers as it multiplies, so it reads 2 (f16, bf16) or
// 1 (int8) bytes per weight instead of 4; a product of many rows (prefill) widens one whole panel into an f32
// buffer and runs gemm_packed on it, the widening then costing little beside the rows' products. Both
// widen each weight the same way and sum it in gemm_packed's order with the same simd::madd (int8: the
// integers q, the sum then times the column's scale s, before the bias), so a row's result never depends on how many
// rows shared the call (and so not on the thread count), and a panel buffer that cannot be allocated falls back to the
// first path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weight-dtype.h"

namespace wa {

struct ReducedWeights {
  WeightDtype dtype = WeightDtype::f16;
  const std::uint8_t* data = nullptr;  // panels, 64-byte aligned
  const float* scales = nullptr;       // int8: one per column (padded to whole panels)
  std::size_t packed_k = 0;
  bool specials = true;  // f16: the matrix may hold Inf or NaN (false takes a shorter widening)

  // The weights of columns c0 … (c0 a multiple of 16).
  ReducedWeights from_column(std::size_t c0) const {
    ReducedWeights w = *this;
    w.data += c0 * packed_k * weight_element_bytes(dtype);
    if (w.scales) w.scales += c0;
    return w;
  }
};

// Bytes of the stored panels (and int8's scales) of an n × k weight.
double reduced_bytes(WeightDtype dtype, std::size_t n, std::size_t k);

// Rows m ≤ this read the weights as stored; more widen panels.
constexpr std::size_t kReducedRowsMax = 4;

void reduced_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                  const float* bias, float* c, std::size_t ldc, bool add);

// Whether `count` stored weights hold an f16 Inf or NaN (always false for other dtypes).
bool has_specials(WeightDtype dtype, const std::uint8_t* data, std::size_t count);

// Columns [j0, j1) (whole panels: j0 a multiple of 16) of a weight given as float32, element (column j,
// step kk) at w[j·ld_j + kk·ld_k], rounded into `out` (f16, bf16) or quantized per column into `out`
// and `scales` (int8; padding columns get scale 1).
void store_reduced(WeightDtype dtype, const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k,
                   std::size_t j0, std::size_t j1, std::uint8_t* out, float* scales);

}  // namespace wa
