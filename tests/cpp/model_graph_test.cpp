// The model graph against a float64 evaluation of the same weights (model_reference.cpp): each
// family's logits, hidden states and every layer's attention, RoPE with given frequencies (partial),
// GQA, windows, biases, tied and untied heads, Conv1D weights sliced from a fused c_attn; and the
// arguments a forward refuses.
#include <gtest/gtest.h>

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

std::vector<std::int32_t> some_ids(std::size_t n, std::size_t vocab, unsigned seed) {
  std::vector<std::int32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>((i * 7 + seed * 13 + i * i) % vocab);
  return ids;
}

struct Output {
  std::vector<float> logits, hidden;
  std::vector<std::vector<float>> attention, hidden_states;
};

// One forward without a cache asking for every layer's attention, every head in order, and (unless
// `states` is false) every hidden state.
Output run(const wa::Model& model, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& types = {},
           bool states = true) {
  const wa::ModelConfig& c = model.config();
  const std::size_t T = ids.size();
  Output out;
  out.logits.resize(c.head == wa::HeadKind::none ? 0 : T * c.vocab);
  out.hidden.resize(T * c.hidden);
  out.attention.assign(c.num_layers, std::vector<float>(c.num_heads * T * T));
  std::vector<float*> attention, hidden_states;
  for (auto& a : out.attention) attention.push_back(a.data());
  if (states) out.hidden_states.assign(c.num_layers + 1, std::vector<float>(T * c.hidden, -1.0f));
  for (auto& h : out.hidden_states) hidden_states.push_back(h.data());
  std::vector<std::uint32_t> heads;
  for (std::uint32_t h = 0; h < c.num_heads; ++h) heads.push_back(h);
  wa::ModelForward f;
  f.ids = ids.data();
  f.tokens = T;
  f.token_types = types.empty() ? nullptr : types.data();
  f.logits = out.logits.empty() ? nullptr : out.logits.data();
  f.hidden = out.hidden.data();
  f.attention = attention.data();
  f.heads = heads.data();
  f.head_count = heads.size();
  f.hidden_states = states ? hidden_states.data() : nullptr;
  EXPECT_EQ(model.forward(f), wa::Status::ok);
  return out;
}

void expect_reference(const ModelSpec& spec, std::size_t tokens, const std::string& label) {
  const TestModel test(spec);
  wa::Model model;
  test.build(model);
  const auto ids = some_ids(tokens, spec.vocab, spec.seed);
  std::vector<std::int32_t> types;
  if (spec.family == Family::bert)
    for (std::size_t i = 0; i < tokens; ++i) types.push_back(i >= tokens / 2 ? 1 : 0);
  const TestModel::Result ref = test.reference(ids, types);
  for (int threads : {1, 2}) {
    wa::set_thread_count(threads);
    const Output got = run(model, ids, types);
    const std::string where = label + " at " + std::to_string(threads) + " threads";
    EXPECT_TRUE(wa_test::all_close(got.logits, ref.logits, where + ": logits"));
    EXPECT_TRUE(wa_test::all_close(got.hidden, ref.hidden, where + ": hidden"));
    for (std::size_t l = 0; l < spec.layers; ++l)
      EXPECT_TRUE(wa_test::all_close(got.attention[l], ref.attention[l], where + ": attention " + std::to_string(l)));
    for (std::size_t i = 0; i <= spec.layers; ++i)
      EXPECT_TRUE(wa_test::all_close(got.hidden_states[i], ref.hidden_states[i],
                                     where + ": hidden state " + std::to_string(i)));
    // The last hidden state is `hidden` itself; asking for hidden states changes no bit.
    EXPECT_EQ(got.hidden_states[spec.layers], got.hidden) << where;
    const Output plain = run(model, ids, types, false);
    EXPECT_EQ(plain.logits, got.logits) << where;
    EXPECT_EQ(plain.hidden, got.hidden) << where;
  }
  wa::set_thread_count(1);
}

TEST(ModelGraph, TinyLlamaOfOneLayerMatchesTheFloat64Loop) {
  ModelSpec s;
  s.layers = 1;
  s.hidden = 4;
  s.heads = 2;
  s.kv_heads = 1;
  s.head_dim = 2;
  s.rope_dim = 2;
  s.intermediate = 6;
  s.vocab = 5;
  expect_reference(s, 3, "tiny llama");
}

TEST(ModelGraph, LlamaWithGqaPartialRopeAndUntiedHead) {
  ModelSpec s;
  s.head_dim = 8;  // heads · head_dim = 32 ≠ hidden 16, rope on half of each head
  s.rope_dim = 4;
  expect_reference(s, 9, "llama");
}

TEST(ModelGraph, LlamaWithBiasesAndTiedHead) {
  ModelSpec s;
  s.biases = true;
  s.tied = true;
  s.kv_heads = 4;
  s.seed = 5;
  expect_reference(s, 7, "llama biases tied");
}

TEST(ModelGraph, SlidingWindowsPerLayer) {
  ModelSpec s;
  s.kv_heads = 1;
  s.windows = {3, 0};
  s.seed = 9;
  expect_reference(s, 12, "mistral window");
}

TEST(ModelGraph, Gpt2WithConv1DWeightsSlicedFromAFusedProjection) {
  ModelSpec s;
  s.family = Family::gpt2;
  s.seed = 3;
  expect_reference(s, 10, "gpt2");
}

TEST(ModelGraph, BertPostNormTokenTypesAndMaskedLmHead) {
  ModelSpec s;
  s.family = Family::bert;
  s.seed = 4;
  expect_reference(s, 8, "bert");
}

TEST(ModelGraph, LargerShapesCrossTheThreadingThresholds) {
  ModelSpec s;
  s.hidden = 64;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 8;
  s.rope_dim = 8;
  s.intermediate = 160;
  s.vocab = 300;
  s.seed = 11;
  expect_reference(s, 40, "wider llama");
}

TEST(ModelGraph, LogitsOfTheLastTokenOnlyOrNone) {
  ModelSpec s;
  const TestModel test(s);
  wa::Model model;
  test.build(model);
  const auto ids = some_ids(6, s.vocab, 2);
  const Output all = run(model, ids);
  std::vector<float> last(s.vocab, -1.0f), hidden(ids.size() * s.hidden);
  wa::ModelForward f;
  f.ids = ids.data();
  f.tokens = ids.size();
  f.logits_mode = wa::LogitsMode::last;
  f.logits = last.data();
  f.hidden = hidden.data();
  ASSERT_EQ(model.forward(f), wa::Status::ok);
  EXPECT_TRUE(std::equal(last.begin(), last.end(), all.logits.end() - s.vocab));
  EXPECT_EQ(hidden, all.hidden);
  f.logits_mode = wa::LogitsMode::none;
  f.logits = nullptr;  // not read
  // One hidden state asked (layer 1's input): written, and nothing else.
  std::vector<float> state(ids.size() * s.hidden, -1.0f);
  float* states[] = {nullptr, state.data(), nullptr};
  f.hidden_states = states;
  ASSERT_EQ(model.forward(f), wa::Status::ok);
  EXPECT_EQ(hidden, all.hidden);
  EXPECT_EQ(state, all.hidden_states[1]);
}

TEST(ModelGraph, RefusesWhatIsOutOfRange) {
  ModelSpec s;
  s.family = Family::bert;
  s.max_positions = 8;
  const TestModel test(s);
  wa::Model model;
  test.build(model);
  std::vector<float> logits(9 * s.vocab);
  std::vector<std::int32_t> ids = {1, 2, 3}, types = {0, 1, 2};
  wa::ModelForward f;
  f.ids = ids.data();
  f.tokens = ids.size();
  f.logits = logits.data();
  f.token_types = types.data();
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "token type 2 of 2";
  types[2] = 1;
  ids[1] = static_cast<std::int32_t>(s.vocab);
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "id = vocab";
  ids[1] = -1;
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "id -1";
  ids[1] = 0;
  EXPECT_EQ(model.forward(f), wa::Status::ok);
  const std::vector<std::int32_t> nine(9, 1);
  f.ids = nine.data();
  f.tokens = 9;
  f.token_types = nullptr;
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "9 learned positions of 8";
  f.tokens = 0;
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "no tokens";
  f.tokens = 2;
  f.logits = nullptr;
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument) << "logits asked without room for them";
  // A bidirectional model keeps no cache.
  wa::ModelCache cache;
  EXPECT_EQ(cache.init(model, 8), wa::Status::invalid_argument);
}

TEST(ModelGraph, RefusesAnIncompleteModelOrConfiguration) {
  ModelSpec s;
  const TestModel test(s);
  wa::Model model;
  ASSERT_EQ(model.init(test.config()), wa::Status::ok);
  EXPECT_FALSE(model.ready());
  const std::vector<std::int32_t> ids = {1};
  std::vector<float> logits(s.vocab);
  wa::ModelForward f;
  f.ids = ids.data();
  f.tokens = 1;
  f.logits = logits.data();
  EXPECT_EQ(model.forward(f), wa::Status::invalid_argument);
  wa::ModelConfig bad = test.config();
  bad.num_kv_heads = 3;  // 4 heads
  EXPECT_EQ(wa::Model().init(bad), wa::Status::invalid_argument);
  bad = test.config();
  bad.inverse_frequencies = nullptr;
  EXPECT_EQ(wa::Model().init(bad), wa::Status::invalid_argument);
  bad = test.config();
  bad.rope_dim = 5;
  EXPECT_EQ(wa::Model().init(bad), wa::Status::invalid_argument);
}

TEST(ModelGraph, WeightsBytesCountWhatThePartsHold) {
  ModelSpec s;
  s.tied = true;
  s.hidden = 64;
  s.head_dim = 16;  // whole 16-wide panels per head: no padding in the count
  s.intermediate = 128;
  s.vocab = 96;
  const TestModel test(s);
  const wa::ModelConfig& c = test.config();
  // Tied: the token table once (as the head's panels); every projection and MLP matrix once.
  const double floats =
      static_cast<double>(c.vocab * c.hidden) +
      c.num_layers * static_cast<double>(c.hidden * (2 * c.num_heads * c.head_dim + 2 * c.num_kv_heads * c.head_dim +
                                                     3 * c.intermediate));
  const double bytes = wa::Model::weights_bytes(c);
  EXPECT_GE(bytes, floats * 4);
  EXPECT_LE(bytes, floats * 4 * 1.05);  // norms, biases
}

}  // namespace
