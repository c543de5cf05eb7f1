#include "f32-gemm.h"

#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kVecs = kPanelWidth / Batch::size;

// ROWS rows (1 or 2) × 16 columns; writes (or with ACCUMULATE adds to) `cols` ≤ 16 columns of C.
template <int ROWS, bool ACCUMULATE>
inline void gemm_tile(std::size_t k, const float* a, std::size_t lda, const float* panel, const float* bias, float* c,
                      std::size_t ldc, std::size_t cols) {
  Batch acc[ROWS][kVecs];
  for (int r = 0; r < ROWS; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = Batch(0.0f);
  // Pointers advance by a constant each step: Emscripten builds with loop strength reduction off,
  // so indexing by kk would recompute every address with a multiply in the hot loop.
  const float* a_row[ROWS];
  for (int r = 0; r < ROWS; ++r) a_row[r] = a + r * lda;
  const float* const panel_end = panel + k * kPanelWidth;
  for (const float* p = panel; p != panel_end; p += kPanelWidth) {
    Batch b[kVecs];
    for (std::size_t v = 0; v < kVecs; ++v) b[v] = Batch::load_aligned(p + v * Batch::size);
    for (int r = 0; r < ROWS; ++r) {
      const Batch a_rk(*a_row[r]++);
      for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = simd::madd(b[v], a_rk, acc[r][v]);
    }
  }
  if (cols == kPanelWidth) {
    for (int r = 0; r < ROWS; ++r)
      for (std::size_t v = 0; v < kVecs; ++v) {
        Batch out = acc[r][v];
        if (bias) out += Batch::load_unaligned(bias + v * Batch::size);
        if (ACCUMULATE) out += Batch::load_unaligned(c + r * ldc + v * Batch::size);
        out.store_unaligned(c + r * ldc + v * Batch::size);
      }
    return;
  }
  alignas(64) float tmp[kPanelWidth];
  for (int r = 0; r < ROWS; ++r) {
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v].store_aligned(tmp + v * Batch::size);
    for (std::size_t j = 0; j < cols; ++j) {
      const float out = bias ? tmp[j] + bias[j] : tmp[j];
      c[r * ldc + j] = ACCUMULATE ? c[r * ldc + j] + out : out;
    }
  }
}

// One row × two whole panels, `apart` columns apart: a decode step's product, bound by reading the
// panels. gemm_panels pairs panel j with panel j + half, so two streams run through consecutive
// panels at once. Measured in V8 (interleaved A/B against one panel at a time): a GQA 2048/32/8
// decode step took 0.79–0.89× the time at 1 and 2 threads, the 135M-shaped model's step 0.95–1.02×.
// Pairing adjacent panels instead gained only on long panels (2048 steps) and lost on the model's
// 576-step ones (1.12–1.24×): two long streams suit the hardware prefetcher better than many short
// ones. Each column's sum is the same as gemm_tile's, step for step.
template <bool ACCUMULATE>
inline void gemm_row_two_panels(std::size_t k, const float* a, const float* panel, std::size_t packed_k,
                                std::size_t apart, const float* bias, float* c) {
  constexpr std::size_t kVecs2 = 2 * kVecs;
  Batch acc[kVecs2];
  for (std::size_t v = 0; v < kVecs2; ++v) acc[v] = Batch(0.0f);
  const float* second = panel + apart * packed_k;
  const float* const panel_end = panel + k * kPanelWidth;
  for (const float* p = panel; p != panel_end; p += kPanelWidth, second += kPanelWidth) {
    const Batch a_k(*a++);
    for (std::size_t v = 0; v < kVecs; ++v) acc[v] = simd::madd(Batch::load_aligned(p + v * Batch::size), a_k, acc[v]);
    for (std::size_t v = 0; v < kVecs; ++v)
      acc[kVecs + v] = simd::madd(Batch::load_aligned(second + v * Batch::size), a_k, acc[kVecs + v]);
  }
  for (std::size_t v = 0; v < kVecs2; ++v) {
    const std::size_t j = v < kVecs ? v * Batch::size : apart + (v - kVecs) * Batch::size;
    Batch out = acc[v];
    if (bias) out += Batch::load_unaligned(bias + j);
    if (ACCUMULATE) out += Batch::load_unaligned(c + j);
    out.store_unaligned(c + j);
  }
}

template <bool ACCUMULATE>
void gemm_panels(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* packed,
                 std::size_t packed_k, const float* bias, float* c, std::size_t ldc) {
  std::size_t first_panel = 0;
  if (m == 1 && n >= 2 * kPanelWidth) {
    // Panel j with panel j + half: two streams, each through consecutive panels.
    const std::size_t half = n / kPanelWidth / 2 * kPanelWidth;
    for (std::size_t j = 0; j < half; j += kPanelWidth)
      gemm_row_two_panels<ACCUMULATE>(k, a, packed + j * packed_k, packed_k, half, bias ? bias + j : nullptr, c + j);
    first_panel = 2 * half;
  }
  for (std::size_t p0 = first_panel; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    const float* panel = packed + p0 * packed_k;
    const float* panel_bias = bias ? bias + p0 : nullptr;
    std::size_t i = 0;
    for (; i + 2 <= m; i += 2)
      gemm_tile<2, ACCUMULATE>(k, a + i * lda, lda, panel, panel_bias, c + i * ldc + p0, ldc, cols);
    if (i < m) gemm_tile<1, ACCUMULATE>(k, a + i * lda, lda, panel, panel_bias, c + i * ldc + p0, ldc, cols);
  }
}

// The 4 × 4 block at rows[0..3][0..3] transposed into dst[j · kPanelWidth + 0..3], j = 0..3.
template <class B>
inline void transpose4x4_into(const float* r0, const float* r1, const float* r2, const float* r3, float* dst) {
  using Pairs = simd::batch<double>;  // the same 16 bytes as two 64-bit lanes
  const B a = B::load_unaligned(r0), b = B::load_unaligned(r1), c = B::load_unaligned(r2), d = B::load_unaligned(r3);
  const Pairs ab_lo = simd::bitwise_cast<Pairs>(simd::zip_lo(a, b)),
              ab_hi = simd::bitwise_cast<Pairs>(simd::zip_hi(a, b));
  const Pairs cd_lo = simd::bitwise_cast<Pairs>(simd::zip_lo(c, d)),
              cd_hi = simd::bitwise_cast<Pairs>(simd::zip_hi(c, d));
  simd::bitwise_cast<B>(simd::zip_lo(ab_lo, cd_lo)).store_unaligned(dst);
  simd::bitwise_cast<B>(simd::zip_hi(ab_lo, cd_lo)).store_unaligned(dst + kPanelWidth);
  simd::bitwise_cast<B>(simd::zip_lo(ab_hi, cd_hi)).store_unaligned(dst + 2 * kPanelWidth);
  simd::bitwise_cast<B>(simd::zip_hi(ab_hi, cd_hi)).store_unaligned(dst + 3 * kPanelWidth);
}

}  // namespace

void pack_transposed(const float* w, std::size_t n, std::size_t k, std::size_t ldw, float* packed) {
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = n - p0 < kPanelWidth ? n - p0 : kPanelWidth;
    float* panel = packed + p0 * k;
    std::size_t kk = 0;
    // Whole panels move as 4 × 4 transposes (a one-shot call packs every weight, every call).
    if constexpr (Batch::size == 4) {
      if (cols == kPanelWidth) {
        for (; kk + 4 <= k; kk += 4)
          for (std::size_t g = 0; g < kPanelWidth; g += 4) {
            const float* r = w + (p0 + g) * ldw + kk;
            transpose4x4_into<Batch>(r, r + ldw, r + 2 * ldw, r + 3 * ldw, panel + kk * kPanelWidth + g);
          }
      }
    }
    for (; kk < k; ++kk) {
      float* dst = panel + kk * kPanelWidth;
      for (std::size_t c = 0; c < cols; ++c) dst[c] = w[(p0 + c) * ldw + kk];
      for (std::size_t c = cols; c < kPanelWidth; ++c) dst[c] = 0.0f;
    }
  }
}

void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* packed,
                 std::size_t packed_k, const float* bias, float* c, std::size_t ldc) {
  gemm_panels<false>(m, n, k, a, lda, packed, packed_k, bias, c, ldc);
}

bool gemm_uses_relaxed_simd() {
#ifdef WA_RELAXED_SIMD
  return true;
#else
  return false;
#endif
}

void gemm_packed_accumulate(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                            const float* packed, std::size_t packed_k, float* c, std::size_t ldc) {
  gemm_panels<true>(m, n, k, a, lda, packed, packed_k, nullptr, c, ldc);
}

void gemm_packed_add(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* packed,
                     std::size_t packed_k, const float* bias, float* c, std::size_t ldc) {
  gemm_panels<true>(m, n, k, a, lda, packed, packed_k, bias, c, ldc);
}

}  // namespace wa
