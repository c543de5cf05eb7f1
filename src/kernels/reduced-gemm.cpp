#include "reduced-gemm.h"

#include <algorithm>
#include <cmath>

#include "../buffer.h"
#include "f16-convert.h"
#include "f32-gemm.h"
#include "int8-quantize.h"
#include "simd.h"

#ifndef WA_SCALAR
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif
#include <smmintrin.h>  // SSE4.1, which Emscripten maps onto SIMD128 (as for xsimd's SSE path)
#endif

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kVecs = kPanelWidth / Batch::size;

// The widenings' constants, loaded once per call through a volatile pointer: written as
// v128.const in the loop, clang rematerializes them there and V8 builds each one anew every step
// (kv-half.h measured 3× slower).
struct WidenConstants {
#ifndef WA_SCALAR
  __m128i flip;      // int8: 0x80 in every byte (q + 128 as an unsigned byte)
  __m128i exponent;  // int8: 0x4b00 in every 16-bit half (2^23's exponent above the byte)
  __m128 offset;     // int8: 2^23 + 128
  __m128i keep;      // f16: 0x8fff (the sign, not its copies smeared by the shift)
  __m128 scale;      // f16: 2^112
  __m128 magnitude;  // f16: 0x7fffffff (all but the sign)
  __m128 largest;    // f16: 65504, the largest finite
  __m128 inf;        // f16: 0x7f800000 (the exponent all ones)
#endif
  static WidenConstants load();
};

#ifndef WA_SCALAR
// WidenConstants' fields in order, one 32-bit word of each (repeated in its four lanes).
constexpr std::uint32_t kWidenWords[] = {0x80808080u, 0x4b004b00u, 0x4b000080u, 0x8fff8fffu,
                                         0x77800000u, 0x7fffffffu, 0x477fe000u, 0x7f800000u};
constexpr std::size_t kWidenFields = sizeof kWidenWords / sizeof kWidenWords[0];
struct alignas(16) WidenTable {
  std::uint32_t lanes[kWidenFields * 4];
};
constexpr WidenTable widen_table() {
  WidenTable t{};
  for (std::size_t i = 0; i < kWidenFields * 4; ++i) t.lanes[i] = kWidenWords[i / 4];
  return t;
}
constexpr WidenTable kWidenConstants = widen_table();
WidenConstants WidenConstants::load() {
  const std::uint32_t* volatile table = kWidenConstants.lanes;
  const auto* c = reinterpret_cast<const __m128i*>(static_cast<const std::uint32_t*>(table));
  const auto f = [&](int i) { return _mm_castsi128_ps(_mm_load_si128(c + i)); };
  return {_mm_load_si128(c), _mm_load_si128(c + 1), f(2), _mm_load_si128(c + 3), f(4), f(5), f(6), f(7)};
}
#else
WidenConstants WidenConstants::load() { return {}; }
#endif

// One step of a panel (16 weights) widened to float32 in four batches: the one conversion both
// paths use (int8: float(q); the column's scale multiplies the sum). SIMD builds widen in lanes
// without a conversion instruction (clang folds an int8 → int32 → float32 conversion into a
// scalar one per lane): int8 flips q to the byte q + 128 and places it under 2^23's exponent, so
// the float is 2^23 + q + 128 and one exact subtraction leaves q; bf16 is the high half of a float
// (the halves interleaved below zeros); f16 has its exponent and mantissa shifted into place and
// scaled by 2^112 exactly, Inf and NaN then given the all-ones exponent. The scalar build widens
// value by value to the same floats.
template <WeightDtype D, bool SPECIALS>
inline void widen_step(const std::uint8_t* src, const WidenConstants& c, Batch* out) {
#ifndef WA_SCALAR
  const __m128i zero = _mm_setzero_si128();
  if constexpr (D == WeightDtype::int8) {
    const __m128i u = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), c.flip);
    const __m128i lo = _mm_unpacklo_epi8(u, zero), hi = _mm_unpackhi_epi8(u, zero);
    const __m128i words[4] = {_mm_unpacklo_epi16(lo, c.exponent), _mm_unpackhi_epi16(lo, c.exponent),
                              _mm_unpacklo_epi16(hi, c.exponent), _mm_unpackhi_epi16(hi, c.exponent)};
    for (int v = 0; v < 4; ++v) out[v] = Batch(_mm_sub_ps(_mm_castsi128_ps(words[v]), c.offset));
  } else {
    const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    if constexpr (D == WeightDtype::bf16) {  // h << 16: bf16 is float32's high half
      out[0] = Batch(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, h0)));
      out[1] = Batch(_mm_castsi128_ps(_mm_unpackhi_epi16(zero, h0)));
      out[2] = Batch(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, h1)));
      out[3] = Batch(_mm_castsi128_ps(_mm_unpackhi_epi16(zero, h1)));
    } else {
      // The float's high half is h arithmetic-shifted by 3 with the smeared sign copies masked off
      // (sign, 3 zeros, exponent, mantissa's top 7 bits), its low half h << 13 (the mantissa's last
      // 3 bits); 8 halves at a time, then interleaved. Times 2^112 that is the f16's value.
      const __m128i high0 = _mm_and_si128(_mm_srai_epi16(h0, 3), c.keep), low0 = _mm_slli_epi16(h0, 13);
      const __m128i high1 = _mm_and_si128(_mm_srai_epi16(h1, 3), c.keep), low1 = _mm_slli_epi16(h1, 13);
      const __m128i words[4] = {_mm_unpacklo_epi16(low0, high0), _mm_unpackhi_epi16(low0, high0),
                                _mm_unpacklo_epi16(low1, high1), _mm_unpackhi_epi16(low1, high1)};
      for (int v = 0; v < 4; ++v) {
        __m128 f = _mm_mul_ps(_mm_castsi128_ps(words[v]), c.scale);
        if constexpr (SPECIALS) {
          // An Inf or NaN (exponent all ones) became ±2^16·(1.m), past f16's largest finite 65504:
          // its exponent set to all ones makes it Inf, or NaN with the f16's payload.
          const __m128 special = _mm_cmpgt_ps(_mm_and_ps(f, c.magnitude), c.largest);
          f = _mm_or_ps(f, _mm_and_ps(special, c.inf));
        }
        out[v] = Batch(f);
      }
    }
  }
#else
  (void)c;
  alignas(16) float w[kPanelWidth];
  if constexpr (D == WeightDtype::int8) {
    const auto* q = reinterpret_cast<const std::int8_t*>(src);
    for (std::size_t j = 0; j < kPanelWidth; ++j) w[j] = static_cast<float>(q[j]);
  } else {
    const auto* h = reinterpret_cast<const std::uint16_t*>(src);
    for (std::size_t j = 0; j < kPanelWidth; ++j) w[j] = D == WeightDtype::bf16 ? bf16_to_f32(h[j]) : f16_to_f32(h[j]);
  }
  for (std::size_t v = 0; v < kVecs; ++v) {
    out[v] = Batch::load_aligned(w + v * Batch::size);
  }
#endif
}

// Bytes of one step of a panel.
template <WeightDtype D>
constexpr std::size_t kStepBytes = kPanelWidth*(D == WeightDtype::int8 ? 1 : 2);

// ROWS rows (1 or 2) × one panel's 16 columns over k steps, each step widened in registers and used
// at once: gemm_packed's tile loop, its order and its simd::madd. The sums go to `sums` [ROWS][16].
// Out of line: V8 tiers a small function called per panel up soon, and no caller's values compete
// for its registers (a 1 × 32 tile, eight accumulators, spilled and ran 1.6× slower).
template <WeightDtype D, bool SPECIALS, int ROWS>
__attribute__((noinline)) void stored_tile(std::size_t k, const float* a, std::size_t lda, const std::uint8_t* panel,
                                           float* sums) {
  const WidenConstants c = WidenConstants::load();
  Batch acc[ROWS][kVecs];
  for (int r = 0; r < ROWS; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = Batch(0.0f);
  const float* a_row[ROWS];
  for (int r = 0; r < ROWS; ++r) a_row[r] = a + r * lda;
  const std::uint8_t* const end = panel + k * kStepBytes<D>;
  for (const std::uint8_t* p = panel; p != end; p += kStepBytes<D>) {
    Batch b[kVecs];
    widen_step<D, SPECIALS>(p, c, b);
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
template <WeightDtype D, bool SPECIALS>
void gemm_stored(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                 const float* bias, float* c, std::size_t ldc, bool add) {
  alignas(64) float sums[2 * kPanelWidth];
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    const std::uint8_t* panel = w.data + p0 / kPanelWidth * w.packed_k * kStepBytes<D>;
    for (std::size_t i = 0; i < m; i += 2) {
      const int rows = m - i >= 2 ? 2 : 1;
      if (rows == 2)
        stored_tile<D, SPECIALS, 2>(k, a + i * lda, lda, panel, sums);
      else
        stored_tile<D, SPECIALS, 1>(k, a + i * lda, lda, panel, sums);
      for (int r = 0; r < rows; ++r)
        store_row(sums + r * kPanelWidth, w.scales ? w.scales + p0 : nullptr, bias ? bias + p0 : nullptr,
                  c + (i + r) * ldc + p0, cols, add);
    }
  }
}

// The many-rows path: a panel at a time widened whole into `wide`, then gemm_packed over every row.
template <WeightDtype D, bool SPECIALS>
void gemm_widened(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                  const float* bias, float* c, std::size_t ldc, bool add, float* wide, float* tmp) {
  const WidenConstants constants = WidenConstants::load();
  for (std::size_t p0 = 0; p0 < n; p0 += kPanelWidth) {
    const std::size_t cols = std::min(kPanelWidth, n - p0);
    const std::uint8_t* panel = w.data + p0 / kPanelWidth * w.packed_k * kStepBytes<D>;
    for (std::size_t kk = 0; kk < k; ++kk) {
      Batch b[kVecs];
      widen_step<D, SPECIALS>(panel + kk * kStepBytes<D>, constants, b);
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

template <WeightDtype D, bool SPECIALS = true>
void gemm_dtype(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedWeights& w,
                const float* bias, float* c, std::size_t ldc, bool add) {
  if (m > kReducedRowsMax) {
    FloatBuffer wide;  // a widened panel, then (int8) the rows' sums for it
    if (wide.allocate(kPanelWidth * (k + m)))
      return gemm_widened<D, SPECIALS>(m, n, k, a, lda, w, bias, c, ldc, add, wide.get(), wide.get() + kPanelWidth * k);
  }
  gemm_stored<D, SPECIALS>(m, n, k, a, lda, w, bias, c, ldc, add);
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
      if (w.specials) return gemm_dtype<WeightDtype::f16, true>(m, n, k, a, lda, w, bias, c, ldc, add);
      return gemm_dtype<WeightDtype::f16, false>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::bf16:
      return gemm_dtype<WeightDtype::bf16>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::int8:
      return gemm_dtype<WeightDtype::int8>(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::f32:
      break;  // f32 weights are packed as floats and multiplied by gemm_packed itself
  }
}

bool has_specials(WeightDtype dtype, const std::uint8_t* data, std::size_t count) {
  if (dtype != WeightDtype::f16) return false;
  const auto* h = reinterpret_cast<const std::uint16_t*>(data);
  std::uint16_t any = 0;  // without a branch per weight: some exponent all ones
  for (std::size_t e = 0; e < count; ++e) any |= static_cast<std::uint16_t>((h[e] & 0x7c00u) == 0x7c00u);
  return any != 0;
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
