// Hostile corners found by trying the package as its users would (issue 16): sizes that overflow,
// windows at the edge of the integer range, rows whose every score is −inf through arithmetic, and
// the cost of a sliding window.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attention.h"
#include "attention/heads.h"
#include "test_util.h"

namespace {

// One head of width 2 whose projections are the identity: the test controls the scores and values.
struct Identity {
  std::size_t L, S;
  std::vector<float> query, key, value, eye = {1, 0, 0, 1};
  wa::Layer layer;

  Identity(std::size_t l, std::size_t s, std::size_t window)
      : L(l), S(s), query(2 * l, 0.5f), key(2 * s), value(2 * s) {
    wa::LayerConfig c = wa_test::layer_config(2, 2, 2, 1, 2, 2, false);
    c.sliding_window = window;
    for (std::size_t j = 0; j < S; ++j) {
      key[2 * j] = 0.1f * static_cast<float>(j % 7);
      key[2 * j + 1] = -0.2f;
      value[2 * j] = static_cast<float>(j);
      value[2 * j + 1] = 1.0f;
    }
    wa::LayerWeights w;
    w.wq = w.wk = w.wv = eye.data();
    EXPECT_EQ(layer.init(c, w), wa::Status::ok);
  }

  std::vector<float> run(bool weights, bool causal = false) {
    std::vector<float> out(2 * L), probs(L * S);
    wa::ForwardArgs a = wa_test::forward_args(L, S, query.data(), key.data(), value.data(), 1.0f, out.data());
    a.is_causal = causal;
    a.weights = weights ? probs.data() : nullptr;
    EXPECT_EQ(layer.forward(a), wa::Status::ok);
    return out;
  }
};

// Finding 3: a window as wide as size_t allows masks nothing (pos − j ≥ w never holds); the rule
// must not compute j + w, which wraps, and then take a NaN value's key out of the rows that see it.
TEST(Hostile, WidestWindowMasksNoKey) {
  for (bool weights : {true, false}) {
    Identity p(2, 2, std::numeric_limits<std::size_t>::max());
    p.value[2] = p.value[3] = NAN;  // key 1's value
    const std::vector<float> out = p.run(weights);
    for (std::size_t k = 0; k < out.size(); ++k)
      EXPECT_TRUE(std::isnan(out[k])) << "weights " << weights << " at " << k;
  }
}

}  // namespace

// Finding 1: the sizes are counted so that nothing wraps (in wasm32, size_t stops at 2^32): a forward
// whose results or scratch pass what size_t holds reports its real size, which the binding refuses
// before it allocates anything.
TEST(Hostile, SizesPastSizeTDoNotWrap) {
  const wa::LayerConfig c = wa_test::layer_config(64, 64, 64, 64, 1, 1, true);
  wa::ForwardShape f;
  f.batch = std::size_t{1} << 40;
  f.tgt_len = f.src_len = std::size_t{1} << 20;
  f.weights = true;
  f.average_weights = false;
  f.intermediates = true;
  const wa::ForwardSizes z = wa::Layer::forward_sizes(c, f);
  EXPECT_EQ(z.weights, std::ldexp(1.0, 40 + 6 + 20 + 20));
  EXPECT_EQ(z.scores, std::ldexp(1.0, 40 + 6 + 20 + 20));
  EXPECT_EQ(z.output, std::ldexp(1.0, 40 + 20 + 6));
  // Scratch: K/V rows of 2^62 keys.
  f = wa::ForwardShape();
  f.tgt_len = 1;
  f.src_len = std::size_t{1} << 62;
  EXPECT_GE(wa::Layer::forward_sizes(c, f).workspace_bytes, std::ldexp(1.0, 62 + 2));
}

// Finding 9: a block asks whether its keys hold a non-finite value from their flags alone (one per
// 16 keys), not from every flag of the head: a windowed forward then costs O(L·w), not O(L·S/16)
// per block. Here every flag outside the asked range is set, so a scan past it would answer true.
TEST(Hostile, NonFiniteCheckReadsOnlyTheAttendedKeysFlags) {
  std::vector<float> flags(1000, 1.0f);
  const wa::KeyRange keys{320, 400};  // flags 20 … 24
  std::fill(flags.begin() + 20, flags.begin() + 25, 0.0f);
  wa::HeadView view;
  view.flags = flags.data();
  EXPECT_FALSE(view.nonfinite(keys));
  flags[24] = 1.0f;  // keys 384 … 399
  EXPECT_TRUE(view.nonfinite(keys));
  EXPECT_TRUE(view.nonfinite({0, 16}));
}

// And a windowed forward over many key tiles still gives NaN exactly where a value the window
// leaves to a row is NaN, on both paths.
TEST(Hostile, WindowedNaNValueReachesOnlyTheRowsThatSeeIt) {
  for (bool weights : {true, false}) {
    Identity p(700, 700, 16);
    p.value[2 * 600] = NAN;  // key 600: rows 600 … 615 see it (causal, window 16)
    const std::vector<float> out = p.run(weights, true);
    for (std::size_t i = 0; i < 700; ++i)
      ASSERT_EQ(std::isnan(out[2 * i]), i >= 600 && i < 616) << "weights " << weights << " row " << i;
  }
}
