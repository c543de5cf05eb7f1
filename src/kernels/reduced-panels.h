// Weights stored reduced (f16, bf16, or int8 with one scale per column of C, i.e. per output row of
// nn.Linear's W) in gemm_packed's panel layout, as the f32-f16w, f32-bf16w and f32-qc8w GEMMs read
// them: element (step kk, column j) at panel j/16, [kk][j % 16], packed_k steps per panel,
// zero-padded past n. Also the one loop that rounds float32 weights into such panels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f32-gemm.h"
#include "weight-dtype.h"

namespace wa {

struct ReducedPanels {
  WeightDtype dtype = WeightDtype::f16;
  const std::uint8_t* data = nullptr;  // panels, 64-byte aligned
  const float* scales = nullptr;       // int8: one per column (padded to whole panels)
  std::size_t packed_k = 0;
  bool specials = true;  // f16: the matrix may hold Inf or NaN (false takes a shorter widening)

  // The weights of columns c0 … (c0 a multiple of 16).
  ReducedPanels from_column(std::size_t c0) const {
    ReducedPanels w = *this;
    w.data += c0 * packed_k * weight_element_bytes(dtype);
    if (w.scales) w.scales += c0;
    return w;
  }
};

// Rows m ≤ this read the weights as stored; more widen a panel at a time (widened-gemm.h).
constexpr std::size_t kReducedRowsMax = 4;

// Columns [j0, j1) (whole panels: j0 a multiple of 16) of a weight given as float32, element
// (column j, step kk) at w[j·ld_j + kk·ld_k], each value rounded by ROUND into 16-bit panels at
// `out`; padding columns store ROUND(0).
template <std::uint16_t (*ROUND)(float)>
void pack_half_panels(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
                      std::size_t j1, std::uint8_t* out) {
  for (std::size_t p0 = j0; p0 < j1; p0 += kPanelWidth) {
    auto* panel = reinterpret_cast<std::uint16_t*>(out) + p0 * k;
    for (std::size_t jj = 0; jj < kPanelWidth; ++jj) {
      const std::size_t j = p0 + jj;
      const float* col = j < n ? w + j * ld_j : nullptr;
      for (std::size_t kk = 0; kk < k; ++kk) panel[kk * kPanelWidth + jj] = ROUND(j < n ? col[kk * ld_k] : 0.0f);
    }
  }
}

}  // namespace wa
