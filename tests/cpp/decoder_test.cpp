// Decoder pieces: RoPE tables and rotation, ALiBi slopes, the keys a windowed forward visits, a KV
// cache fed in chunks against one causal forward, and the ways a forward splits over threads.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention.h"
#include "attention/positions.h"
#include "parallel.h"
#include "reference.h"
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
  const std::size_t E = 16, H = 4, num_kv_heads = 2, hd = 6, T = 37;
  wa::LayerConfig c = wa_test::layer_config(E, E, E, H, hd, hd, true);
  c.num_kv_heads = num_kv_heads;
  c.out_dim = E;
  c.rope.dim = 4;
  c.alibi = true;
  c.sliding_window = 9;
  unsigned seed = 7;
  const auto wq = wa_test::random_vector(H * hd * E, seed++, -0.5f, 0.5f);
  const auto wk = wa_test::random_vector(num_kv_heads * hd * E, seed++, -0.5f, 0.5f);
  const auto wv = wa_test::random_vector(num_kv_heads * hd * E, seed++, -0.5f, 0.5f);
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

// A forward's ways of splitting its work: every head at once (few tokens), one head at a time (long
// sequences), heads stacked per K/V head (grouped-query steps), weights averaged or per head.
struct Split {
  const char* name;
  std::size_t E, kv_in, H, num_kv_heads, hd, L, S;
  std::size_t cached;  // > 0: a decode step of L tokens after a prefill of this many
  bool weights, average;
};

// Each large enough (over a million multiply-adds) to run on every thread.
const Split kSplits[] = {
    {"4x512x8, every head at once", 512, 512, 8, 8, 64, 4, 4, 0, false, true},
    {"4x512x8 with weights", 512, 512, 8, 8, 64, 4, 4, 0, true, true},
    {"one head at a time (60000 keys)", 16, 16, 2, 2, 8, 2, 60000, 0, false, true},
    {"one head at a time, per-head weights", 16, 16, 2, 2, 8, 2, 60000, 0, true, false},
    {"GQA few tokens, stacked heads", 1024, 1024, 32, 8, 32, 2, 2, 0, false, true},
    {"GQA decode step, 16 of 4 K/V heads", 1024, 1024, 16, 4, 64, 1, 0, 20, false, true},
    {"GQA decode step, averaged weights", 1024, 1024, 16, 4, 64, 1, 0, 20, true, true},
    {"GQA decode step, per-head weights", 1024, 1024, 16, 4, 64, 1, 0, 20, true, false},
    {"GQA 3-token step, stacked pairs", 1024, 1024, 16, 8, 64, 3, 0, 33, false, true},
    {"multi-query decode step", 1024, 1024, 16, 1, 64, 1, 0, 17, false, true},
};

// A layer's weights and inputs, made once per case.
struct SplitData {
  wa::LayerConfig c;
  std::vector<float> wq, wk, wv, wo, x, kv;
  explicit SplitData(const Split& p)
      : c(wa_test::layer_config(p.E, p.kv_in, p.kv_in, p.H, p.hd, p.hd, true)),
        wq(wa_test::random_vector(p.H * p.hd * p.E, 1, -0.3f, 0.3f)),
        wk(wa_test::random_vector(p.num_kv_heads * p.hd * p.kv_in, 2, -0.3f, 0.3f)),
        wv(wa_test::random_vector(p.num_kv_heads * p.hd * p.kv_in, 3, -0.3f, 0.3f)),
        wo(wa_test::random_vector(p.E * p.H * p.hd, 4, -0.3f, 0.3f)),
        x(wa_test::random_vector((p.cached + p.L) * p.E, 5)),
        kv(wa_test::random_vector((p.cached ? 0 : p.S) * p.kv_in, 6)) {
    c.num_kv_heads = p.num_kv_heads;
    c.out_dim = p.E;
  }
  wa::LayerWeights weights() const {
    wa::LayerWeights w;
    w.wq = wq.data();
    w.wk = wk.data();
    w.wv = wv.data();
    w.wo = wo.data();
    return w;
  }
};

struct SplitRun {
  std::vector<float> output, weights;
};

// The forward (the decode step after its prefill, on a fresh cache) with `threads` threads.
SplitRun run_split(const Split& p, const SplitData& d, int threads) {
  const wa::LayerConfig& c = d.c;
  const wa::LayerWeights w = d.weights();
  const std::size_t T = p.cached + p.L, S = p.cached ? T : p.S;
  wa::set_thread_count(threads);
  wa::Layer layer;
  EXPECT_EQ(layer.init(c, w), wa::Status::ok) << p.name;
  SplitRun run;
  run.output.assign(T * p.E, 0.0f);
  wa::ForwardArgs a;
  a.scale = 0.25f;
  a.output = run.output.data();
  a.average_weights = p.average;
  wa::KvCache cache;
  if (p.cached) {
    EXPECT_EQ(cache.init(c, 1, T), wa::Status::ok);
    a.cache = &cache;
    a.is_causal = true;
    a.query = d.x.data();
    a.tgt_len = a.src_len = p.cached;
    EXPECT_EQ(layer.forward(a), wa::Status::ok) << p.name << " prefill";
    a.position_offset = p.cached;
    a.query = d.x.data() + p.cached * p.E;
    a.output = run.output.data() + p.cached * p.E;
  } else {
    a.query = d.x.data();
    a.key = a.value = d.kv.data();
  }
  a.tgt_len = p.L;
  a.src_len = S;
  if (p.weights) {
    run.weights.assign((p.average ? 1 : p.H) * p.L * S, -1.0f);
    a.weights = run.weights.data();
  }
  EXPECT_EQ(layer.forward(a), wa::Status::ok) << p.name;
  if (!p.cached && p.num_kv_heads == p.H) {  // against the float64 specification (which knows no cache, no GQA)
    SplitRun ref{std::vector<float>(run.output.size()), std::vector<float>(run.weights.size())};
    a.output = ref.output.data();
    a.weights = p.weights ? ref.weights.data() : nullptr;
    wa::reference_forward(c, w, a);
    EXPECT_TRUE(wa_test::all_close(run.output, wa_test::to_double(ref.output), std::string(p.name) + " output"));
    EXPECT_TRUE(wa_test::all_close(run.weights, wa_test::to_double(ref.weights), std::string(p.name) + " weights"));
  }
  wa::set_thread_count(1);
  return run;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(Threads, EverySplitGivesTheSameBitsOnOneTwoAndThreeThreads) {
  for (const Split& p : kSplits) {
    const SplitData data(p);
    const SplitRun one = run_split(p, data, 1);
    for (int threads : {2, 3}) {
      const SplitRun more = run_split(p, data, threads);
      EXPECT_TRUE(same_bits(one.output, more.output)) << p.name << ": output, 1 vs " << threads << " threads";
      EXPECT_TRUE(same_bits(one.weights, more.weights)) << p.name << ": weights, 1 vs " << threads << " threads";
    }
  }
}

}  // namespace
