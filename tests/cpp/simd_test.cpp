// wa::simd gives the same lanes in both builds: these expectations are xsimd's SSE path (the SIMD
// build), and the scalar build (WA_SCALAR) must meet them too, so the two compute the same numbers.
#include "kernels/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using Batch = wa::simd::batch<float>;
using Ints = wa::simd::batch<int32_t>;

struct Lanes {
  float v[4];
};

Lanes lanes(const Batch& b) {
  alignas(16) Lanes out;
  b.store_aligned(out.v);
  return out;
}

Batch make4(float a, float b, float c, float d) {
  alignas(16) const float in[4] = {a, b, c, d};
  return Batch::load_aligned(in);
}

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

TEST(Simd, FourLanes) {
  EXPECT_EQ(Batch::size, 4u);
  EXPECT_EQ(Ints::size, 4u);
}

TEST(Simd, MaxTakesTheSecondOperandOnNaNAndOnEqualZeros) {
  const Lanes r = lanes(wa::simd::max(make4(NAN, 1.0f, 0.0f, 2.0f), make4(3.0f, NAN, -0.0f, 1.0f)));
  EXPECT_EQ(r.v[0], 3.0f);
  EXPECT_TRUE(std::isnan(r.v[1]));
  EXPECT_EQ(bits(r.v[2]), bits(-0.0f));
  EXPECT_EQ(r.v[3], 2.0f);
}

TEST(Simd, HaddAddsPairsThenThePairSums) {
  // (1e8 + 1) + (-1e8 + 1) rounds to 0; left to right would give 1, (v0 + v2) + (v1 + v3) 2.
  EXPECT_EQ(wa::simd::hadd(make4(1e8f, 1.0f, -1e8f, 1.0f)), 0.0f);
}

TEST(Simd, MaddRoundsTheProductFirstOutsideTheRelaxedBuilds) {
  // (1 + 2^-12)² = 1 + 2^-11 + 2^-24: the product rounds to 1 + 2^-11, so adding -(1 + 2^-11)
  // gives 0 (a fused multiply-add would keep 2^-24). The native and wasm SIMD and scalar builds never
  // fuse it.
  const float x = 1.0f + 0x1p-12f;
  const Lanes r = lanes(wa::simd::madd(Batch(x), Batch(x), Batch(-(1.0f + 0x1p-11f))));
  for (float v : r.v) EXPECT_EQ(v, 0.0f);
}

TEST(Simd, LessThanMaskClearsLanesWithAndnot) {
  const Batch x = make4(-1.0f, 2.0f, NAN, -INFINITY), e = make4(5.0f, 6.0f, 7.0f, 8.0f);
  const Batch mask((x < Batch(0.0f)).data);
  const Lanes m = lanes(mask);
  EXPECT_EQ(bits(m.v[0]), 0xFFFFFFFFu);
  EXPECT_EQ(bits(m.v[1]), 0u);
  EXPECT_EQ(bits(m.v[2]), 0u);  // NaN compares false
  EXPECT_EQ(bits(m.v[3]), 0xFFFFFFFFu);
  const Lanes r = lanes(wa::simd::bitwise_andnot(mask, e));  // ~mask & e
  EXPECT_EQ(r.v[0], 0.0f);
  EXPECT_EQ(r.v[1], 6.0f);
  EXPECT_EQ(r.v[2], 7.0f);
  EXPECT_EQ(r.v[3], 0.0f);
}

TEST(Simd, ShiftIntoTheExponentOfABitwiseCast) {
  // 2^n built as exp_nonpositive builds it: (n + 127) << 23 read as a float; bit 8 becomes the sign,
  // higher bits fall off.
  alignas(16) const int32_t in[4] = {127, 128, 126 + (1 << 8) + (1 << 9), 0};
  const Lanes r = lanes(wa::simd::bitwise_cast<Batch>(Ints::load_aligned(in) << 23));
  EXPECT_EQ(r.v[0], 1.0f);
  EXPECT_EQ(r.v[1], 2.0f);
  EXPECT_EQ(r.v[2], -0.5f);
  EXPECT_EQ(r.v[3], 0.0f);
}

TEST(Simd, ZipInterleavesHalvesOfFloatsAndOfPairs) {
  using Pairs = wa::simd::batch<double>;
  const Batch a = make4(0, 1, 2, 3), b = make4(4, 5, 6, 7);
  const Lanes lo = lanes(wa::simd::zip_lo(a, b)), hi = lanes(wa::simd::zip_hi(a, b));
  EXPECT_EQ((std::vector<float>(lo.v, lo.v + 4)), (std::vector<float>{0, 4, 1, 5}));
  EXPECT_EQ((std::vector<float>(hi.v, hi.v + 4)), (std::vector<float>{2, 6, 3, 7}));
  const Pairs pa = wa::simd::bitwise_cast<Pairs>(a), pb = wa::simd::bitwise_cast<Pairs>(b);
  const Lanes plo = lanes(wa::simd::bitwise_cast<Batch>(wa::simd::zip_lo(pa, pb)));
  const Lanes phi = lanes(wa::simd::bitwise_cast<Batch>(wa::simd::zip_hi(pa, pb)));
  EXPECT_EQ((std::vector<float>(plo.v, plo.v + 4)), (std::vector<float>{0, 1, 4, 5}));
  EXPECT_EQ((std::vector<float>(phi.v, phi.v + 4)), (std::vector<float>{2, 3, 6, 7}));
}

TEST(Simd, ArithmeticAndCompoundForms) {
  Batch x = make4(1, 2, 3, 4);
  x += Batch(1.0f);
  x *= make4(2, 2, 2, 2);
  x -= Batch(0.5f);
  const Lanes r = lanes((x + x) * Batch(0.5f) - Batch(1.0f));
  EXPECT_EQ((std::vector<float>(r.v, r.v + 4)), (std::vector<float>{2.5f, 4.5f, 6.5f, 8.5f}));
  alignas(16) float buf[6] = {0, 1, 2, 3, 4, 0};
  Batch::load_unaligned(buf + 1).store_unaligned(buf + 2);  // off the 16-byte grid
  EXPECT_EQ((std::vector<float>(buf, buf + 6)), (std::vector<float>{0, 1, 1, 2, 3, 4}));
}

}  // namespace
