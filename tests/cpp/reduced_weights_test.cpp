// Reduced weight storage: the roundings against independent conversions written here in double, the
// int8 rule, the f32-f16w / f32-bf16w / f32-qc8w GEMMs against a float64 product of the stored weights (few rows read
// as stored, many rows widened per panel: the same bits), and a prepared layer with reduced weights giving the bits of
// an f32 layer made from the stored values.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "attention.h"
#include "buffer.h"
#include "kernels/f16-convert.h"
#include "kernels/f32-bf16w-gemm.h"
#include "kernels/f32-f16w-gemm.h"
#include "kernels/f32-gemm.h"
#include "kernels/f32-qc8w-gemm.h"
#include "kernels/int8-quantize.h"
#include "kernels/packed-matrix.h"
#include "test_util.h"

namespace {

using wa::WeightDtype;

using wa_test::f16_value;

// Columns [j0, j1) of a float32 weight stored as `d` by that weight type's packing.
void pack_panels(WeightDtype d, const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t n, std::size_t k,
                 std::size_t j0, std::size_t j1, std::uint8_t* out, float* scales) {
  if (d == WeightDtype::int8)
    wa::pack_qc8w(w, ld_j, ld_k, n, k, j0, j1, out, scales);
  else if (d == WeightDtype::bf16)
    wa::pack_bf16w(w, ld_j, ld_k, n, k, j0, j1, out);
  else
    wa::pack_f16w(w, ld_j, ld_k, n, k, j0, j1, out);
}

// The nearest of two candidates to x, ties to the one with an even last bit.
template <class H>
H nearest(double x, H lo, double lo_v, H hi, double hi_v) {
  const double dl = x - lo_v, dh = hi_v - x;
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) ? hi : lo;
}

// x rounded to f16 by search over the ordered positive values: independent of f32_to_f16.
std::uint16_t f16_reference(float f) {
  const double x = std::fabs(static_cast<double>(f));
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (x >= 65520.0) return sign | 0x7c00;  // halfway to 2^16 and up: Inf (65504's last bit is odd)
  std::uint16_t lo = 0;
  for (std::uint16_t step = 0x4000; step; step >>= 1)
    if (lo + step < 0x7c00 && f16_value(lo + step) <= x) lo += step;
  if (f16_value(lo) == x) return sign | lo;
  return sign | nearest<std::uint16_t>(x, lo, f16_value(lo), lo + 1, f16_value(lo + 1));
}

std::uint16_t bf16_reference(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint16_t lo = u >> 16, sign = lo & 0x8000, mag = lo & 0x7fff;
  const double x = std::fabs(static_cast<double>(f));
  const double lo_v = std::fabs(static_cast<double>(wa::bf16_to_f32(mag)));
  if (lo_v == x) return lo;
  const double hi_v = mag + 1 == 0x7f80 ? std::ldexp(1.0, 128) : wa::bf16_to_f32(mag + 1);
  return sign | nearest<std::uint16_t>(x, mag, lo_v, mag + 1, hi_v);
}

std::vector<float> test_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          65536.0f,
                          1e30f,
                          -1e30f,
                          std::ldexp(1.0f, -14),
                          std::ldexp(1.0f, -24),
                          std::ldexp(1.0f, -25),
                          std::ldexp(3.0f, -26),
                          std::ldexp(1.0f, -26),
                          3.0e38f,
                          3.4028235e38f,
                          1e-40f,
                          -1e-45f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  // Exact ties between neighbours of both formats (even and odd lower neighbour), and around them.
  for (float base : {1.0f, 1.5f, 3.0f, 1000.0f, std::ldexp(1.0f, -20)}) {
    for (int t = 1; t <= 3; ++t) {
      v.push_back(base + std::ldexp(static_cast<float>(2 * t - 1), -11) * base);  // f16 ties
      v.push_back(base + std::ldexp(static_cast<float>(2 * t - 1), -8) * base);   // bf16 ties
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isnan(f)) v.push_back(f);
    v.push_back(std::ldexp(static_cast<float>(static_cast<int>(rng() % 4096) - 2048), -static_cast<int>(rng() % 40)));
  }
  return v;
}

TEST(ReducedConvert, F16WideningIsExactForEveryValue) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double want = f16_value(static_cast<std::uint16_t>(h));
    const float got = wa::f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << h;
      ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(ReducedConvert, F16AndBf16RoundToNearestEven) {
  for (float f : test_floats()) {
    ASSERT_EQ(wa::f32_to_f16(f), f16_reference(f)) << f;
    ASSERT_EQ(wa::f32_to_bf16(f), bf16_reference(f)) << f;
  }
  // Spelled out: ties go to the even neighbour, overflow to Inf, NaN stays NaN.
  EXPECT_EQ(wa::f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // 1 + ½ulp → 1
  EXPECT_EQ(wa::f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // 1 + 1½ulp → 1 + 2ulp
  EXPECT_EQ(wa::f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);             // half the smallest subnormal
  EXPECT_EQ(wa::f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);             // 1½ subnormal ulps → 2
  EXPECT_EQ(wa::f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(wa::f32_to_f16(-65519.0f), 0xfbff);
  EXPECT_TRUE(std::isnan(wa::f16_to_f32(wa::f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(wa::bf16_to_f32(wa::f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(wa::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(wa::f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(wa::f32_to_bf16(3.4028235e38f), 0x7f80);  // FLT_MAX rounds up to Inf in bf16
}

TEST(ReducedConvert, Int8RuleScalesPerRowRoundsHalfEvenAndClamps) {
  EXPECT_EQ(wa::int8_scale(0.0f), 1.0f);
  EXPECT_EQ(wa::int8_scale(127.0f), 1.0f);
  EXPECT_EQ(wa::int8_quantize(2.5f, 1.0f), 2);
  EXPECT_EQ(wa::int8_quantize(3.5f, 1.0f), 4);
  EXPECT_EQ(wa::int8_quantize(-2.5f, 1.0f), -2);
  EXPECT_EQ(wa::int8_quantize(127.6f, 1.0f), 127);
  EXPECT_EQ(wa::int8_quantize(-300.0f, 1.0f), -127);
  // A matrix stored by pack_qc8w: column 1 all zeros (scale 1, q 0), column 0's max maps to 127.
  const std::size_t n = 3, k = 4;
  const float w[n * k] = {0.5f, -1.27f, 0.005f, 0.0f, 0, 0, 0, 0, 2.54f, 1.27f, -2.54f, 0.01f};
  wa::ByteBuffer q;
  wa::FloatBuffer scales;
  ASSERT_TRUE(q.allocate(16 * k) && scales.allocate(16));
  wa::pack_qc8w(w, k, 1, n, k, 0, 16, q.get(), scales.get());
  const auto* q8 = reinterpret_cast<const std::int8_t*>(q.get());
  EXPECT_EQ(scales.get()[0], 1.27f / 127.0f);
  EXPECT_EQ(scales.get()[1], 1.0f);
  EXPECT_EQ(scales.get()[2], 2.54f / 127.0f);
  for (std::size_t kk = 0; kk < k; ++kk) {
    EXPECT_EQ(q8[kk * 16 + 1], 0);
    for (std::size_t j : {0u, 2u})
      EXPECT_EQ(q8[kk * 16 + j],
                static_cast<std::int8_t>(std::nearbyint(static_cast<double>(w[j * k + kk]) / scales.get()[j])));
  }
  EXPECT_EQ(q8[1 * 16 + 0], -127);
  EXPECT_EQ(q8[0 * 16 + 2], 127);
  EXPECT_EQ(q8[2 * 16 + 2], -127);
}

// The value the engine computes with for stored element (column j, step kk).
double stored_value(WeightDtype d, const wa::ByteBuffer& data, const wa::FloatBuffer& scales, std::size_t k,
                    std::size_t j, std::size_t kk) {
  const std::size_t e = (j / 16) * 16 * k + kk * 16 + j % 16;
  if (d == WeightDtype::int8)
    return static_cast<double>(reinterpret_cast<const std::int8_t*>(data.get())[e]) * scales.get()[j];
  const std::uint16_t h = reinterpret_cast<const std::uint16_t*>(data.get())[e];
  return d == WeightDtype::bf16 ? wa::bf16_to_f32(h) : wa::f16_to_f32(h);
}

TEST(ReducedGemm, FewAndManyRowsMatchFloat64OfStoredWeightsWithTheSameBits) {
  for (WeightDtype d : {WeightDtype::f16, WeightDtype::bf16, WeightDtype::int8})
    for (std::size_t n : {1u, 5u, 16u, 33u})
      for (std::size_t k : {1u, 7u, 64u, 65u, 200u})
        for (bool add : {false, true}) {
          const std::size_t m = 37;
          const auto w = wa_test::random_vector(n * k, 11 + n + k, -2.0f, 2.0f);
          const auto a = wa_test::random_vector(m * k, 5 + k);
          const auto bias = wa_test::random_vector(n, 3);
          const auto start = wa_test::random_vector(m * n, 9);
          const std::size_t cols = (n + 15) / 16 * 16;
          wa::ByteBuffer data;
          wa::FloatBuffer scales;
          ASSERT_TRUE(data.allocate(cols * k * wa::weight_element_bytes(d)) && scales.allocate(cols));
          pack_panels(d, w.data(), k, 1, n, k, 0, cols, data.get(), scales.get());
          wa::ReducedPanels rw;
          rw.dtype = d;
          rw.data = data.get();
          rw.scales = d == WeightDtype::int8 ? scales.get() : nullptr;
          rw.packed_k = k;
          std::vector<float> many = start, one = start;
          wa::gemm_reduced(m, n, k, a.data(), k, rw, bias.data(), many.data(), n, add);
          for (std::size_t i = 0; i < m; i += 3) {  // 3 rows at a time: the stored path
            const std::size_t rows = std::min<std::size_t>(3, m - i);
            wa::gemm_reduced(rows, n, k, a.data() + i * k, k, rw, bias.data(), one.data() + i * n, n, add);
          }
          std::vector<double> ref(m * n);
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = bias[j] + (add ? start[i * n + j] : 0.0);
              for (std::size_t kk = 0; kk < k; ++kk)
                s += static_cast<double>(a[i * k + kk]) * stored_value(d, data, scales, k, j, kk);
              ref[i * n + j] = s;
            }
          const std::string label = "dtype " + std::to_string(static_cast<int>(d)) + " n=" + std::to_string(n) +
                                    " k=" + std::to_string(k) + (add ? " add" : "");
          EXPECT_TRUE(wa_test::all_close(many, ref, label));
          EXPECT_EQ(std::memcmp(many.data(), one.data(), m * n * sizeof(float)), 0) << label;
        }
}

// Every f16 and bf16 value (subnormals, ±Inf, NaN included) read back through both paths of the kernel:
// a weight of one step times 1 is the widened value itself.
TEST(ReducedGemm, WidensEveryF16AndBf16Value) {
  const std::size_t n = 0x10000;
  for (WeightDtype d : {WeightDtype::f16, WeightDtype::bf16}) {
    std::vector<float> w(n);
    for (std::size_t h = 0; h < n; ++h)
      w[h] = d == WeightDtype::f16 ? wa::f16_to_f32(static_cast<std::uint16_t>(h))
                                   : wa::bf16_to_f32(static_cast<std::uint16_t>(h));
    wa::ByteBuffer data;
    ASSERT_TRUE(data.allocate(n * 2));
    pack_panels(d, w.data(), 1, 1, n, 1, 0, n, data.get(), nullptr);
    wa::ReducedPanels rw;
    rw.dtype = d;
    rw.data = data.get();
    rw.packed_k = 1;
    for (std::size_t m : {1u, 6u}) {
      const std::vector<float> a(m, 1.0f);
      std::vector<float> c(m * n);
      wa::gemm_reduced(m, n, 1, a.data(), 1, rw, nullptr, c.data(), n, false);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t h = 0; h < n; ++h) {
          const float want = w[h] + 0.0f;  // the kernel's sum starts from +0
          if (std::isnan(want))
            ASSERT_TRUE(std::isnan(c[i * n + h])) << h;
          else
            ASSERT_EQ(c[i * n + h], want) << "dtype " << static_cast<int>(d) << " h=" << h << " m=" << m;
        }
    }
  }
}

// Every int8 value q through both paths: each column holds 127 (so its scale is 1) and then q, and
// a = (0, 1) picks q itself; the few-rows path widens q without a conversion instruction.
TEST(ReducedGemm, WidensEveryInt8Value) {
  const std::size_t n = 255, k = 2, cols = 256;
  std::vector<float> w(n * k);
  for (std::size_t j = 0; j < n; ++j) {
    w[j * k] = 127.0f;
    w[j * k + 1] = static_cast<float>(static_cast<int>(j) - 127);
  }
  wa::ByteBuffer data;
  wa::FloatBuffer scales;
  ASSERT_TRUE(data.allocate(cols * k) && scales.allocate(cols));
  wa::pack_qc8w(w.data(), k, 1, n, k, 0, cols, data.get(), scales.get());
  wa::ReducedPanels rw;
  rw.dtype = WeightDtype::int8;
  rw.data = data.get();
  rw.scales = scales.get();
  rw.packed_k = k;
  for (std::size_t m : {1u, 2u, 3u, 6u}) {
    std::vector<float> a(m * k);
    for (std::size_t i = 0; i < m; ++i) a[i * k + 1] = static_cast<float>(i + 1);
    std::vector<float> c(m * n);
    wa::gemm_reduced(m, n, k, a.data(), k, rw, nullptr, c.data(), n, false);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        ASSERT_EQ(c[i * n + j], w[j * k + 1] * static_cast<float>(i + 1)) << "m=" << m << " j=" << j;
  }
}

// An f16 matrix without Inf or NaN takes the shorter widening: every finite value, both paths.
TEST(ReducedGemm, WidensEveryFiniteF16WithoutTheSpecialsPath) {
  std::vector<float> w;
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00u) != 0x7c00u) w.push_back(wa::f16_to_f32(static_cast<std::uint16_t>(h)));
  const std::size_t n = w.size(), cols = (n + 15) / 16 * 16;
  wa::ByteBuffer data;
  ASSERT_TRUE(data.allocate(cols * 2));
  wa::pack_f16w(w.data(), 1, 1, n, 1, 0, cols, data.get());
  ASSERT_FALSE(wa::f16w_has_specials(data.get(), cols));
  wa::ReducedPanels rw;
  rw.data = data.get();
  rw.packed_k = 1;
  rw.specials = false;
  for (std::size_t m : {1u, 6u}) {
    const std::vector<float> a(m, 1.0f);
    std::vector<float> c(m * n);
    wa::gemm_reduced(m, n, 1, a.data(), 1, rw, nullptr, c.data(), n, false);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(c[i * n + j], w[j] + 0.0f) << j << " m=" << m;
  }
  const std::uint16_t inf = 0x7c00;
  EXPECT_TRUE(wa::f16w_has_specials(reinterpret_cast<const std::uint8_t*>(&inf), 1));
}

// A prepared layer with f16 or bf16 weights computes what an f32 layer of its stored values computes, bit
// for bit (the same panels' values, the same order), decode rows and prefill rows, with a cache.
TEST(ReducedLayer, GivesTheBitsOfAnF32LayerOfTheStoredValues) {
  wa::LayerConfig c;
  c.q_in = c.k_in = c.v_in = 48;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim_qk = c.head_dim_v = 12;
  c.out_projection = true;
  c.rope.dim = 12;
  const std::size_t E = 48, kv = 24;
  const auto wq = wa_test::random_vector(E * E, 1), wk = wa_test::random_vector(kv * E, 2),
             wv = wa_test::random_vector(kv * E, 3), wo = wa_test::random_vector(E * E, 4);
  const auto bq = wa_test::random_vector(E, 5), bo = wa_test::random_vector(E, 6);
  // int8 sums the integers and scales the sum: near, not bit-equal, to an f32 layer of q·s (the JS
  // tests hold it to the float64 evaluation).
  for (WeightDtype d : {WeightDtype::f16, WeightDtype::bf16}) {
    // The stored values, per matrix [out, in]: rounded or quantized per output row.
    auto stored = [&](const std::vector<float>& w, std::size_t out) {
      const std::size_t cols = (out + 15) / 16 * 16;
      wa::ByteBuffer data;
      wa::FloatBuffer scales;
      EXPECT_TRUE(data.allocate(cols * E * 4) && scales.allocate(cols));
      pack_panels(d, w.data(), E, 1, out, E, 0, cols, data.get(), scales.get());
      std::vector<float> v(out * E);
      for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < E; ++i) v[o * E + i] = static_cast<float>(stored_value(d, data, scales, E, o, i));
      return v;
    };
    const auto sq = stored(wq, E), sk = stored(wk, kv), sv = stored(wv, kv), so = stored(wo, E);
    wa::LayerWeights lw{wq.data(), wk.data(), wv.data(), bq.data(), nullptr, nullptr, wo.data(), bo.data()};
    wa::LayerWeights sw{sq.data(), sk.data(), sv.data(), bq.data(), nullptr, nullptr, so.data(), bo.data()};
    wa::LayerConfig rc = c;
    rc.weight_dtype = d;
    wa::Layer reduced, plain;
    ASSERT_EQ(reduced.init(rc, lw), wa::Status::ok);
    ASSERT_EQ(plain.init(c, sw), wa::Status::ok);
    EXPECT_LE(wa::Layer::weights_bytes(rc), (d == WeightDtype::int8 ? 0.3 : 0.55) * wa::Layer::weights_bytes(c) +
                                                4.0 * (2 * E + 2 * kv));  // biases stay f32
    for (std::size_t T : {1u, 3u, 20u}) {
      const auto x = wa_test::random_vector(T * E, 40 + T);
      wa::KvCache cache_r, cache_p;
      ASSERT_EQ(cache_r.init(c, 1, 64), wa::Status::ok);
      ASSERT_EQ(cache_p.init(c, 1, 64), wa::Status::ok);
      for (int step = 0; step < 2; ++step) {
        std::vector<float> out_r(T * E), out_p(T * E);
        for (int which = 0; which < 2; ++which) {
          wa::ForwardArgs a;
          a.tgt_len = T;
          a.src_len = step * T + T;
          a.position_offset = step * T;
          a.cache = which ? &cache_p : &cache_r;
          a.query = a.key = a.value = x.data();
          a.is_causal = true;
          a.output = which ? out_p.data() : out_r.data();
          ASSERT_EQ((which ? plain : reduced).forward(a), wa::Status::ok);
        }
        EXPECT_EQ(std::memcmp(out_r.data(), out_p.data(), out_r.size() * sizeof(float)), 0)
            << "dtype " << static_cast<int>(d) << " T=" << T << " step " << step;
      }
    }
  }
}

}  // namespace
