// RMSNorm and LayerNorm against double references, at row lengths around the SIMD width, several rows,
// in place, and with the values that break naive formulas (a large mean, a constant row).
#include <cmath>

#include "kernels/f32-layernorm.h"
#include "kernels/f32-rmsnorm.h"
#include "test_util.h"

namespace {

const std::size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 64, 576};

// float32 arithmetic on O(1) values: a few ulps of the result's scale.
::testing::AssertionResult close(const std::vector<float>& got, const std::vector<double>& ref,
                                 const std::string& label) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - ref[i]) <= 2e-6 * (1.0 + std::fabs(ref[i]))))
      return ::testing::AssertionFailure()
             << label << ": first bad index " << i << " got " << got[i] << " expected " << ref[i];
  return ::testing::AssertionSuccess();
}

std::vector<double> rms_ref(const std::vector<float>& x, const std::vector<float>& w, std::size_t rows, std::size_t n,
                            double eps) {
  std::vector<double> y(rows * n);
  for (std::size_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::size_t j = 0; j < n; ++j) ss += double(x[r * n + j]) * x[r * n + j];
    const double inv = 1.0 / std::sqrt(ss / n + eps);
    for (std::size_t j = 0; j < n; ++j) y[r * n + j] = w[j] * (x[r * n + j] * inv);
  }
  return y;
}

std::vector<double> ln_ref(const std::vector<float>& x, const std::vector<float>& w, const float* b, std::size_t rows,
                           std::size_t n, double eps) {
  std::vector<double> y(rows * n);
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t j = 0; j < n; ++j) mean += x[r * n + j];
    mean /= n;
    for (std::size_t j = 0; j < n; ++j) var += (x[r * n + j] - mean) * (x[r * n + j] - mean);
    const double inv = 1.0 / std::sqrt(var / n + eps);
    for (std::size_t j = 0; j < n; ++j) y[r * n + j] = (x[r * n + j] - mean) * inv * w[j] + (b ? b[j] : 0.0);
  }
  return y;
}

TEST(RmsNorm, MatchesDoubleReferenceAroundSimdWidth) {
  for (std::size_t n : kSizes) {
    const std::size_t rows = 3;
    const auto x = wa_test::random_vector(rows * n, 1 + n, -3.0f, 3.0f);
    const auto w = wa_test::random_vector(n, 100 + n, 0.5f, 1.5f);
    std::vector<float> y(rows * n);
    wa::rmsnorm(x.data(), w.data(), rows, n, 1e-6f, y.data());
    EXPECT_TRUE(close(y, rms_ref(x, w, rows, n, 1e-6f), "n=" + std::to_string(n)));
    auto in_place = x;
    wa::rmsnorm(in_place.data(), w.data(), rows, n, 1e-6f, in_place.data());
    EXPECT_EQ(in_place, y) << "in place, n=" << n;
  }
}

TEST(RmsNorm, EpsilonDominatesAZeroRow) {
  std::vector<float> x(9, 0.0f), w(9, 2.0f), y(9, -1.0f);
  wa::rmsnorm(x.data(), w.data(), 1, 9, 1e-5f, y.data());
  for (std::size_t j = 0; j < 9; ++j) EXPECT_EQ(y[j], 0.0f) << "index " << j;
  x.assign(9, 1e-3f);  // mean square 1e-6, eps 1e-5: y = 2·1e-3/sqrt(1.1e-5)
  wa::rmsnorm(x.data(), w.data(), 1, 9, 1e-5f, y.data());
  EXPECT_TRUE(close(y, std::vector<double>(9, 2 * 1e-3 / std::sqrt(1e-6 + 1e-5)), "small row"));
}

TEST(LayerNorm, MatchesDoubleReferenceAroundSimdWidthWithAndWithoutBias) {
  for (std::size_t n : kSizes) {
    const std::size_t rows = 2;
    const auto x = wa_test::random_vector(rows * n, 3 + n, -2.0f, 4.0f);
    const auto w = wa_test::random_vector(n, 200 + n, 0.5f, 1.5f);
    const auto b = wa_test::random_vector(n, 300 + n);
    std::vector<float> y(rows * n);
    for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
      wa::layernorm(x.data(), w.data(), bias, rows, n, 1e-5f, y.data());
      EXPECT_TRUE(close(y, ln_ref(x, w, bias, rows, n, 1e-5f), "n=" + std::to_string(n) + (bias ? " bias" : "")));
    }
    auto in_place = x;
    wa::layernorm(in_place.data(), w.data(), b.data(), rows, n, 1e-12f, in_place.data());
    wa::layernorm(x.data(), w.data(), b.data(), rows, n, 1e-12f, y.data());
    EXPECT_EQ(in_place, y) << "in place, n=" << n;
  }
}

TEST(LayerNorm, LargeMeanKeepsTheVarianceAndAConstantRowGivesTheBias) {
  // Values 1000 ± 1: a one-pass E[x²] − E[x]² in float32 would lose the variance entirely.
  auto x = wa_test::random_vector(37, 5, 999.0f, 1001.0f);
  std::vector<float> w(37, 1.0f), b(37, 0.25f), y(37);
  wa::layernorm(x.data(), w.data(), b.data(), 1, 37, 1e-5f, y.data());
  const auto ref = ln_ref(x, w, b.data(), 1, 37, 1e-5);
  for (std::size_t j = 0; j < 37; ++j) EXPECT_NEAR(y[j], ref[j], 2e-3) << "index " << j;  // x itself is rounded to 6e-5
  std::vector<float> flat(13, 7.5f);
  wa::layernorm(flat.data(), w.data(), b.data(), 1, 13, 1e-12f, y.data());
  for (std::size_t j = 0; j < 13; ++j) EXPECT_EQ(y[j], 0.25f) << "index " << j;
}

TEST(Norms, NaNPropagatesToItsRowOnly) {
  std::vector<float> x = wa_test::random_vector(2 * 6, 9), w(6, 1.0f), y(12);
  x[3] = NAN;
  wa::rmsnorm(x.data(), w.data(), 2, 6, 1e-6f, y.data());
  for (std::size_t j = 0; j < 12; ++j) EXPECT_EQ(std::isnan(y[j]), j < 6) << "rmsnorm index " << j;
  wa::layernorm(x.data(), w.data(), nullptr, 2, 6, 1e-6f, y.data());
  for (std::size_t j = 0; j < 12; ++j) EXPECT_EQ(std::isnan(y[j]), j < 6) << "layernorm index " << j;
}

}  // namespace
