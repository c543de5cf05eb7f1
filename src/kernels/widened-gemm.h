// The loops that every f32 × reduced-weight GEMM (f32-f16w, f32-bf16w, f32-qc8w) shares; each kernel
// file gives only how one panel step of 16 stored weights widens to float32 (a `Widen` type:
// kStepBytes, Constants, load(), step()).
//
// Two paths with the same bits: a product of few rows (a decode step: 1–4 tokens) reads the weights
// as stored, widening each step of 16 columns in registers as it multiplies, so it reads 2 (f16,
// bf16) or 1 (int8) bytes per weight instead of 4; a product of many rows (prefill) widens one whole
// panel into an f32 buffer and runs gemm_packed on it, the widening then costing little beside the
// rows' products. Both widen each weight the same way and sum it in gemm_packed's order with the same
// simd::madd (int8: the integers q, the sum then times the column's scale s, before the bias), so a
// row's result never depends on how many rows shared the call (and so not on the thread count), and
// a panel buffer that cannot be allocated falls back to the first path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../buffer.h"
#include "f32-gemm.h"
#include "reduced-panels.h"
#include "simd.h"

#ifndef WA_SCALAR
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif
#include <smmintrin.h>  // SSE4.1, which Emscripten maps onto SIMD128 (as for xsimd's SSE path)
#endif

namespace wa {
namespace widened {

using Batch = simd::batch<float>;
constexpr std::size_t kVecs = kPanelWidth / Batch::size;

#ifndef WA_SCALAR
// A widening's constants, one 32-bit word each repeated in four lanes, loaded once per call through
// a volatile pointer: written as v128.const in the loop, clang rematerializes them there and V8
// builds each one anew every step (kv-half.h measured 3× slower).
template <std::size_t N>
struct alignas(16) LaneWords {
  std::uint32_t lanes[N * 4];
};
template <std::size_t N>
constexpr LaneWords<N> lane_words(const std::uint32_t (&words)[N]) {
  LaneWords<N> t{};
  for (std::size_t i = 0; i < N * 4; ++i) t.lanes[i] = words[i / 4];
  return t;
}
template <std::size_t N>
inline const __m128i* load_lanes(const LaneWords<N>& t) {
  const std::uint32_t* volatile table = t.lanes;
  return reinterpret_cast<const __m128i*>(static_cast<const std::uint32_t*>(table));
}
#endif

// ROWS rows (1 or 2) × one panel's 16 columns over k steps, each step widened in registers and used
// at once: gemm_packed's tile loop, its order and its simd::madd. The sums go to `sums` [ROWS][16].
// Out of line: V8 tiers a small function called per panel up soon, and no caller's values compete
// for its registers (a 1 × 32 tile, eight accumulators, spilled and ran 1.6× slower).
template <class Widen, int ROWS>
__attribute__((noinline)) void stored_tile(std::size_t k, const float* a, std::size_t lda, const std::uint8_t* panel,
                                           float* sums) {
  const typename Widen::Constants c = Widen::load();
  Batch acc[ROWS][kVecs];
  for (int r = 0; r < ROWS; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = Batch(0.0f);
  const float* a_row[ROWS];
  for (int r = 0; r < ROWS; ++r) a_row[r] = a + r * lda;
  const std::uint8_t* const end = panel + k * Widen::kStepBytes;
  for (const std::uint8_t* p = panel; p != end; p += Widen::kStepBytes) {
    Batch b[kVecs];
    Widen::step(p, c, b);
    for (int r = 0; r < ROWS; ++r) {
      const Batch a_rk(*a_row[r]++);
      for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = simd::madd(b[v], a_rk, acc[r][v]);
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v].store_aligned(sums + r * kPanelWidth + v * Batch::size);
}

// gemm_tile's ending: out = acc (+ bias) (+ c), column by column; int8: acc times its column's scale
// first (the weights were summed as their integers q).
inline void store_row(const float* acc, const float* scales, const float* bias, float* c, std::size_t cols, bool add) {
  for (std::size_t j = 0; j < cols; ++j) {
    const float sum = scales ? acc[j] * scales[j] : acc[j];
    const float out = bias ? sum + bias[j] : sum;
    c[j] = add ? c[j] + out : out;
  }
}

// The few-rows path: each panel's weights read as stored, two rows at a time.
template <class Widen>
void gemm_stored(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                 const float* bias, float* c, std::size_t ldc, bool add) {
  alignas(64) float sums[2 * kPanelWidth];
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    const std::uint8_t* panel = w.data + p0 / kPanelWidth * w.packed_k * Widen::kStepBytes;
    for (std::size_t i = 0; i < m; i += 2) {
      const int rows = m - i >= 2 ? 2 : 1;
      if (rows == 2)
        stored_tile<Widen, 2>(k, a + i * lda, lda, panel, sums);
      else
        stored_tile<Widen, 1>(k, a + i * lda, lda, panel, sums);
      for (int r = 0; r < rows; ++r)
        store_row(sums + r * kPanelWidth, w.scales ? w.scales + p0 : nullptr, bias ? bias + p0 : nullptr,
                  c + (i + r) * ldc + p0, cols, add);
    }
  }
}

// The many-rows path: a panel at a time widened whole into `wide`, then gemm_packed over every row.
template <class Widen>
void gemm_wide(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
               const float* bias, float* c, std::size_t ldc, bool add, float* wide, float* tmp) {
  const typename Widen::Constants constants = Widen::load();
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    const std::uint8_t* panel = w.data + p0 / kPanelWidth * w.packed_k * Widen::kStepBytes;
    for (std::size_t kk = 0; kk < k; ++kk) {
      Batch b[kVecs];
      Widen::step(panel + kk * Widen::kStepBytes, constants, b);
      for (std::size_t v = 0; v < kVecs; ++v) b[v].store_aligned(wide + kk * kPanelWidth + v * Batch::size);
    }
    const float* panel_bias = bias ? bias + p0 : nullptr;
    if (w.scales) {  // int8: the rows' sums into `tmp`, then scaled, biased and stored as the other path does
      gemm_packed(m, cols, k, a, lda, wide, k, nullptr, tmp, kPanelWidth);
      for (std::size_t i = 0; i < m; ++i)
        store_row(tmp + i * kPanelWidth, w.scales + p0, panel_bias, c + i * ldc + p0, cols, add);
    } else if (add) {
      gemm_packed_add(m, cols, k, a, lda, wide, k, panel_bias, c + p0, ldc);
    } else {
      gemm_packed(m, cols, k, a, lda, wide, k, panel_bias, c + p0, ldc);
    }
  }
}

// C[m×n] = A[m×k] · W (+ bias[n]) (+ C with add), W's panels widened by Widen: the one entry.
template <class Widen>
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
          const float* bias, float* c, std::size_t ldc, bool add) {
  if (m > kReducedRowsMax) {
    FloatBuffer wide;  // a widened panel, then (int8) the rows' sums for it
    if (wide.allocate(kPanelWidth * (k + m)))
      return gemm_wide<Widen>(m, n, k, a, lda, w, bias, c, ldc, add, wide.get(), wide.get() + kPanelWidth * k);
  }
  gemm_stored<Widen>(m, n, k, a, lda, w, bias, c, ldc, add);
}

}  // namespace widened
}  // namespace wa
