#include "kernels/f32-softmax.h"
#include "test_util.h"

namespace {

TEST(Softmax, MatchesDoubleReferenceAroundSimdWidth) {
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 17u, 33u, 1000u}) {
    auto x = wa_test::random_vector(n, 7 + n, -30.0f, 30.0f);
    double max = -INFINITY, sum = 0.0;
    for (float v : x) max = std::max<double>(max, v);
    std::vector<double> ref(n);
    for (std::size_t j = 0; j < n; ++j) sum += ref[j] = std::exp(static_cast<double>(x[j]) - max);
    for (auto& r : ref) r /= sum;
    EXPECT_TRUE(wa::softmax_row(x.data(), n));
    EXPECT_TRUE(wa_test::all_close(x, ref, "n=" + std::to_string(n)));
  }
}

TEST(Softmax, FullyMaskedRowBecomesZeros) {
  for (std::size_t n : {1u, 4u, 5u, 9u}) {
    std::vector<float> x(n, -INFINITY);
    EXPECT_FALSE(wa::softmax_row(x.data(), n));
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(x[j], 0.0f) << "n=" << n << " index " << j;
  }
}

TEST(Softmax, PartlyMaskedRowIgnoresMaskedEntries) {
  std::vector<float> x = {1.0f, -INFINITY, 1.0f, -INFINITY, 1.0f, 1.0f};
  EXPECT_TRUE(wa::softmax_row(x.data(), x.size()));
  EXPECT_TRUE(wa_test::all_close(x, {0.25, 0, 0.25, 0, 0.25, 0.25}, "partly masked"));
}

TEST(Softmax, LargeValuesDoNotOverflow) {
  std::vector<float> x = {1e30f, 1e30f, -1e30f, 88.0f, 1e30f};
  EXPECT_TRUE(wa::softmax_row(x.data(), x.size()));
  EXPECT_TRUE(wa_test::all_close(x, {1.0 / 3, 1.0 / 3, 0, 0, 1.0 / 3}, "large"));
}

TEST(Softmax, NaNPropagatesWithoutCrashing) {
  std::vector<float> x = {0.0f, NAN, 1.0f, 2.0f, 3.0f};
  wa::softmax_row(x.data(), x.size());
  EXPECT_TRUE(std::isnan(x[1]));
}

}  // namespace

#include "kernels/f32-exp.h"

namespace {

TEST(Exp, NonPositiveMatchesStdExpWithinTwoUlpAndUnderflowsToZero) {
  using Batch = wa::simd::batch<float>;
  for (float x0 = -104.0f; x0 <= 0.0f; x0 += 0.0137f) {
    alignas(16) float in[Batch::size], out[Batch::size];
    for (std::size_t l = 0; l < Batch::size; ++l) in[l] = std::fmin(0.0f, x0 + 0.003f * l);
    wa::exp_nonpositive(Batch::load_aligned(in), wa::exp_constants()).store_aligned(out);
    for (std::size_t l = 0; l < Batch::size; ++l) {
      const double ref = std::exp(static_cast<double>(in[l]));
      if (ref < 1.2e-38) {
        EXPECT_LE(out[l], 1.2e-38f) << "x=" << in[l];
      } else {
        EXPECT_NEAR(out[l], ref, 2.5e-7 * ref) << "x=" << in[l];
      }
    }
  }
  alignas(16) float special[4] = {-INFINITY, NAN, 0.0f, -0.0f}, out[4];
  wa::exp_nonpositive(Batch::load_aligned(special), wa::exp_constants()).store_aligned(out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_EQ(out[3], 1.0f);
}

}  // namespace
