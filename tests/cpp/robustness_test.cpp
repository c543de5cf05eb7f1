// NaN and ±Inf propagate as IEEE arithmetic says (a masked key takes no part in a row), on both
// attention paths and any thread count; and the size functions the binding checks before it
// allocates agree with what a forward and a layer need.
#include <cstring>

#include "attention.h"
#include "kernels/f32-softmax.h"
#include "parallel.h"
#include "test_util.h"

namespace {

// One head of width 4, no biases, no out projection: query [L, 4] against key/value [S, 4].
struct Small {
  std::size_t L, S, dim = 4;
  std::vector<float> query, key, value, w;
  std::vector<std::uint8_t> padding;
  wa::Layer layer;

  Small(std::size_t l, std::size_t s) : L(l), S(s) {
    query = wa_test::random_vector(L * dim, 1);
    key = wa_test::random_vector(S * dim, 2);
    value = wa_test::random_vector(S * dim, 3);
    w = wa_test::random_vector(dim * dim * 3, 4, -0.5f, 0.5f);
    const wa::LayerConfig config = wa_test::layer_config(dim, dim, dim, 1, dim, dim, false);
    wa::LayerWeights weights;
    weights.wq = w.data();
    weights.wk = w.data() + dim * dim;
    weights.wv = w.data() + 2 * dim * dim;
    EXPECT_EQ(layer.init(config, weights), wa::Status::ok);
  }

  // Output [L, dim]; weights [L, S] into *weights when given (the unfused path), else fused.
  std::vector<float> run(bool causal, std::vector<float>* weights = nullptr) {
    std::vector<float> out(L * dim, -7.0f);
    wa::ForwardArgs a = wa_test::forward_args(L, S, query.data(), key.data(), value.data(), 0.5f, out.data());
    a.is_causal = causal;
    if (!padding.empty()) {
      a.key_padding_mask.kind = wa::MaskKind::boolean;
      a.key_padding_mask.data = padding.data();
    }
    if (weights) {
      weights->assign(L * S, -7.0f);
      a.weights = weights->data();
    }
    EXPECT_EQ(layer.forward(a), wa::Status::ok);
    return out;
  }
};

std::vector<std::size_t> nan_rows(const std::vector<float>& m, std::size_t width) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < m.size() / width; ++r)
    for (std::size_t d = 0; d < width; ++d)
      if (std::isnan(m[r * width + d])) {
        rows.push_back(r);
        break;
      }
  return rows;
}

std::vector<std::size_t> iota(std::size_t lo, std::size_t hi) {
  std::vector<std::size_t> v;
  for (std::size_t i = lo; i < hi; ++i) v.push_back(i);
  return v;
}

TEST(Robustness, SoftmaxRowWithNaNIsAllNaN) {
  for (std::size_t n : {1u, 3u, 4u, 9u}) {
    std::vector<float> all_nan(n, NAN), one_nan = wa_test::random_vector(n, 5), nan_masked(n, -INFINITY);
    one_nan[n / 2] = NAN;
    nan_masked[n - 1] = NAN;  // every other key masked: the max alone would call it fully masked
    for (auto* row : {&all_nan, &one_nan, &nan_masked}) {
      EXPECT_TRUE(wa::softmax_row(row->data(), n));
      for (std::size_t j = 0; j < n; ++j) EXPECT_TRUE(std::isnan((*row)[j])) << "n=" << n << " j=" << j;
    }
    EXPECT_TRUE(wa::has_nan(one_nan.data(), n));
  }
}

TEST(Robustness, NaNInAQueryPoisonsItsRowOnBothPaths) {
  for (int threads : {1, 2}) {
    wa::set_thread_count(threads);
    for (std::size_t S : {5u, 300u}) {  // 300 keys: more than one fused key tile
      for (bool with_weights : {true, false}) {
        Small p(7, S);
        std::vector<float> weights;
        const std::vector<float> clean = p.run(false, with_weights ? &weights : nullptr);
        p.query[3 * p.dim + 1] = NAN;
        const std::vector<float> out = p.run(false, with_weights ? &weights : nullptr);
        EXPECT_EQ(nan_rows(out, p.dim), std::vector<std::size_t>{3}) << "S=" << S << " weights " << with_weights;
        for (std::size_t d = 0; d < p.dim; ++d) EXPECT_TRUE(std::isnan(out[3 * p.dim + d]));
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (i / p.dim == 3) continue;
          EXPECT_EQ(out[i], clean[i]) << "index " << i;
        }
        if (with_weights) {
          EXPECT_EQ(nan_rows(weights, S), std::vector<std::size_t>{3});
        }
      }
    }
  }
  wa::set_thread_count(1);
}

TEST(Robustness, NaNInAValueReachesExactlyTheRowsThatSeeItsKey) {
  for (int threads : {1, 2}) {
    wa::set_thread_count(threads);
    for (std::size_t j : {5u, 40u}) {  // in the first and in the second 32-row block
      Small p(64, 64);
      p.value[j * p.dim + 2] = NAN;
      std::vector<float> weights;
      for (bool with_weights : {true, false}) {
        const std::vector<float> out = p.run(true, with_weights ? &weights : nullptr);
        EXPECT_EQ(nan_rows(out, p.dim), iota(j, 64)) << "j=" << j << " weights " << with_weights;
        if (with_weights) {
          EXPECT_TRUE(nan_rows(weights, 64).empty());
        }
      }
      p.padding.assign(64, 0);
      p.padding[j] = 1;  // masked for every query: takes part in no row
      EXPECT_TRUE(nan_rows(p.run(true), p.dim).empty()) << "padded j=" << j;
      EXPECT_TRUE(nan_rows(p.run(false, &weights), p.dim).empty()) << "padded j=" << j;
    }
  }
  wa::set_thread_count(1);
}

TEST(Robustness, InfinityInAValueGivesInfinityWhereItIsWeighed) {
  Small p(6, 6);
  p.value[2 * p.dim] = INFINITY;  // one element of key 2's value: v·W has ±Inf in every column
  const std::vector<float> out = p.run(true);
  for (std::size_t i = 0; i < 6; ++i) {
    for (std::size_t d = 0; d < p.dim; ++d) EXPECT_EQ(std::isfinite(out[i * p.dim + d]), i < 2) << i << "," << d;
  }
}

TEST(Robustness, SizesAgreeWithTheShapes) {
  const wa::LayerConfig c = wa_test::layer_config(16, 12, 20, 4, 4, 4, true);
  wa::ForwardShape f;
  f.batch = 3;
  f.tgt_len = 5;
  f.src_len = 7;
  f.weights = true;
  f.average_weights = false;
  wa::ForwardSizes z = wa::Layer::forward_sizes(c, f);
  EXPECT_EQ(z.output, 3u * 5 * 16);
  EXPECT_EQ(z.weights, 3u * 4 * 5 * 7);
  EXPECT_EQ(z.q + z.k + z.v + z.scores + z.attn_output, 0u);
  f.average_weights = true;
  f.intermediates = true;
  z = wa::Layer::forward_sizes(c, f);
  EXPECT_EQ(z.weights, 3u * 5 * 7);
  EXPECT_EQ(z.q, 3u * 5 * 16);
  EXPECT_EQ(z.k, 3u * 7 * 16);
  EXPECT_EQ(z.scores, 3u * 4 * 5 * 7);
  EXPECT_EQ(z.attn_output, 3u * 5 * 16);
  EXPECT_EQ(z.workspace_bytes, wa::Layer::workspace_bytes(c, f));
  // The layer holds at least its weights and biases as floats (packing pads, never drops).
  const std::size_t raw = 16 * 16 + 16 * 12 + 16 * 20 + 16 * 16 + 4 * 16;
  EXPECT_GE(wa::Layer::weights_bytes(c), raw * sizeof(float));
  EXPECT_LT(wa::Layer::weights_bytes(c), 4 * raw * sizeof(float));
}

TEST(Robustness, WorkspaceOfTheFusedPathIsFlatInTheKeyCount) {
  const wa::LayerConfig c = wa_test::layer_config(64, 64, 64, 4, 16, 16, true);
  wa::ForwardShape f;
  f.tgt_len = 64;
  const auto bytes = [&](std::size_t S, bool weights) {
    f.src_len = S;
    f.weights = weights;
    return wa::Layer::workspace_bytes(c, f);
  };
  // Unfused: whole score rows, so it grows with the keys at least by a row block of scores (both
  // shapes one head at a time: 10,000 keys would project every head first, a different plan).
  EXPECT_GE(bytes(40000, true) - bytes(20000, true), 20000u * 32 * sizeof(float));
  // Fused: only K and V grow (dk + dv per key, as rows and packed, and a flag per 16 keys), not the
  // scores: of one head at a time for long sequences ...
  const std::size_t per_key = (16 + 16) * 2 + 1;
  EXPECT_LE(bytes(80000, false) - bytes(40000, false), 40000u * per_key * sizeof(float));
  EXPECT_LT(bytes(20000, false), bytes(20000, true));
  // ... and of every head when all heads are projected before the attention (shorter ones).
  EXPECT_LE(bytes(2000, false) - bytes(1000, false), 1000u * 4 * per_key * sizeof(float));
  EXPECT_GE(bytes(2000, false) - bytes(1000, false), 1000u * 4 * (16 + 16) * sizeof(float));
}

TEST(Robustness, WorkspaceIsWhatAForwardCanRunIn) {
  // A forward runs with the sizes it reports: exercise the sizes around the SIMD width and tiles.
  for (std::size_t L : {1u, 3u, 16u, 33u}) {
    Small p(L, L + 2);
    std::vector<float> weights;
    EXPECT_EQ(nan_rows(p.run(L % 2 == 1, &weights), p.dim).size(), 0u);
    EXPECT_EQ(nan_rows(p.run(L % 2 == 0), p.dim).size(), 0u);
  }
}

}  // namespace
