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
// 8 accumulators + 4 panel vectors + 2 splats in registers (a probe on V8 measured 95–101 %
// of the SIMD128 ceiling; taller or wider tiles spill). One call sweeps every row sliver of a
// panel so the panel stays in L1 while A streams. The relaxed builds' fused multiply-add has a longer
// chain per step, yet 2×16 measured fastest there too: its 8 accumulators hide the FMA latency, 3×16
// spills (0.65× the mul+add build), 4×8 and 1×16 trail (1.15×, 0.68×, against 1.23× for 2×16).
#pragma once

#include <cstddef>
#include <cstring>

namespace wa {

constexpr std::size_t kPanelWidth = 16;

inline std::size_t packed_panel_floats(std::size_t n, std::size_t k) {
  return ((n + kPanelWidth - 1) / kPanelWidth) * kPanelWidth * k;
}

// B given as its transpose: rows of w are B's columns (nn.Linear's [out, in] weights, or K of Q·Kᵀ).
void pack_transposed(const float* w, std::size_t n, std::size_t k, std::size_t ldw, float* packed);

// B given as is: k rows of n columns (V of P·V), written as rows [0, k) of panels that hold
// packed_k rows each — so row chunks of one B can be packed by different threads.
inline void pack_rows(const float* b, std::size_t k, std::size_t n, std::size_t ldb, float* packed,
                      std::size_t packed_k) {
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    for (std::size_t kk = 0; kk < k; ++kk) {
      float* dst = packed + (p0 * packed_k) + kk * kPanelWidth;
      std::memcpy(dst, b + kk * ldb + p0, cols * sizeof(float));
      for (std::size_t c = cols; c < kPanelWidth; ++c) dst[c] = 0.0f;
    }
  }
}

// Rows [0, m) of C. The packed panels must be 16-float aligned (the allocators here give 64).
// Out of line on purpose: V8 has no on-stack replacement, so a hot loop inlined into one long call
// would run in baseline code for that whole call; a kernel called per block is tiered up mid-call.
void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* packed,
                 std::size_t packed_k, const float* bias, float* c, std::size_t ldc);

// Whether these kernels were compiled with relaxed SIMD's multiply-add (the relaxed builds):
// answered here, where WA_RELAXED_SIMD is defined, for info.relaxedSimd.
bool gemm_uses_relaxed_simd();

// C += A·B (the running output of the fused attention, key tile by key tile).
void gemm_packed_accumulate(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                            const float* packed, std::size_t packed_k, float* c, std::size_t ldc);

// C = (A·B + bias) + C: a linear layer's output added to a residual stream in one pass, with the
// bits of computing A·B + bias first and adding it after (bias may be null).
void gemm_packed_add(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* packed,
                     std::size_t packed_k, const float* bias, float* c, std::size_t ldc);

}  // namespace wa
