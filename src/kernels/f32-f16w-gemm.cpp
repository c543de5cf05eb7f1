// f32 × f16-weight GEMM: an f16 step widened in lanes without a conversion instruction (the loops
// are widened-gemm.h's).
#include "f32-f16w-gemm.h"

#include "f16-convert.h"
#include "widened-gemm.h"

namespace wa {
namespace {

using widened::Batch;

#ifndef WA_SCALAR
// F16Widen's constants in order: 0x8fff (the sign, not its copies smeared by the shift), 2^112,
// 0x7fffffff (all but the sign), 65504 (the largest finite), 0x7f800000 (the exponent all ones).
constexpr std::uint32_t kF16Words[] = {0x8fff8fffu, 0x77800000u, 0x7fffffffu, 0x477fe000u, 0x7f800000u};
constexpr widened::LaneWords<5> kF16Lanes = widened::lane_words(kF16Words);
#endif

// One step of a panel (16 f16 weights) widened to float32 in four batches: the exponent and
// mantissa shifted into place and scaled by 2^112 exactly, Inf and NaN (SPECIALS) then given the
// all-ones exponent. The scalar build widens value by value to the same floats.
template <bool SPECIALS>
struct F16Widen {
  static constexpr std::size_t kStepBytes = kPanelWidth * 2;
  struct Constants {
#ifndef WA_SCALAR
    __m128i keep;
    __m128 scale, magnitude, largest, inf;
#endif
  };

  static Constants load() {
#ifndef WA_SCALAR
    const __m128i* c = widened::load_lanes(kF16Lanes);
    const auto f = [&](int i) { return _mm_castsi128_ps(_mm_load_si128(c + i)); };
    return {_mm_load_si128(c), f(1), f(2), f(3), f(4)};
#else
    return {};
#endif
  }

  static void step(const std::uint8_t* src, const Constants& c, Batch* out) {
#ifndef WA_SCALAR
    const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
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
#else
    (void)c;
    alignas(16) float w[kPanelWidth];
    const auto* h = reinterpret_cast<const std::uint16_t*>(src);
    for (std::size_t j = 0; j < kPanelWidth; ++j) w[j] = f16_to_f32(h[j]);
    for (std::size_t v = 0; v < widened::kVecs; ++v) out[v] = Batch::load_aligned(w + v * Batch::size);
#endif
  }
};

}  // namespace

void f32_f16w_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                   const float* bias, float* c, std::size_t ldc, bool add) {
  if (w.specials) return widened::gemm<F16Widen<true>>(m, n, k, a, lda, w, bias, c, ldc, add);
  widened::gemm<F16Widen<false>>(m, n, k, a, lda, w, bias, c, ldc, add);
}

void pack_f16w(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
               std::size_t j1, std::uint8_t* out) {
  pack_half_panels<f32_to_f16>(w, ld_j, ld_k, n, k, j0, j1, out);
}

bool f16w_has_specials(const std::uint8_t* data, std::size_t count) {
  const auto* h = reinterpret_cast<const std::uint16_t*>(data);
  std::uint16_t any = 0;  // without a branch per weight: some exponent all ones
  for (std::size_t e = 0; e < count; ++e) any |= static_cast<std::uint16_t>((h[e] & 0x7c00u) == 0x7c00u);
  return any != 0;
}

}  // namespace wa
