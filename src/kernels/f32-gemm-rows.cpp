#include "f32-gemm-rows.h"

#include "simd.h"

namespace wa {
namespace {

using Batch = simd::batch<float>;
constexpr std::size_t kLanes = Batch::size;  // rows of A per pass

// COLS outputs of up to 4 rows: acc[j] lane r sums a[r][kk]·w[j][kk] for kk = 0, 1, …, as
// gemm_packed's accumulators do (the same products, the same order, the same simd::madd, so fused
// in the relaxed builds as there). 8 accumulators, A's lanes and a broadcast W value fit V8's 15
// vector registers.
template <int COLS>
inline void lanes_tile(std::size_t k, const float* at, const float* w, std::size_t ldw, const float* bias, float* c,
                       std::size_t ldc, std::size_t rows) {
  Batch acc[COLS];
  for (int j = 0; j < COLS; ++j) acc[j] = Batch(0.0f);
  // Pointers advance by a constant (Emscripten builds without loop strength reduction).
  const float* w_row[COLS];
  for (int j = 0; j < COLS; ++j) w_row[j] = w + j * ldw;
  const float* const end = at + k * kLanes;
  for (const float* p = at; p != end; p += kLanes) {
    const Batch av = Batch::load_aligned(p);
    for (int j = 0; j < COLS; ++j) acc[j] = simd::madd(Batch(*w_row[j]++), av, acc[j]);
  }
  alignas(16) float lanes[kLanes];
  for (int j = 0; j < COLS; ++j) {
    acc[j].store_aligned(lanes);
    for (std::size_t r = 0; r < rows; ++r) c[r * ldc + j] = bias ? lanes[r] + bias[j] : lanes[r];
  }
}

}  // namespace

void gemm_rows(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* w,
               std::size_t ldw, const float* bias, float* c, std::size_t ldc) {
  alignas(16) float at[kMaxRowsK * kLanes];  // A's rows i0… as lanes: at[kk·4 + r] = a[i0 + r][kk]
  for (std::size_t i0 = 0; i0 < m; i0 += kLanes) {
    const std::size_t rows = m - i0 < kLanes ? m - i0 : kLanes;
    for (std::size_t kk = 0; kk < k; ++kk)
      for (std::size_t r = 0; r < kLanes; ++r) at[kk * kLanes + r] = r < rows ? a[(i0 + r) * lda + kk] : 0.0f;
    float* c_rows = c + i0 * ldc;
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) lanes_tile<8>(k, at, w + j * ldw, ldw, bias ? bias + j : nullptr, c_rows + j, ldc, rows);
    for (; j + 2 <= n; j += 2) lanes_tile<2>(k, at, w + j * ldw, ldw, bias ? bias + j : nullptr, c_rows + j, ldc, rows);
    if (j < n) lanes_tile<1>(k, at, w + j * ldw, ldw, bias ? bias + j : nullptr, c_rows + j, ldc, rows);
  }
}

}  // namespace wa
