// KV caches stored as f16 or bf16: the conversions (every 16-bit value, and rounding checked against
// an independent float64 rounding), the bytes, and cached forwards whose K and V are exact in the
// format giving the bits of an f32 cache (the widened tiles are the f32 cache's panels).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "attention.h"
#include "attention/kv-tile.h"
#include "kernels/kv-half.h"
#include "test_util.h"

namespace {

using wa_test::f16_value;

// x rounded to nearest-even with `bits` significant bits, normal from 2^min_exp, ±Inf from
// `overflow` on: float64 arithmetic, apart from the engine's bit tricks.
double round_format(double x, int bits, int min_exp, double overflow) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  const double a = std::fabs(x);
  if (a >= overflow) return std::copysign(INFINITY, x);
  int e;
  std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 1, min_exp) - (bits - 1));
  return std::copysign(std::nearbyint(a / ulp) * ulp, x);  // the default rounding: to nearest-even
}

double round_f16(double x) { return round_format(x, 11, -14, 65520.0); }
double round_bf16(double x) { return round_format(x, 8, -126, std::ldexp(2.0 - std::ldexp(1.0, -8), 127)); }

std::vector<float> rounding_cases() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e30f, -1e-30f, 3.0e-8f, 6.0e-8f, 2.98e-8f};
  // Ties and their neighbours in both formats, around 1 and in the subnormal halves.
  for (int s = 0; s < 64; ++s) {
    const float base = 1.0f + std::ldexp(static_cast<float>(s), -10);
    for (float tie : {base + std::ldexp(1.0f, -11), base + std::ldexp(1.0f, -8)})
      for (float x : {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 2.0f)}) v.push_back(x);
    v.push_back(std::ldexp(static_cast<float>(2 * s + 1), -25));  // f16 subnormal ties
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

TEST(CacheDtype, EveryHalfWidensExactlyAndRoundsBackToItself) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = wa::f16_to_f32(bits);
    const double want = f16_value(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(wa::f16_to_f32(wa::f32_to_f16(f)))) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    ASSERT_EQ(wa::f32_to_f16(f), bits) << h;
    const float g = wa::bf16_to_f32(bits);
    if (!std::isnan(g)) {
      ASSERT_EQ(wa::f32_to_bf16(g), bits) << h;
    }
  }
}

TEST(CacheDtype, RoundingIsNearestEvenAsFloat64SaysIt) {
  for (const float x : rounding_cases()) {
    ASSERT_EQ(static_cast<double>(wa::f16_to_f32(wa::f32_to_f16(x))), round_f16(x)) << x;
    ASSERT_EQ(static_cast<double>(wa::bf16_to_f32(wa::f32_to_bf16(x))), round_bf16(x)) << x;
  }
  EXPECT_TRUE(std::isnan(wa::f16_to_f32(wa::f32_to_f16(NAN))));
  EXPECT_TRUE(std::isnan(wa::bf16_to_f32(wa::f32_to_bf16(NAN))));
}

TEST(CacheDtype, ReducedCachesTakeHalfTheBytes) {
  wa::LayerConfig c = wa_test::layer_config(64, 64, 64, 8, 16, 16, true);
  c.num_kv_heads = 2;
  const double f32 = wa::KvCache::bytes(c, 2, 1000);
  for (wa::KvDtype d : {wa::KvDtype::f16, wa::KvDtype::bf16}) {
    const double reduced = wa::KvCache::bytes(c, 2, 1000, d);
    EXPECT_NEAR(reduced / f32, 0.5, 0.001);
    wa::KvCache cache;
    ASSERT_EQ(cache.init(c, 2, 1000, d), wa::Status::ok);
    EXPECT_EQ(cache.dtype(), d);
  }
  wa::KvCache bad;
  EXPECT_EQ(bad.init(c, 1, 10, static_cast<wa::KvDtype>(7)), wa::Status::invalid_argument);
}

// Inputs and weights of few bits: every K and V is exact in both 16-bit formats, so a reduced cache
// must agree with an f32 cache to float32 rounding (its key tiles are smaller, so the running softmax
// rounds at other places): a grouped-query layer with a window, fed in chunks past several key tiles.
TEST(CacheDtype, ExactValuesGiveTheBitsOfAnF32Cache) {
  const std::size_t E = 8, H = 4, KV = 2, hd = 4, T = 300;
  wa::LayerConfig c = wa_test::layer_config(E, E, E, H, hd, hd, true);
  c.num_kv_heads = KV;
  c.out_dim = E;
  c.sliding_window = 260;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-2, 2), input(-4, 4);
  const auto dyadic = [&](std::size_t n, std::uniform_int_distribution<int>& d, float unit) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(d(rng)) * unit;
    return v;
  };
  const auto wq = dyadic(H * hd * E, small, 0.125f), wk = dyadic(KV * hd * E, small, 0.125f);
  const auto wv = dyadic(KV * hd * E, small, 0.125f), wo = dyadic(E * H * hd, small, 0.125f);
  const auto x = dyadic(T * E, input, 0.25f);
  wa::LayerWeights w;
  w.wq = wq.data();
  w.wk = wk.data();
  w.wv = wv.data();
  w.wo = wo.data();
  wa::Layer layer;
  ASSERT_EQ(layer.init(c, w), wa::Status::ok);
  const auto run = [&](wa::KvDtype dtype) {
    wa::KvCache cache;
    EXPECT_EQ(cache.init(c, 1, T, dtype), wa::Status::ok);
    std::vector<float> out(T * E);
    std::size_t t0 = 0;
    for (std::size_t n : {1u, 200u, 1u, 97u, 1u}) {
      wa::ForwardArgs a;
      a.tgt_len = n;
      a.src_len = t0 + n;
      a.position_offset = t0;
      a.query = x.data() + t0 * E;
      a.cache = &cache;
      a.is_causal = true;
      a.scale = 0.5f;
      a.output = out.data() + t0 * E;
      EXPECT_EQ(layer.forward(a), wa::Status::ok);
      t0 += n;
    }
    EXPECT_EQ(cache.length(), T);
    return out;
  };
  const std::vector<double> f32 = wa_test::to_double(run(wa::KvDtype::f32));
  for (wa::KvDtype dtype : {wa::KvDtype::f16, wa::KvDtype::bf16}) {
    const std::vector<float> got = run(dtype);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], f32[i], 1e-6 + 1e-6 * std::fabs(f32[i]))
          << "dtype " << static_cast<int>(dtype) << " at " << i;
  }
}

}  // namespace

// A decode step's few query rows (up to 2 from f16, 4 from bf16) read a key tile's 16-bit K and V
// as stored; more rows widen it into scratch first. Both must give the same bits (and float64's values of the stored
// halves): 40 keys (a partial last panel), head widths 64 and 48, an f16 Inf key (the widening's specials).
TEST(CacheDtype, StoredTilesGiveTheBitsOfWidenedTiles) {
  const std::size_t keys = 40, dk = 64, dv = 48, ld = 64, padded = 48;
  for (wa::KvDtype dtype : {wa::KvDtype::f16, wa::KvDtype::bf16}) {
    const bool bf16 = dtype == wa::KvDtype::bf16;
    std::vector<std::uint16_t> k16(padded * dk, 0), v16(dv * ld, 0);
    const auto kf = wa_test::random_vector(keys * dk, 21), vf = wa_test::random_vector(keys * dv, 22);
    for (std::size_t j = 0; j < keys; ++j) {
      for (std::size_t d = 0; d < dk; ++d)
        k16[(j / 16) * 16 * dk + d * 16 + j % 16] = wa::kv_round(kf[j * dk + d], bf16);
      for (std::size_t d = 0; d < dv; ++d)
        v16[(d / 16) * 16 * ld + j * 16 + d % 16] = wa::kv_round(vf[j * dv + d], bf16);
    }
    if (!bf16) k16[3 * 16 + 5] = 0x7c00;  // key 5, dimension 3: +Inf
    wa::HeadView view;
    view.dtype = dtype;
    view.keys16 = k16.data();
    view.values16 = v16.data();
    view.values_ld = ld;
    const auto q = wa_test::random_vector(5 * dk, 23), p = wa_test::random_vector(5 * keys, 24);
    wa::FloatBuffer scratch;
    ASSERT_TRUE(scratch.allocate(wa::kv_tile_floats(dk, dv)));
    for (std::size_t rows = 1; rows <= wa::stored_tile_rows(dtype); ++rows) {
      const wa::KeyTile stored = wa::key_tile(view, 0, keys, dk, dv, scratch.get(), rows);
      ASSERT_TRUE(stored.stored);
      std::vector<float> scores(rows * keys), want_scores(rows * keys);
      std::vector<float> out(rows * dv, 0.5f), want_out(rows * dv, 0.5f);
      wa::tile_scores(stored, rows, keys, dk, q.data(), scores.data(), keys);
      wa::tile_accumulate(stored, rows, dv, keys, p.data(), keys, out.data(), dv);
      const wa::KeyTile widened = wa::key_tile(view, 0, keys, dk, dv, scratch.get(), 5);
      ASSERT_FALSE(widened.stored);
      wa::tile_scores(widened, rows, keys, dk, q.data(), want_scores.data(), keys);
      wa::tile_accumulate(widened, rows, dv, keys, p.data(), keys, want_out.data(), dv);
      const std::string label = std::string(bf16 ? "bf16" : "f16") + " rows=" + std::to_string(rows);
      EXPECT_EQ(std::memcmp(scores.data(), want_scores.data(), scores.size() * sizeof(float)), 0) << label;
      EXPECT_EQ(std::memcmp(out.data(), want_out.data(), out.size() * sizeof(float)), 0) << label;
      std::vector<double> ref(rows * dv);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t d = 0; d < dv; ++d) {
          double sum = 0.5;
          for (std::size_t j = 0; j < keys; ++j)
            sum += static_cast<double>(p[r * keys + j]) * wa::kv_widen(v16[(d / 16) * 16 * ld + j * 16 + d % 16], bf16);
          ref[r * dv + d] = sum;
        }
      EXPECT_TRUE(wa_test::all_close(out, ref, label));
      if (!bf16) {
        EXPECT_TRUE(std::isinf(scores[5]) || std::isnan(scores[5])) << label;
      }
    }
  }
}
