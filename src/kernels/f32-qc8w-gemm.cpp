// f32 × qc8-weight GEMM: an int8 step widened in lanes without a conversion instruction (clang folds
// an int8 → int32 → float32 conversion into a scalar one per lane); the loops are widened-gemm.h's.
#include "f32-qc8w-gemm.h"

#include <algorithm>
#include <cmath>

#include "int8-quantize.h"
#include "widened-gemm.h"

namespace wa {
namespace {

using widened::Batch;

#ifndef WA_SCALAR
// Qc8Widen's constants in order: 0x80 in every byte (q + 128 as an unsigned byte), 0x4b00 in every
// 16-bit half (2^23's exponent above the byte), 2^23 + 128.
constexpr std::uint32_t kQc8Words[] = {0x80808080u, 0x4b004b00u, 0x4b000080u};
constexpr widened::LaneWords<3> kQc8Lanes = widened::lane_words(kQc8Words);
#endif

// One step of a panel (16 int8 weights) widened to float(q) in four batches: q flipped to the byte
// q + 128 and placed under 2^23's exponent, so the float is 2^23 + q + 128 and one exact subtraction
// leaves q. The scalar build converts value by value to the same floats.
struct Qc8Widen {
  static constexpr std::size_t kStepBytes = kPanelWidth;
  struct Constants {
#ifndef WA_SCALAR
    __m128i flip, exponent;
    __m128 offset;
#endif
  };

  static Constants load() {
#ifndef WA_SCALAR
    const __m128i* c = widened::load_lanes(kQc8Lanes);
    return {_mm_load_si128(c), _mm_load_si128(c + 1), _mm_castsi128_ps(_mm_load_si128(c + 2))};
#else
    return {};
#endif
  }

  static void step(const std::uint8_t* src, const Constants& c, Batch* out) {
#ifndef WA_SCALAR
    const __m128i zero = _mm_setzero_si128();
    const __m128i u = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), c.flip);
    const __m128i lo = _mm_unpacklo_epi8(u, zero), hi = _mm_unpackhi_epi8(u, zero);
    const __m128i words[4] = {_mm_unpacklo_epi16(lo, c.exponent), _mm_unpackhi_epi16(lo, c.exponent),
                              _mm_unpacklo_epi16(hi, c.exponent), _mm_unpackhi_epi16(hi, c.exponent)};
    for (int v = 0; v < 4; ++v) out[v] = Batch(_mm_sub_ps(_mm_castsi128_ps(words[v]), c.offset));
#else
    (void)c;
    alignas(16) float w[kPanelWidth];
    const auto* q = reinterpret_cast<const std::int8_t*>(src);
    for (std::size_t j = 0; j < kPanelWidth; ++j) w[j] = static_cast<float>(q[j]);
    for (std::size_t v = 0; v < widened::kVecs; ++v) out[v] = Batch::load_aligned(w + v * Batch::size);
#endif
  }
};

}  // namespace

void f32_qc8w_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                   const float* bias, float* c, std::size_t ldc, bool add) {
  widened::gemm<Qc8Widen>(m, n, k, a, lda, w, bias, c, ldc, add);
}

void pack_qc8w(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
               std::size_t j1, std::uint8_t* out, float* scales) {
  for (std::size_t p0 = j0; p0 < j1; p0 += kPanelWidth) {
    auto* panel = reinterpret_cast<std::int8_t*>(out) + p0 * k;
    for (std::size_t jj = 0; jj < kPanelWidth; ++jj) {
      const std::size_t j = p0 + jj;
      const float* col = j < n ? w + j * ld_j : nullptr;  // padding columns store zeros
      float max_abs = 0.0f;
      for (std::size_t kk = 0; j < n && kk < k; ++kk) max_abs = std::max(max_abs, std::fabs(col[kk * ld_k]));
      const float scale = scales[j] = int8_scale(max_abs);
      for (std::size_t kk = 0; kk < k; ++kk)
        panel[kk * kPanelWidth + jj] = int8_quantize(j < n ? col[kk * ld_k] : 0.0f, scale);
    }
  }
}

}  // namespace wa
