// Decoder pieces: RoPE tables and rotation, ALiBi slopes, the keys a windowed forward visits, and a
// KV cache fed in chunks against one causal forward.
#include <cmath>
#include <vector>

#include "attention.h"
#include "positions.h"
#include "test_util.h"

namespace {

TEST(Rope, TableHoldsCosAndSinOfDoubleAngles) {
  const std::size_t dim = 8, pos0 = (1u << 20) - 2, count = 3;
  std::vector<float> table(count * dim);
  wa::rope_table(pos0, count, dim, 10000.0, table.data());
  for (std::size_t r = 0; r < count; ++r)
    for (std::size_t k = 0; k < dim / 2; ++k) {
      const double phi = static_cast<double>(pos0 + r) * std::pow(10000.0, -2.0 * k / dim);
      EXPECT_NEAR(table[r * dim + 2 * k], std::cos(phi), 1e-7) << "position " << pos0 + r << " pair " << k;
      EXPECT_NEAR(table[r * dim + 2 * k + 1], std::sin(phi), 1e-7) << "position " << pos0 + r << " pair " << k;
    }
}

// Rotates a 6-wide row with dim 4 at position 3 and checks each pair against the formula.
void check_rotation(bool interleaved) {
  const std::size_t dim = 4, width = 6;
  std::vector<float> x = {1.0f, -2.0f, 0.5f, 3.0f, 7.0f, -8.0f}, table(dim);
  const std::vector<float> x0 = x;
  wa::rope_table(3, 1, dim, 100.0, table.data());
  wa::apply_rope(x.data(), 1, width, table.data(), dim, interleaved);
  for (std::size_t k = 0; k < dim / 2; ++k) {
    const std::size_t ia = interleaved ? 2 * k : k, ib = interleaved ? 2 * k + 1 : k + dim / 2;
    const double phi = 3.0 * std::pow(100.0, -2.0 * k / dim);
    EXPECT_NEAR(x[ia], x0[ia] * std::cos(phi) - x0[ib] * std::sin(phi), 1e-6) << "pair " << k;
    EXPECT_NEAR(x[ib], x0[ib] * std::cos(phi) + x0[ia] * std::sin(phi), 1e-6) << "pair " << k;
  }
  EXPECT_EQ(x[4], x0[4]);  // past dim: unchanged
  EXPECT_EQ(x[5], x0[5]);
}

TEST(Rope, RotatesHalfSplitPairs) { check_rotation(false); }
TEST(Rope, RotatesInterleavedPairs) { check_rotation(true); }

TEST(Alibi, PaperSlopes) {
  std::vector<float> s(12);
  wa::alibi_slopes(8, s.data());
  for (int k = 1; k <= 8; ++k) EXPECT_EQ(s[k - 1], std::ldexp(1.0f, -k)) << "head " << k - 1;
  wa::alibi_slopes(6, s.data());  // 4 heads' slopes, then 8 heads' at k = 1, 3
  const float six[] = {0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f};
  for (int h = 0; h < 6; ++h) EXPECT_EQ(s[h], six[h]) << "head " << h;
  wa::alibi_slopes(12, s.data());  // 8 heads' slopes, then 16 heads' at k = 1, 3, 5, 7
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(s[8 + i], std::exp2(-0.5f * (2 * i + 1))) << "head " << 8 + i;
  wa::alibi_slopes(1, s.data());
  EXPECT_EQ(s[0], std::ldexp(1.0f, -8));
}

TEST(Window, VisitsOnlyKeyTilesInsideTheWindow) {
  wa::LayerConfig c = wa_test::layer_config(16, 16, 16, 1, 16, 16, false);
  c.sliding_window = 64;
  wa::ForwardArgs a;
  a.tgt_len = a.src_len = 4096;
  a.is_causal = true;
  std::size_t visited = 0;
  for (std::size_t i0 = 0; i0 < a.tgt_len; i0 += 32) {
    const wa::KeyRange r = wa::attended_keys(a, c, i0, i0 + 32);
    // every key the window allows the block's first query is visited, up to its last query's position
    ASSERT_LE(r.first, i0 + 1 > 64 ? i0 + 1 - 64 : 0) << "block " << i0;
    ASSERT_EQ(r.end, i0 + 32) << "block " << i0;
    ASSERT_LE(r.end - r.first, 64u + 32u + 16u) << "block " << i0;
    visited += r.end - r.first;
  }
  EXPECT_LE(visited, a.tgt_len * (64 + 32 + 16) / 32);
  // Without causality the window bounds keys from below only; with an offset, queries sit later.
  a.is_causal = false;
  a.position_offset = 1000;
  a.tgt_len = 1;
  const wa::KeyRange r = wa::attended_keys(a, c, 0, 1);
  EXPECT_EQ(r.first, (1000u - 63u) / 16u * 16u);
  EXPECT_EQ(r.end, 4096u);
}

// A grouped-query layer with RoPE, ALiBi and a window, fed through a cache in chunks, equals one
// causal forward over the whole sequence.
TEST(KvCache, ChunksEqualOneCausalForward) {
  const std::size_t E = 16, H = 4, Hkv = 2, hd = 6, T = 37;
  wa::LayerConfig c = wa_test::layer_config(E, E, E, H, hd, hd, true);
  c.num_kv_heads = Hkv;
  c.out_dim = E;
  c.rope.dim = 4;
  c.alibi = true;
  c.sliding_window = 9;
  unsigned seed = 7;
  const auto wq = wa_test::random_vector(H * hd * E, seed++, -0.5f, 0.5f);
  const auto wk = wa_test::random_vector(Hkv * hd * E, seed++, -0.5f, 0.5f);
  const auto wv = wa_test::random_vector(Hkv * hd * E, seed++, -0.5f, 0.5f);
  const auto wo = wa_test::random_vector(E * H * hd, seed++, -0.5f, 0.5f);
  const auto x = wa_test::random_vector(T * E, seed++);
  wa::LayerWeights w;
  w.wq = wq.data();
  w.wk = wk.data();
  w.wv = wv.data();
  w.wo = wo.data();
  wa::Layer layer;
  ASSERT_EQ(layer.init(c, w), wa::Status::ok);

  std::vector<float> full(T * E);
  wa::ForwardArgs a;
  a.tgt_len = a.src_len = T;
  a.query = a.key = a.value = x.data();
  a.is_causal = true;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.output = full.data();
  ASSERT_EQ(layer.forward(a), wa::Status::ok);

  wa::KvCache cache;
  ASSERT_EQ(cache.init(c, 1, T), wa::Status::ok);
  std::vector<float> chunked(T * E);
  std::size_t t0 = 0;
  for (std::size_t n : {7u, 1u, 16u, 13u}) {
    wa::ForwardArgs step = a;
    step.tgt_len = n;
    step.src_len = t0 + n;
    step.position_offset = t0;
    step.query = x.data() + t0 * E;
    step.key = step.value = nullptr;
    step.cache = &cache;
    step.output = chunked.data() + t0 * E;
    ASSERT_EQ(layer.forward(step), wa::Status::ok) << "chunk at " << t0;
    t0 += n;
    EXPECT_EQ(cache.length(), t0);
  }
  EXPECT_TRUE(wa_test::all_close(chunked, wa_test::to_double(full), "cache chunks vs one forward"));
  // Past max_length, or with a mismatched length: refused, the cache unchanged.
  wa::ForwardArgs over = a;
  over.tgt_len = 1;
  over.src_len = T + 1;
  over.cache = &cache;
  EXPECT_EQ(layer.forward(over), wa::Status::invalid_argument);
  EXPECT_EQ(cache.length(), T);
}

}  // namespace
