#include "reduced-gemm.h"

#include <algorithm>
#include <cmath>

#include "../buffer.h"
#include "f16-convert.h"
#include "f32-gemm.h"
#include "int8-quantize.h"
#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kVecs = kPanelWidth / Batch::size;
// Steps widened at a time on the stack by the few-rows path (16 × 64 floats: 4 KiB, in L1).
constexpr std::size_t kStepChunk = 64;

// `steps` steps of one panel (16 weights each) widened to float32: the one conversion both paths use.
template <WeightDtype D>
inline void widen_steps(const std::uint8_t* src, const float* scales, std::size_t steps, float* dst) {
  const std::size_t count = steps * kPanelWidth;
  if constexpr (D == WeightDtype::int8) {
    const auto* q = reinterpret_cast<const std::int8_t*>(src);
    for (std::size_t e = 0; e < count; ++e) dst[e] = static_cast<float>(q[e]) * scales[e % kPanelWidth];
  } else {
    const auto* h = reinterpret_cast<const std::uint16_t*>(src);
    for (std::size_t e = 0; e < count; ++e) dst[e] = D == WeightDtype::bf16 ? bf16_to_f32(h[e]) : f16_to_f32(h[e]);
  }
}

// Adds `steps` steps of a widened panel to ROWS rows' accumulators (gemm_packed's tile loop).
template <int ROWS>
inline void accumulate(std::size_t steps, const float* const* a, const float* wide, Batch (*acc)[kVecs]) {
  for (std::size_t kk = 0; kk < steps; ++kk) {
    Batch b[kVecs];
    for (std::size_t v = 0; v < kVecs; ++v) b[v] = Batch::load_aligned(wide + kk * kPanelWidth + v * Batch::size);
    for (int r = 0; r < ROWS; ++r) {
      const Batch a_rk(a[r][kk]);
      for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = simd::madd(b[v], a_rk, acc[r][v]);
    }
  }
}

// gemm_tile's ending: out = acc (+ bias) (+ c), column by column.
inline void store_row(const float* acc, const float* bias, float* c, std::size_t cols, bool add) {
  for (std::size_t j = 0; j < cols; ++j) {
    const float out = bias ? acc[j] + bias[j] : acc[j];
    c[j] = add ? c[j] + out : out;
  }
}

// The few-rows path: each panel widened 64 steps at a time, every row (≤ 4) accumulated from it.
template <WeightDtype D>
void gemm_stored(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                 const float* bias, float* c, std::size_t ldc, bool add) {
  constexpr std::size_t E = D == WeightDtype::int8 ? 1 : 2;
  alignas(64) float wide[kStepChunk * kPanelWidth];
  alignas(64) float sums[kReducedRowsMax][kPanelWidth];
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    const std::uint8_t* panel = w.data + p0 * w.packed_k * E;
    const float* scales = w.scales ? w.scales + p0 : nullptr;
    for (std::size_t i0 = 0; i0 < m; i0 += kReducedRowsMax) {
      const std::size_t rows = std::min(kReducedRowsMax, m - i0);
      std::fill_n(&sums[0][0], kReducedRowsMax * kPanelWidth, 0.0f);
      for (std::size_t k0 = 0; k0 < k; k0 += kStepChunk) {
        const std::size_t steps = std::min(kStepChunk, k - k0);
        widen_steps<D>(panel + k0 * kPanelWidth * E, scales, steps, wide);
        // Rows two at a time (gemm_packed's tile height: 8 accumulators fit the registers).
        for (std::size_t r = 0; r < rows; r += 2) {
          const int pair = rows - r >= 2 ? 2 : 1;
          Batch acc[2][kVecs];
          const float* a_rows[2] = {a + (i0 + r) * lda + k0, a + (i0 + r + pair - 1) * lda + k0};
          for (int i = 0; i < pair; ++i)
            for (std::size_t v = 0; v < kVecs; ++v) acc[i][v] = Batch::load_aligned(sums[r + i] + v * Batch::size);
          if (pair == 2)
            accumulate<2>(steps, a_rows, wide, acc);
          else
            accumulate<1>(steps, a_rows, wide, acc);
          for (int i = 0; i < pair; ++i)
            for (std::size_t v = 0; v < kVecs; ++v) acc[i][v].store_aligned(sums[r + i] + v * Batch::size);
        }
      }
      for (std::size_t r = 0; r < rows; ++r)
        store_row(sums[r], bias ? bias + p0 : nullptr, c + (i0 + r) * ldc + p0, cols, add);
    }
  }
}

// The many-rows path: a panel at a time widened whole into `wide`, then gemm_packed over every row.
template <WeightDtype D>
void gemm_widened(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                  const float* bias, float* c, std::size_t ldc, bool add, float* wide) {
  constexpr std::size_t E = D == WeightDtype::int8 ? 1 : 2;
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    widen_steps<D>(w.data + p0 * w.packed_k * E, w.scales ? w.scales + p0 : nullptr, k, wide);
    const float* panel_bias = bias ? bias + p0 : nullptr;
    if (add)
      gemm_packed_add(m, cols, k, a, lda, wide, k, panel_bias, c + p0, ldc);
    else
      gemm_packed(m, cols, k, a, lda, wide, k, panel_bias, c + p0, ldc);
  }
}

template <WeightDtype D>
void gemm_dtype(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                const float* bias, float* c, std::size_t ldc, bool add) {
  if (m > kReducedRowsMax) {
    FloatBuffer wide;
    if (wide.allocate(kPanelWidth * k)) return gemm_widened<D>(m, n, k, a, lda, w, bias, c, ldc, add, wide.get());
  }
  gemm_stored<D>(m, n, k, a, lda, w, bias, c, ldc, add);
}

}  // namespace

double reduced_bytes(WeightDtype dtype, std::size_t n, std::size_t k) {
  const double columns = static_cast<double>((n + kPanelWidth - 1) / kPanelWidth * kPanelWidth);
  const double scales = dtype == WeightDtype::int8 ? columns * sizeof(float) : 0.0;
  return columns * static_cast<double>(k) * static_cast<double>(weight_element_bytes(dtype)) + scales;
}

void reduced_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                  const float* bias, float* c, std::size_t ldc, bool add) {
  switch (w.dtype) {
    case WeightDtype::f16:
      return gemm_dtype<WeightDtype::f16>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::bf16:
      return gemm_dtype<WeightDtype::bf16>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::int8:
      return gemm_dtype<WeightDtype::int8>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::f32:
      break;  // f32 weights are packed as floats and multiplied by gemm_packed itself
  }
}

void store_reduced(WeightDtype dtype, const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k,
                   std::size_t j0, std::size_t j1, std::uint8_t* out, float* scales) {
  const std::size_t E = weight_element_bytes(dtype);
  for (std::size_t p0 = j0; p0 < j1; p0 += kPanelWidth) {
    std::uint8_t* panel = out + p0 * k * E;
    for (std::size_t jj = 0; jj < kPanelWidth; ++jj) {
      const std::size_t j = p0 + jj;
      const float* col = j < n ? w + j * ld_j : nullptr;  // padding columns store zeros
      float scale = 1.0f;
      if (dtype == WeightDtype::int8) {
        float max_abs = 0.0f;
        for (std::size_t kk = 0; j < n && kk < k; ++kk) max_abs = std::max(max_abs, std::fabs(col[kk * ld_k]));
        scales[j] = scale = int8_scale(max_abs);
      }
      for (std::size_t kk = 0; kk < k; ++kk) {
        const float x = j < n ? col[kk * ld_k] : 0.0f;
        const std::size_t e = kk * kPanelWidth + jj;
        if (dtype == WeightDtype::int8) {
          reinterpret_cast<std::int8_t*>(panel)[e] = int8_quantize(x, scale);
        } else {
          const std::uint16_t h = dtype == WeightDtype::bf16 ? f32_to_bf16(x) : f32_to_f16(x);
          reinterpret_cast<std::uint16_t*>(panel)[e] = h;
        }
      }
    }
  }
}

}  // namespace wa
