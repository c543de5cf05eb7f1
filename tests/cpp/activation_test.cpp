// SiLU, the SwiGLU product, GELU (tanh form and erf form) against double references: dense sweeps of
// the range where they bend, lengths around the SIMD width (the tail goes through the vector code),
// far tails, and ±inf and NaN.
#include <cmath>
#include <functional>

#include "kernels/f32-activations.h"
#include "test_util.h"

namespace {

double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double gelu_erf_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

using Kernel = void (*)(const float*, std::size_t, float*);
struct Case {
  const char* name;
  Kernel kernel;
  double (*ref)(double);
};
const Case kCases[] = {{"silu", wa::silu, silu_ref},
                       {"gelu_tanh", wa::gelu_tanh, gelu_tanh_ref},
                       {"gelu_erf", wa::gelu_erf, gelu_erf_ref}};

// A few float32 roundings of the result (relative), or of its scale near 0 (absolute).
bool near(float got, double ref) { return std::fabs(got - ref) <= 1e-6 * std::fabs(ref) + 1e-7; }

TEST(Activations, DenseSweepMatchesDoubleReference) {
  std::vector<float> x;
  for (float v = -20.0f; v <= 20.0f; v += 0.00731f) x.push_back(v);
  std::vector<float> y(x.size());
  for (const Case& c : kCases) {
    c.kernel(x.data(), x.size(), y.data());
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(near(y[i], c.ref(x[i]))) << c.name << " x=" << x[i] << " got " << y[i] << " expected " << c.ref(x[i]);
  }
}

TEST(Activations, EveryLengthAroundTheSimdWidthAndInPlace) {
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 13u, 16u, 17u}) {
    const auto x = wa_test::random_vector(n, 40 + n, -6.0f, 6.0f);
    for (const Case& c : kCases) {
      std::vector<float> y(n + 1, 123.0f);  // one guard element past the end
      c.kernel(x.data(), n, y.data());
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_TRUE(near(y[i], c.ref(x[i]))) << c.name << " n=" << n << " index " << i;
      EXPECT_EQ(y[n], 123.0f) << c.name << " wrote past n=" << n;
      auto in_place = x;
      c.kernel(in_place.data(), n, in_place.data());
      EXPECT_EQ(in_place, std::vector<float>(y.begin(), y.begin() + n)) << c.name << " in place, n=" << n;
    }
  }
}

TEST(Activations, AValueGivesOneResultWhereverItSits) {
  // The same x in the vector body and in the tail.
  std::vector<float> x(7, 0.37f), y(7);
  for (const Case& c : kCases) {
    c.kernel(x.data(), 7, y.data());
    for (std::size_t i = 1; i < 7; ++i) EXPECT_EQ(y[i], y[0]) << c.name << " index " << i;
  }
}

TEST(Activations, FarTailsInfinitiesAndNaN) {
  const std::vector<float> x = {-1e30f, -100.0f, -30.0f, 30.0f, 100.0f, 1e30f, INFINITY, NAN};
  std::vector<float> y(x.size());
  for (const Case& c : kCases) {
    c.kernel(x.data(), x.size(), y.data());
    for (std::size_t i = 0; i < 6; ++i)
      EXPECT_TRUE(near(y[i], c.ref(x[i]))) << c.name << " x=" << x[i] << " got " << y[i];
    EXPECT_EQ(y[6], INFINITY) << c.name;
    EXPECT_TRUE(std::isnan(y[7])) << c.name;
  }
}

TEST(Activations, SiluMulIsTheSwiGluProduct) {
  for (std::size_t n : {3u, 4u, 11u, 64u}) {
    const auto gate = wa_test::random_vector(n, 70 + n, -8.0f, 8.0f);
    const auto up = wa_test::random_vector(n, 80 + n, -2.0f, 2.0f);
    std::vector<float> y(n);
    wa::silu_mul(gate.data(), up.data(), n, y.data());
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_TRUE(near(y[i], silu_ref(gate[i]) * up[i])) << "n=" << n << " index " << i << " got " << y[i];
  }
}

}  // namespace
