#include <cstring>

#include "buffer.h"
#include "kernels/f32-gemm-rows.h"
#include "kernels/f32-gemm.h"
#include "test_util.h"

namespace {

// C = A·Wᵀ + bias in double, W as nn.Linear [n, k].
std::vector<double> reference_gemm_bt(const std::vector<float>& a, const std::vector<float>& w,
                                      const std::vector<float>& bias, std::size_t m, std::size_t n, std::size_t k) {
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = bias.empty() ? 0.0 : bias[j];
      for (std::size_t kk = 0; kk < k; ++kk) acc += static_cast<double>(a[i * k + kk]) * w[j * k + kk];
      c[i * n + j] = acc;
    }
  return c;
}

const std::size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33};

TEST(Gemm, PackedTransposedMatchesReferenceAroundTileSizes) {
  for (std::size_t m : kSizes)
    for (std::size_t n : kSizes)
      for (std::size_t k : {1u, 3u, 4u, 17u, 64u})
        for (bool with_bias : {false, true}) {
          const auto a = wa_test::random_vector(m * k, 1 + m);
          const auto w = wa_test::random_vector(n * k, 2 + n);
          const auto bias = with_bias ? wa_test::random_vector(n, 3) : std::vector<float>{};
          wa::FloatBuffer packed;
          ASSERT_TRUE(packed.allocate(wa::packed_panel_floats(n, k)));
          wa::pack_transposed(w.data(), n, k, k, packed.get());
          std::vector<float> c(m * n, -7.0f);
          wa::gemm_packed(m, n, k, a.data(), k, packed.get(), k, with_bias ? bias.data() : nullptr, c.data(), n);
          const std::string label = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                    (with_bias ? " bias" : "");
          EXPECT_TRUE(wa_test::all_close(c, reference_gemm_bt(a, w, bias, m, n, k), label));
        }
}

TEST(GemmRows, MatchesReferenceAroundTileSizesAndWritesOnlyItsColumns) {
  for (std::size_t m : kSizes)
    for (std::size_t n : kSizes)
      for (std::size_t k : {1u, 3u, 4u, 17u, 64u})
        for (bool with_bias : {false, true}) {
          const std::size_t ldc = n + 3;
          const auto a = wa_test::random_vector(m * k, 1 + m);
          const auto w = wa_test::random_vector(n * k, 2 + n);
          const auto bias = with_bias ? wa_test::random_vector(n, 3) : std::vector<float>{};
          std::vector<float> c(m * ldc, -7.0f);
          wa::gemm_rows(m, n, k, a.data(), k, w.data(), k, with_bias ? bias.data() : nullptr, c.data(), ldc);
          const std::string label = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                    (with_bias ? " bias" : "");
          std::vector<float> dense(m * n);
          for (std::size_t i = 0; i < m; ++i) {
            std::memcpy(dense.data() + i * n, c.data() + i * ldc, n * sizeof(float));
            for (std::size_t j = n; j < ldc; ++j)
              EXPECT_EQ(c[i * ldc + j], -7.0f) << label << ": wrote past column " << n;
          }
          EXPECT_TRUE(wa_test::all_close(dense, reference_gemm_bt(a, w, bias, m, n, k), label));
        }
}

// A one-shot call with few rows reads its weights in place, a prepared layer packs them: the same
// numbers, bit for bit.
TEST(GemmRows, GivesTheBitsOfThePackedProduct) {
  for (std::size_t m : {1u, 3u, 4u, 5u, 9u})
    for (std::size_t n : {1u, 7u, 16u, 33u})
      for (std::size_t k : {1u, 5u, 64u, 512u}) {
        const auto a = wa_test::random_vector(m * k, 31 + m);
        const auto w = wa_test::random_vector(n * k, 32 + n);
        const auto bias = wa_test::random_vector(n, 33);
        wa::FloatBuffer packed;
        ASSERT_TRUE(packed.allocate(wa::packed_panel_floats(n, k)));
        wa::pack_transposed(w.data(), n, k, k, packed.get());
        std::vector<float> want(m * n), got(m * n);
        wa::gemm_packed(m, n, k, a.data(), k, packed.get(), k, bias.data(), want.data(), n);
        wa::gemm_rows(m, n, k, a.data(), k, w.data(), k, bias.data(), got.data(), n);
        EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
            << "m=" << m << " n=" << n << " k=" << k;
      }
}

// A decode step's one row reads two panels at once: each of its outputs keeps the bits of the same
// row in a product of more rows, for C =, C += and C = (A·B + bias) + C.
TEST(Gemm, OneRowGivesTheBitsOfThatRowAmongMore) {
  for (std::size_t n : {16u, 32u, 33u, 48u, 70u})
    for (std::size_t k : {1u, 64u, 300u, 1024u, 1100u}) {
      const std::size_t m = 3;
      const auto a = wa_test::random_vector(m * k, 41 + n);
      const auto w = wa_test::random_vector(n * k, 42 + k);
      const auto bias = wa_test::random_vector(n, 43);
      const auto start = wa_test::random_vector(m * n, 44);
      wa::FloatBuffer packed;
      ASSERT_TRUE(packed.allocate(wa::packed_panel_floats(n, k)));
      wa::pack_transposed(w.data(), n, k, k, packed.get());
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<float> many(start), one(start.begin() + n, start.begin() + 2 * n);
        const float* row = a.data() + k;  // row 1: the second row of the first pair
        if (kind == 0) {
          wa::gemm_packed(m, n, k, a.data(), k, packed.get(), k, bias.data(), many.data(), n);
          wa::gemm_packed(1, n, k, row, k, packed.get(), k, bias.data(), one.data(), n);
        } else if (kind == 1) {
          wa::gemm_packed_accumulate(m, n, k, a.data(), k, packed.get(), k, many.data(), n);
          wa::gemm_packed_accumulate(1, n, k, row, k, packed.get(), k, one.data(), n);
        } else {
          wa::gemm_packed_add(m, n, k, a.data(), k, packed.get(), k, bias.data(), many.data(), n);
          wa::gemm_packed_add(1, n, k, row, k, packed.get(), k, bias.data(), one.data(), n);
        }
        EXPECT_EQ(std::memcmp(many.data() + n, one.data(), n * sizeof(float)), 0)
            << "n=" << n << " k=" << k << " kind=" << kind;
      }
    }
}

// Threads split a projection by rows and by columns: every split gives the same bits.
TEST(GemmRows, AnySplitOfRowsAndColumnsGivesTheSameBits) {
  const std::size_t m = 11, n = 37, k = 67;
  const auto a = wa_test::random_vector(m * k, 21);
  const auto w = wa_test::random_vector(n * k, 22);
  const auto bias = wa_test::random_vector(n, 23);
  std::vector<float> whole(m * n), pieces(m * n);
  wa::gemm_rows(m, n, k, a.data(), k, w.data(), k, bias.data(), whole.data(), n);
  for (std::size_t r0 : {0u, 1u, 6u})
    for (std::size_t c0 : {0u, 3u, 16u}) {
      const std::size_t r1 = r0 == 0 ? 1 : r0 == 1 ? 6 : m, c1 = c0 == 0 ? 3 : c0 == 3 ? 16 : n;
      wa::gemm_rows(r1 - r0, c1 - c0, k, a.data() + r0 * k, k, w.data() + c0 * k, k, bias.data() + c0,
                    pieces.data() + r0 * n + c0, n);
    }
  EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0);
}

TEST(Gemm, PackedRowsWithShorterKAndStridedOutput) {
  // P·V as attention uses it: V packed for all keys, the product stops early (causal).
  const std::size_t m = 5, n = 17, packed_k = 33, k = 20, ldc = 40;
  const auto a = wa_test::random_vector(m * packed_k, 11);
  const auto b = wa_test::random_vector(packed_k * n, 12);
  wa::FloatBuffer packed;
  ASSERT_TRUE(packed.allocate(wa::packed_panel_floats(n, packed_k)));
  // Packed in two row chunks, as threads do.
  wa::pack_rows(b.data(), 13, n, n, packed.get(), packed_k);
  wa::pack_rows(b.data() + 13 * n, packed_k - 13, n, n, packed.get() + 13 * wa::kPanelWidth, packed_k);
  std::vector<float> c(m * ldc, -7.0f);
  wa::gemm_packed(m, n, k, a.data(), packed_k, packed.get(), packed_k, nullptr, c.data(), ldc);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double ref = 0.0;
      for (std::size_t kk = 0; kk < k; ++kk) ref += static_cast<double>(a[i * packed_k + kk]) * b[kk * n + j];
      EXPECT_NEAR(c[i * ldc + j], ref, 1e-4 + 1e-4 * std::fabs(ref)) << "row " << i << " col " << j;
    }
    for (std::size_t j = n; j < ldc; ++j) EXPECT_EQ(c[i * ldc + j], -7.0f) << "wrote past column " << n;
  }
}

}  // namespace
