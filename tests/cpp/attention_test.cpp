#include "attention.h"

#include <cstring>

#include "parallel.h"
#include "reference.h"
#include "test_util.h"

namespace {

struct Case {
  std::string name;
  std::size_t batch, tgt_len, src_len, q_in, k_in, v_in, heads, dk, dv;
  bool out_projection, biases, causal, average;
  wa::MaskKind attn_mask, padding_mask;
  bool per_head_mask;
};

struct Result {
  std::vector<float> output, weights;
};

// Inputs, weights and masks from the case's seed; masks leave some rows fully masked.
class Problem {
 public:
  explicit Problem(const Case& c) : c_(c) {
    unsigned seed = 100;
    query_ = wa_test::random_vector(c.batch * c.tgt_len * c.q_in, seed++);
    key_ = wa_test::random_vector(c.batch * c.src_len * c.k_in, seed++);
    value_ = wa_test::random_vector(c.batch * c.src_len * c.v_in, seed++);
    const std::size_t E = c.heads * c.dv;
    wq_ = wa_test::random_vector(c.heads * c.dk * c.q_in, seed++, -0.5f, 0.5f);
    wk_ = wa_test::random_vector(c.heads * c.dk * c.k_in, seed++, -0.5f, 0.5f);
    wv_ = wa_test::random_vector(E * c.v_in, seed++, -0.5f, 0.5f);
    wo_ = wa_test::random_vector(E * E, seed++, -0.5f, 0.5f);
    bq_ = wa_test::random_vector(c.heads * c.dk, seed++);
    bk_ = wa_test::random_vector(c.heads * c.dk, seed++);
    bv_ = wa_test::random_vector(E, seed++);
    bo_ = wa_test::random_vector(E, seed++);
    const std::size_t mask_rows = (c.per_head_mask ? c.batch * c.heads : 1) * c.tgt_len;
    make_mask(c.attn_mask, mask_rows * c.src_len, seed++, attn_bool_, attn_float_);
    make_mask(c.padding_mask, c.batch * c.src_len, seed++, pad_bool_, pad_float_);
  }

  wa::LayerConfig config() const {
    return wa_test::layer_config(c_.q_in, c_.k_in, c_.v_in, c_.heads, c_.dk, c_.dv, c_.out_projection);
  }
  wa::LayerWeights weights() const {
    const bool b = c_.biases;
    return {wq_.data(),
            wk_.data(),
            wv_.data(),
            b ? bq_.data() : nullptr,
            b ? bk_.data() : nullptr,
            b ? bv_.data() : nullptr,
            wo_.data(),
            b ? bo_.data() : nullptr};
  }
  wa::ForwardArgs args(Result& run) const {
    wa::ForwardArgs a;
    a.batch = c_.batch;
    a.tgt_len = c_.tgt_len;
    a.src_len = c_.src_len;
    a.query = query_.data();
    a.key = key_.data();
    a.value = value_.data();
    a.attn_mask = mask(c_.attn_mask, attn_bool_, attn_float_, c_.per_head_mask);
    a.key_padding_mask = mask(c_.padding_mask, pad_bool_, pad_float_, false);
    a.is_causal = c_.causal;
    a.scale = 1.0f / std::sqrt(static_cast<float>(c_.dk));
    a.average_weights = c_.average;
    run.output.assign(c_.batch * c_.tgt_len * c_.heads * c_.dv, -9.0f);
    run.weights.assign(c_.batch * (c_.average ? 1 : c_.heads) * c_.tgt_len * c_.src_len, -9.0f);
    a.output = run.output.data();
    a.weights = run.weights.data();
    return a;
  }

 private:
  static void make_mask(wa::MaskKind kind, std::size_t n, unsigned seed, std::vector<std::uint8_t>& b,
                        std::vector<float>& f) {
    const auto r = wa_test::random_vector(n, seed, 0.0f, 1.0f);
    b.resize(n);
    f.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = r[i] < 0.4f;
      f[i] = r[i] < 0.3f ? -INFINITY : r[i] - 0.5f;
    }
    (void)kind;
  }
  static wa::Mask mask(wa::MaskKind kind, const std::vector<std::uint8_t>& b, const std::vector<float>& f,
                       bool per_head) {
    wa::Mask m;
    m.kind = kind;
    m.data = kind == wa::MaskKind::boolean ? static_cast<const void*>(b.data()) : f.data();
    m.per_head = per_head;
    return m;
  }

  Case c_;
  std::vector<float> query_, key_, value_, wq_, wk_, wv_, wo_, bq_, bk_, bv_, bo_, attn_float_, pad_float_;
  std::vector<std::uint8_t> attn_bool_, pad_bool_;
};

using wa::MaskKind;
const Case kCases[] = {
    {"self 1 token", 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, MaskKind::none, MaskKind::none, false},
    {"self dk!=dv", 2, 5, 5, 7, 7, 7, 1, 3, 9, false, true, false, true, MaskKind::none, MaskKind::none, false},
    {"self causal 33", 1, 33, 33, 17, 17, 17, 1, 16, 17, false, true, true, true, MaskKind::none, MaskKind::none,
     false},
    {"mha seed 4x512x8", 1, 4, 4, 512, 512, 512, 8, 64, 64, true, true, false, true, MaskKind::none, MaskKind::none,
     false},
    {"mha per-head weights", 2, 9, 9, 16, 16, 16, 4, 4, 4, true, true, false, false, MaskKind::none, MaskKind::none,
     false},
    {"mha cross kdim vdim", 2, 7, 13, 12, 5, 9, 3, 4, 4, true, false, false, true, MaskKind::none, MaskKind::none,
     false},
    {"mha bool masks", 2, 17, 17, 8, 8, 8, 2, 4, 4, true, true, false, false, MaskKind::boolean, MaskKind::boolean,
     false},
    {"mha float masks per head", 3, 5, 8, 8, 8, 8, 2, 4, 4, true, true, false, true, MaskKind::additive,
     MaskKind::additive, true},
    {"mha causal long", 1, 70, 70, 32, 32, 32, 2, 16, 16, true, true, true, true, MaskKind::none, MaskKind::none,
     false},
    {"mha causal + masks", 2, 40, 37, 16, 16, 16, 4, 4, 4, true, true, true, false, MaskKind::boolean,
     MaskKind::additive, true},
    {"mha long keys, tiles", 1, 35, 600, 8, 8, 8, 2, 4, 4, true, true, false, true, MaskKind::none, MaskKind::boolean,
     false},
    {"mha long causal, tiles", 1, 530, 530, 8, 8, 8, 1, 8, 8, true, false, true, true, MaskKind::additive,
     MaskKind::none, false},
};

// A layer with packed weights, or (a one-shot call with few rows) reading them in place.
wa::Status init_layer(wa::Layer& layer, const wa::LayerConfig& config, const wa::LayerWeights& weights, bool borrow) {
  return borrow ? layer.init_borrowed(config, weights) : layer.init(config, weights);
}

// Both paths: with weights (whole score rows) and without (the fused, key-tiled one); both weight
// layouts.
TEST(Attention, LayerMatchesDoubleReferenceWithAndWithoutWeights) {
  for (const Case& c : kCases)
    for (bool borrow : {false, true}) {
      Problem p(c);
      wa::Layer layer;
      ASSERT_EQ(init_layer(layer, p.config(), p.weights(), borrow), wa::Status::ok) << c.name;
      const std::string name = c.name + (borrow ? " (borrowed weights)" : "");
      Result ref, got, fused;
      wa::reference_forward(p.config(), p.weights(), p.args(ref));
      ASSERT_EQ(layer.forward(p.args(got)), wa::Status::ok) << c.name;
      EXPECT_TRUE(wa_test::all_close(got.output, wa_test::to_double(ref.output), name + " output"));
      EXPECT_TRUE(wa_test::all_close(got.weights, wa_test::to_double(ref.weights), name + " weights"));
      wa::ForwardArgs fused_args = p.args(fused);
      fused_args.weights = nullptr;
      ASSERT_EQ(layer.forward(fused_args), wa::Status::ok) << name;
      EXPECT_TRUE(wa_test::all_close(fused.output, wa_test::to_double(ref.output), name + " output (fused)"));
    }
}

TEST(Attention, ThreadCountDoesNotChangeABit) {
  const auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  for (const Case& c : kCases)
    for (bool borrow : {false, true}) {
      Problem p(c);
      wa::Layer layer;
      ASSERT_EQ(init_layer(layer, p.config(), p.weights(), borrow), wa::Status::ok);
      for (bool with_weights : {true, false}) {
        Result runs[2];
        for (int threads : {1, 2}) {
          wa::ForwardArgs args = p.args(runs[threads - 1]);
          if (!with_weights) args.weights = nullptr;
          wa::set_thread_count(threads);
          ASSERT_EQ(layer.forward(args), wa::Status::ok);
        }
        wa::set_thread_count(1);
        const std::string label = c.name + (with_weights ? "" : " (fused)") + (borrow ? " (borrowed weights)" : "");
        EXPECT_TRUE(same_bits(runs[0].output, runs[1].output)) << label;
        EXPECT_TRUE(same_bits(runs[0].weights, runs[1].weights)) << label;
      }
    }
}

TEST(Attention, RejectsEmptySizesAndMissingWeights) {
  wa::Layer layer;
  EXPECT_EQ(layer.init(wa_test::layer_config(0, 1, 1, 1, 1, 1, false), {}), wa::Status::invalid_argument);
  Problem p(kCases[1]);
  ASSERT_EQ(layer.init(p.config(), p.weights()), wa::Status::ok);
  Result run;
  wa::ForwardArgs a = p.args(run);
  a.tgt_len = 0;
  EXPECT_EQ(layer.forward(a), wa::Status::invalid_argument);
}

}  // namespace
