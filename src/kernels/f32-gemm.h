// C[m×n] = A[m×k] · B[k×n] (+ bias[n]) with B packed once into 16-column panels.
//
// Layouts (row-major, strides in floats):
//   A        m rows of k, row stride lda
//   packed   ceil(n/16) panels; panel p holds packed_k steps of 16 consecutive B columns
//            (p·16 … p·16+15), zero-padded past n: panel[p][kk][c]. A product may use only
//            the first k ≤ packed_k steps (causal attention stops at the diagonal).
//   C        m rows of n, row stride ldc
//
// Why this tile: V8 gives WebAssembly 15 vector registers. A 2-row × 16-column tile keeps
// 8 accumulators + 4 panel vectors + 2 splats in registers (TOOLCHAIN.md measured 95–101 %
// of the SIMD128 ceiling; taller or wider tiles spill). One call sweeps every row sliver of a
// panel so the panel stays in L1 while A streams.
#pragma once

#include <cstddef>
#include <cstring>

#include <xsimd/xsimd.hpp>

namespace wa {

constexpr std::size_t kPanelWidth = 16;

inline std::size_t packed_panel_floats(std::size_t n, std::size_t k) {
  return ((n + kPanelWidth - 1) / kPanelWidth) * kPanelWidth * k;
}

// B given as its transpose: rows of w are B's columns (nn.Linear's [out, in] weights, or K of Q·Kᵀ).
inline void pack_transposed(const float* w, std::size_t n, std::size_t k, std::size_t ldw, float* packed) {
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    for (std::size_t kk = 0; kk < k; ++kk) {
      float* dst = packed + (p0 * k) + kk * kPanelWidth;
      for (std::size_t c = 0; c < cols; ++c) dst[c] = w[(p0 + c) * ldw + kk];
      for (std::size_t c = cols; c < kPanelWidth; ++c) dst[c] = 0.0f;
    }
  }
}

// B given as is: k rows of n columns (V of P·V).
inline void pack_rows(const float* b, std::size_t k, std::size_t n, std::size_t ldb, float* packed) {
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    for (std::size_t kk = 0; kk < k; ++kk) {
      float* dst = packed + (p0 * k) + kk * kPanelWidth;
      std::memcpy(dst, b + kk * ldb + p0, cols * sizeof(float));
      for (std::size_t c = cols; c < kPanelWidth; ++c) dst[c] = 0.0f;
    }
  }
}

namespace detail {

using Batch = xsimd::batch<float>;
constexpr std::size_t kVecs = kPanelWidth / Batch::size;

// ROWS rows (1 or 2) × 16 columns; writes `cols` ≤ 16 columns of C.
template <int ROWS>
inline void gemm_tile(std::size_t k, const float* a, std::size_t lda, const float* panel,
                      const float* bias, float* c, std::size_t ldc, std::size_t cols) {
  Batch acc[ROWS][kVecs];
  for (int r = 0; r < ROWS; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = Batch(0.0f);
  for (std::size_t kk = 0; kk < k; ++kk) {
    Batch b[kVecs];
    for (std::size_t v = 0; v < kVecs; ++v) b[v] = Batch::load_aligned(panel + kk * kPanelWidth + v * Batch::size);
    for (int r = 0; r < ROWS; ++r) {
      const Batch a_rk(a[r * lda + kk]);
      for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] += b[v] * a_rk;
    }
  }
  if (cols == kPanelWidth) {
    for (int r = 0; r < ROWS; ++r)
      for (std::size_t v = 0; v < kVecs; ++v) {
        Batch out = acc[r][v];
        if (bias) out += Batch::load_unaligned(bias + v * Batch::size);
        out.store_unaligned(c + r * ldc + v * Batch::size);
      }
    return;
  }
  alignas(64) float tmp[kPanelWidth];
  for (int r = 0; r < ROWS; ++r) {
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v].store_aligned(tmp + v * Batch::size);
    for (std::size_t j = 0; j < cols; ++j) c[r * ldc + j] = bias ? tmp[j] + bias[j] : tmp[j];
  }
}

}  // namespace detail

// Rows [0, m) of C. The packed panels must be 16-float aligned (the allocators here give 64).
inline void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                        const float* packed, std::size_t packed_k, const float* bias, float* c,
                        std::size_t ldc) {
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    const float* panel = packed + p0 * packed_k;
    const float* panel_bias = bias ? bias + p0 : nullptr;
    std::size_t i = 0;
    for (; i + 2 <= m; i += 2)
      detail::gemm_tile<2>(k, a + i * lda, lda, panel, panel_bias, c + i * ldc + p0, ldc, cols);
    if (i < m) detail::gemm_tile<1>(k, a + i * lda, lda, panel, panel_bias, c + i * ldc + p0, ldc, cols);
  }
}

}  // namespace wa
