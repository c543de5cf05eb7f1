// A model's forwards through its KV caches and across threads: the same bits at 1, 2 and 3 threads;
// a prompt fed whole, in chunks or token by token gives the same logits; asking for attention
// changes no bit of any logit; a refused call leaves the cache's length as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/model.h"
#include "model_reference.h"
#include "parallel.h"
#include "test_util.h"

namespace {

using wa_test::Family;
using wa_test::ModelSpec;
using wa_test::TestModel;

ModelSpec wide_spec(Family family = Family::llama) {
  ModelSpec s;
  s.family = family;
  s.hidden = 64;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 8;
  s.rope_dim = 8;
  s.intermediate = 192;
  s.vocab = 500;
  s.max_positions = 80;
  s.windows = {0, 13};
  s.seed = 21;
  return s;
}

std::vector<std::int32_t> prompt(std::size_t n, std::size_t vocab) {
  std::vector<std::int32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>((i * 31 + 7) % vocab);
  return ids;
}

struct Call {
  std::vector<float> logits, hidden;
  std::vector<std::vector<float>> attention;  // of the layers asked
  wa::Status status = wa::Status::ok;
};

// ids[from, to) through `cache` (or none); attention of `layers` (heads 2, 0) when not empty.
Call feed(const wa::Model& model, const std::vector<std::int32_t>& ids, std::size_t from, std::size_t to,
          wa::ModelCache* cache, const std::vector<std::size_t>& layers = {}) {
  const wa::ModelConfig& c = model.config();
  const std::size_t T = to - from, keys = (cache ? cache->length() : 0) + T;
  Call out;
  out.logits.resize(T * c.vocab);
  out.hidden.resize(T * c.hidden);
  std::vector<float*> pointers(c.num_layers, nullptr);
  out.attention.assign(layers.size(), std::vector<float>(2 * T * keys));
  for (std::size_t i = 0; i < layers.size(); ++i) pointers[layers[i]] = out.attention[i].data();
  const std::uint32_t heads[] = {2, 0};
  wa::ModelForward f;
  f.ids = ids.data() + from;
  f.tokens = T;
  f.cache = cache;
  f.logits = out.logits.data();
  f.hidden = out.hidden.data();
  if (!layers.empty()) {
    f.attention = pointers.data();
    f.heads = heads;
    f.head_count = 2;
  }
  out.status = model.forward(f);
  return out;
}

// |a − b| ≤ 1e-5 · max(1, |b|) everywhere.
::testing::AssertionResult close_relative(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5 * std::max(1.0f, std::fabs(b[i]))))
      return ::testing::AssertionFailure() << "index " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

class ModelCacheTest : public ::testing::Test {
 protected:
  void TearDown() override { wa::set_thread_count(1); }
};

TEST_F(ModelCacheTest, EveryThreadCountGivesTheSameBits) {
  for (Family family : {Family::llama, Family::gpt2, Family::bert}) {
    const TestModel test(wide_spec(family));
    wa::Model model;
    test.build(model);
    const auto ids = prompt(37, test.config().vocab);
    std::vector<Call> calls;
    for (int threads : {1, 2, 3}) {
      ASSERT_EQ(wa::set_thread_count(threads), threads);
      Call whole = feed(model, ids, 0, ids.size(), nullptr, {0, 1});
      ASSERT_EQ(whole.status, wa::Status::ok);
      calls.push_back(whole);
      if (family == Family::bert) continue;
      // A prefill then one decode step through a cache.
      wa::ModelCache cache;
      ASSERT_EQ(cache.init(model, 64), wa::Status::ok);
      calls.push_back(feed(model, ids, 0, 30, &cache, {1}));
      calls.push_back(feed(model, ids, 30, 31, &cache, {0}));
    }
    const std::size_t per = calls.size() / 3;
    for (std::size_t t = 1; t < 3; ++t)
      for (std::size_t i = 0; i < per; ++i) {
        const Call &a = calls[i], &b = calls[t * per + i];
        EXPECT_EQ(a.logits, b.logits) << "call " << i << " at " << t + 1 << " threads";
        EXPECT_EQ(a.hidden, b.hidden) << "call " << i << " at " << t + 1 << " threads";
        EXPECT_EQ(a.attention, b.attention) << "call " << i << " at " << t + 1 << " threads";
      }
  }
}

TEST_F(ModelCacheTest, WholeChunkedAndTokenByTokenAgree) {
  for (Family family : {Family::llama, Family::gpt2}) {
    for (int threads : {1, 2}) {
      wa::set_thread_count(threads);
      const TestModel test(wide_spec(family));
      wa::Model model;
      test.build(model);
      const auto ids = prompt(29, test.config().vocab);
      const Call whole = feed(model, ids, 0, ids.size(), nullptr);
      ASSERT_EQ(whole.status, wa::Status::ok);
      const std::size_t V = test.config().vocab;
      wa::ModelCache chunked, single;
      ASSERT_EQ(chunked.init(model, 40), wa::Status::ok);
      ASSERT_EQ(single.init(model, 29), wa::Status::ok);
      std::vector<float> by_chunks, by_tokens;
      for (std::size_t from : {0, 11, 12, 20}) {
        const std::size_t to = from == 20 ? 29 : from == 0 ? 11 : from == 11 ? 12 : 20;
        const Call c = feed(model, ids, from, to, &chunked);
        ASSERT_EQ(c.status, wa::Status::ok);
        by_chunks.insert(by_chunks.end(), c.logits.begin(), c.logits.end());
      }
      for (std::size_t t = 0; t < ids.size(); ++t) {
        const Call c = feed(model, ids, t, t + 1, &single);
        ASSERT_EQ(c.status, wa::Status::ok);
        by_tokens.insert(by_tokens.end(), c.logits.begin(), c.logits.end());
      }
      EXPECT_EQ(chunked.length(), 29u);
      EXPECT_EQ(single.length(), 29u);
      EXPECT_TRUE(close_relative(by_chunks, whole.logits)) << "chunks, threads " << threads;
      EXPECT_TRUE(close_relative(by_tokens, whole.logits)) << "tokens, threads " << threads;
      // And all of them the float64 model's.
      const TestModel::Result ref = test.reference(ids);
      EXPECT_TRUE(wa_test::all_close(by_tokens, ref.logits, "tokens vs float64"));
      ASSERT_EQ(by_tokens.size(), 29 * V);
    }
  }
}

TEST_F(ModelCacheTest, AskingForAttentionChangesNoBit) {
  wa::set_thread_count(2);
  const TestModel test(wide_spec());
  wa::Model model;
  test.build(model);
  const auto ids = prompt(33, test.config().vocab);
  const Call plain = feed(model, ids, 0, ids.size(), nullptr);
  const Call asked = feed(model, ids, 0, ids.size(), nullptr, {1, 0});
  EXPECT_EQ(plain.logits, asked.logits);
  EXPECT_EQ(plain.hidden, asked.hidden);
  wa::ModelCache a, b;
  ASSERT_EQ(a.init(model, 40), wa::Status::ok);
  ASSERT_EQ(b.init(model, 40), wa::Status::ok);
  for (auto [from, to] : {std::pair<std::size_t, std::size_t>{0, 20}, {20, 21}, {21, 33}}) {
    const Call x = feed(model, ids, from, to, &a);
    const Call y = feed(model, ids, from, to, &b, {0, 1});
    EXPECT_EQ(x.logits, y.logits) << "tokens " << from << "…" << to;
    EXPECT_EQ(a.length(), b.length());
    // Heads 2 and 0 of layer 1 (window 13) against the float64 probabilities of the whole prompt.
    const TestModel::Result ref = test.reference(std::vector<std::int32_t>(ids.begin(), ids.begin() + to));
    const std::size_t T = to - from, keys = to;
    std::vector<double> expected;
    for (std::size_t h : {2, 0})
      for (std::size_t i = from; i < to; ++i)
        for (std::size_t j = 0; j < keys; ++j) expected.push_back(ref.attention[1][(h * to + i) * to + j]);
    EXPECT_TRUE(wa_test::all_close(y.attention[1], expected, "cached attention of layer 1"));
    ASSERT_EQ(y.attention[1].size(), 2 * T * keys);
  }
}

TEST_F(ModelCacheTest, ARefusedCallLeavesTheCacheAsItWas) {
  const TestModel test(wide_spec());
  wa::Model model;
  test.build(model);
  auto ids = prompt(12, test.config().vocab);
  wa::ModelCache cache;
  ASSERT_EQ(cache.init(model, 16), wa::Status::ok);
  const Call first = feed(model, ids, 0, 6, &cache);
  ASSERT_EQ(first.status, wa::Status::ok);
  ids[9] = -3;
  EXPECT_EQ(feed(model, ids, 6, 12, &cache).status, wa::Status::invalid_argument);
  EXPECT_EQ(cache.length(), 6u);
  ids[9] = 4;
  const auto long_ids = prompt(11, test.config().vocab);
  EXPECT_EQ(feed(model, long_ids, 0, 11, &cache).status, wa::Status::invalid_argument) << "6 + 11 > 16";
  EXPECT_EQ(cache.length(), 6u);
  // Truncated and fed again, a cache gives the first call's bits.
  cache.truncate(0);
  const Call again = feed(model, ids, 0, 6, &cache);
  EXPECT_EQ(again.logits, first.logits);
  // A cache of another model's shape is refused.
  ModelSpec other = wide_spec();
  other.kv_heads = 4;
  const TestModel other_test(other);
  wa::Model other_model;
  other_test.build(other_model);
  EXPECT_EQ(feed(other_model, ids, 6, 8, &cache).status, wa::Status::invalid_argument);
  EXPECT_EQ(cache.length(), 6u);
}

TEST_F(ModelCacheTest, CacheBytesCoverEveryLayer) {
  const TestModel test(wide_spec());
  wa::Model model;
  test.build(model);
  const wa::ModelConfig& c = test.config();
  // K and V of every layer, K/V head and position at least.
  EXPECT_GE(wa::ModelCache::bytes(model, 100), 4.0 * c.num_layers * c.num_kv_heads * 100 * 2 * c.head_dim);
  EXPECT_GT(model.forward_bytes({10, true, 90, true}), model.forward_bytes({10, true, 90, false}));
}

}  // namespace
