// f32 × bf16-weight GEMM: bf16 is float32's high half, so a step widens by interleaving its halves
// below zeros (the loops are widened-gemm.h's).
#include "f32-bf16w-gemm.h"

#include "f16-convert.h"
#include "widened-gemm.h"

namespace wa {
namespace {

using widened::Batch;

// One step of a panel (16 bf16 weights) widened to float32 in four batches (h << 16); the scalar
// build widens value by value to the same floats.
struct Bf16Widen {
  static constexpr std::size_t kStepBytes = kPanelWidth * 2;
  struct Constants {};

  static Constants load() { return {}; }

  static void step(const std::uint8_t* src, const Constants&, Batch* out) {
#ifndef WA_SCALAR
    const __m128i zero = _mm_setzero_si128();
    const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    out[0] = Batch(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, h0)));
    out[1] = Batch(_mm_castsi128_ps(_mm_unpackhi_epi16(zero, h0)));
    out[2] = Batch(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, h1)));
    out[3] = Batch(_mm_castsi128_ps(_mm_unpackhi_epi16(zero, h1)));
#else
    alignas(16) float w[kPanelWidth];
    const auto* h = reinterpret_cast<const std::uint16_t*>(src);
    for (std::size_t j = 0; j < kPanelWidth; ++j) w[j] = bf16_to_f32(h[j]);
    for (std::size_t v = 0; v < widened::kVecs; ++v) out[v] = Batch::load_aligned(w + v * Batch::size);
#endif
  }
};

}  // namespace

void f32_bf16w_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                    const ReducedPanels& w, const float* bias, float* c, std::size_t ldc, bool add) {
  widened::gemm<Bf16Widen>(m, n, k, a, lda, w, bias, c, ldc, add);
}

void pack_bf16w(const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k, std::size_t j0,
                std::size_t j1, std::uint8_t* out) {
  pack_half_panels<f32_to_bf16>(w, ld_j, ld_k, n, k, j0, j1, out);
}

}  // namespace wa
