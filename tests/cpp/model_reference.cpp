#include "model_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace wa_test {

wa::LinearSource StoredLinear::source() const {
  wa::LinearSource s;
  s.weight = data;
  s.bias = bias;
  s.layout = layout;
  s.ld = ld;
  return s;
}

std::vector<float>& TestModel::store(std::size_t n, float scale, float offset) {
  std::mt19937 rng(spec_.seed * 7919u + static_cast<unsigned>(arrays_.size()));
  std::uniform_real_distribution<float> dist(-scale, scale);
  arrays_.emplace_back(n);
  for (float& x : arrays_.back()) x = offset + dist(rng);
  return arrays_.back();
}

StoredLinear TestModel::linear(std::size_t out, std::size_t in, bool bias, wa::Layout layout) {
  StoredLinear l;
  l.out = out;
  l.in = in;
  l.layout = layout;
  l.ld = layout == wa::Layout::out_in ? in : out;
  l.data = store(out * in, 1.0f / std::sqrt(static_cast<float>(in))).data();
  l.bias = bias ? store(out, 0.2f).data() : nullptr;
  return l;
}

StoredNorm TestModel::norm(bool bias) {
  StoredNorm n;
  n.weight = store(spec_.hidden, 0.3f, 1.0f).data();
  n.bias = bias ? store(spec_.hidden, 0.2f).data() : nullptr;
  return n;
}

TestModel::TestModel(const ModelSpec& spec) : spec_(spec) {
  arrays_.reserve(64 + 16 * spec.layers);
  const bool gpt2 = spec.family == Family::gpt2, bert = spec.family == Family::bert, llama = !gpt2 && !bert;
  wa::ModelConfig& c = config_;
  c.num_layers = spec.layers;
  c.hidden = spec.hidden;
  c.num_heads = spec.heads;
  c.num_kv_heads = llama ? spec.kv_heads : spec.heads;
  c.head_dim = llama ? spec.head_dim : spec.hidden / spec.heads;
  c.intermediate = spec.intermediate;
  c.vocab = spec.vocab;
  c.max_positions = llama ? 0 : spec.max_positions;
  c.type_vocab = bert ? spec.type_vocab : 0;
  c.norm = llama ? wa::NormKind::rms : wa::NormKind::layer;
  c.post_norm = bert;
  c.norm_eps = llama ? 1e-6f : 1e-5f;
  c.activation = llama ? wa::Activation::silu : gpt2 ? wa::Activation::gelu_tanh : wa::Activation::gelu_erf;
  c.gated_mlp = llama;
  c.learned_positions = !llama;
  c.rope_dim = llama ? spec.rope_dim : 0;
  c.causal = !bert;
  c.attention_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  c.final_norm = !bert;
  c.embedding_norm = bert;
  c.head = bert ? wa::HeadKind::mlm : wa::HeadKind::plain;
  c.tied_head = spec.tied || gpt2 || bert;
  // Frequencies of no formula: the engine must use the ones given.
  for (std::size_t k = 0; k < c.rope_dim / 2; ++k) inverse_frequencies_.push_back(1.0 / (1.0 + 3.7 * k * k));
  c.inverse_frequencies = inverse_frequencies_.data();

  const std::size_t E = c.hidden, q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  const bool bias = spec.biases || !llama;
  tokens_ = store(c.vocab * E, 1.0f).data();
  if (c.learned_positions) positions_ = store(c.max_positions * E, 0.5f).data();
  if (bert) types_ = store(c.type_vocab * E, 0.5f).data();
  if (bert) embedding_norm_ = norm(true);
  const wa::Layout layout = gpt2 ? wa::Layout::in_out : wa::Layout::out_in;
  for (std::size_t l = 0; l < spec.layers; ++l) {
    StoredBlock b;
    b.attention_norm = norm(!llama);
    if (gpt2) {
      // c_attn: one [in, q | k | v] tensor, each projection a column slice of it.
      const StoredLinear qkv = linear(q_out + 2 * kv_out, E, true, layout);
      b.q = b.k = b.v = qkv;
      b.q.out = q_out;
      b.k.out = b.v.out = kv_out;
      b.k.data += q_out;
      b.k.bias += q_out;
      b.v.data += q_out + kv_out;
      b.v.bias += q_out + kv_out;
    } else {
      b.q = linear(q_out, E, bias, layout);
      b.k = linear(kv_out, E, bias, layout);
      b.v = linear(kv_out, E, bias, layout);
    }
    b.o = linear(E, q_out, bias, layout);
    b.mlp_norm = norm(!llama);
    if (llama) b.gate = linear(c.intermediate, E, bias, layout);
    b.up = linear(c.intermediate, E, bias, layout);
    b.down = linear(E, c.intermediate, bias, layout);
    b.window = l < spec.windows.size() ? spec.windows[l] : 0;
    blocks_.push_back(b);
  }
  if (!bert) final_norm_ = norm(!llama);
  if (bert) {
    transform_ = linear(E, E, true, wa::Layout::out_in);
    transform_norm_ = norm(true);
  }
  if (c.tied_head) {
    lm_.data = tokens_;
    lm_.ld = E;
    lm_.out = c.vocab;
    lm_.in = E;
    lm_.bias = bert ? store(c.vocab, 0.2f).data() : nullptr;
  } else {
    lm_ = linear(c.vocab, E, false, wa::Layout::out_in);
  }
}

void TestModel::build(wa::Model& model) const {
  ASSERT_EQ(model.init(config_), wa::Status::ok);
  wa::EmbeddingWeights e;
  e.tokens = tokens_;
  e.positions = positions_;
  e.token_types = types_;
  e.norm = {embedding_norm_.weight, embedding_norm_.bias};
  ASSERT_EQ(model.set_embeddings(e), wa::Status::ok);
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    const StoredBlock& b = blocks_[l];
    wa::BlockWeights w;
    w.attention_norm = {b.attention_norm.weight, b.attention_norm.bias};
    w.mlp_norm = {b.mlp_norm.weight, b.mlp_norm.bias};
    w.q = b.q.source();
    w.k = b.k.source();
    w.v = b.v.source();
    w.o = b.o.source();
    if (b.gate.data) w.gate = b.gate.source();
    w.up = b.up.source();
    w.down = b.down.source();
    w.sliding_window = b.window;
    ASSERT_EQ(model.set_block(l, w), wa::Status::ok) << "layer " << l;
  }
  wa::HeadWeights h;
  h.final_norm = {final_norm_.weight, final_norm_.bias};
  h.lm = lm_.source();
  if (config_.tied_head) h.lm.weight = nullptr;
  if (transform_.data) h.transform = transform_.source();
  h.transform_norm = {transform_norm_.weight, transform_norm_.bias};
  ASSERT_EQ(model.set_head(h), wa::Status::ok);
  ASSERT_TRUE(model.ready());
}

std::vector<double> TestModel::norm_rows(const std::vector<double>& x, std::size_t rows, const StoredNorm& n) const {
  const std::size_t E = config_.hidden;
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const double* xr = &x[r * E];
    double mean = 0, var = 0;
    if (config_.norm == wa::NormKind::layer) {
      for (std::size_t i = 0; i < E; ++i) mean += xr[i];
      mean /= E;
    }
    for (std::size_t i = 0; i < E; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const double inv = 1.0 / std::sqrt(var / E + config_.norm_eps);
    for (std::size_t i = 0; i < E; ++i) y[r * E + i] = (xr[i] - mean) * inv * n.weight[i] + (n.bias ? n.bias[i] : 0);
  }
  return y;
}

std::vector<double> TestModel::apply(const StoredLinear& l, const std::vector<double>& x, std::size_t rows) const {
  std::vector<double> y(rows * l.out);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < l.out; ++o) {
      double sum = l.bias ? l.bias[o] : 0.0;
      for (std::size_t i = 0; i < l.in; ++i) sum += x[r * l.in + i] * l.w(o, i);
      y[r * l.out + o] = sum;
    }
  return y;
}

double TestModel::act(double x) const {
  switch (config_.activation) {
    case wa::Activation::silu:
      return x / (1.0 + std::exp(-x));
    case wa::Activation::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case wa::Activation::gelu_erf:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return 0;
}

TestModel::Result TestModel::reference(const std::vector<std::int32_t>& ids,
                                       const std::vector<std::int32_t>& types) const {
  const wa::ModelConfig& c = config_;
  const std::size_t T = ids.size(), E = c.hidden, H = c.num_heads, KV = c.num_kv_heads, D = c.head_dim;
  Result out;
  std::vector<double> x(T * E);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < E; ++i) {
      double v = tokens_[ids[t] * E + i];
      if (types_) v += types_[(types.empty() ? 0 : types[t]) * E + i];
      if (positions_) v += positions_[t * E + i];
      x[t * E + i] = v;
    }
  if (c.embedding_norm) x = norm_rows(x, T, embedding_norm_);
  for (const StoredBlock& b : blocks_) {
    out.hidden_states.push_back(x);
    const std::vector<double> h = c.post_norm ? x : norm_rows(x, T, b.attention_norm);
    std::vector<double> q = apply(b.q, h, T), k = apply(b.k, h, T), v = apply(b.v, h, T);
    // RoPE: pairs (i, i + rope/2) of each head's first rope entries turn by position · frequency.
    const std::size_t half = c.rope_dim / 2;
    const auto rotate = [&](std::vector<double>& m, std::size_t heads) {
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t n = 0; n < heads; ++n)
          for (std::size_t p = 0; p < half; ++p) {
            double* row = &m[(t * heads + n) * D];
            const double phi = t * inverse_frequencies_[p], a = row[p], bb = row[p + half];
            row[p] = a * std::cos(phi) - bb * std::sin(phi);
            row[p + half] = bb * std::cos(phi) + a * std::sin(phi);
          }
    };
    rotate(q, H);
    rotate(k, KV);
    std::vector<double> attn(T * H * D), probs(H * T * T, 0.0);
    for (std::size_t n = 0; n < H; ++n) {
      const std::size_t g = n / (H / KV);
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> s(T, -INFINITY);
        double max = -INFINITY;
        for (std::size_t j = 0; j < T; ++j) {
          if ((c.causal && j > i) || (b.window && i >= j + b.window)) continue;
          double dot = 0;
          for (std::size_t d = 0; d < D; ++d) dot += q[(i * H + n) * D + d] * k[(j * KV + g) * D + d];
          s[j] = dot * c.attention_scale;
          max = std::fmax(max, s[j]);
        }
        double sum = 0;
        for (std::size_t j = 0; j < T; ++j) sum += s[j] == -INFINITY ? 0.0 : std::exp(s[j] - max);
        for (std::size_t j = 0; j < T; ++j) {
          const double p = s[j] == -INFINITY ? 0.0 : std::exp(s[j] - max) / sum;
          probs[(n * T + i) * T + j] = p;
          for (std::size_t d = 0; d < D; ++d) attn[(i * H + n) * D + d] += p * v[(j * KV + g) * D + d];
        }
      }
    }
    out.attention.push_back(probs);
    const std::vector<double> a = apply(b.o, attn, T);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    if (c.post_norm) x = norm_rows(x, T, b.attention_norm);
    const std::vector<double> m_in = c.post_norm ? x : norm_rows(x, T, b.mlp_norm);
    std::vector<double> inner = apply(b.up, m_in, T);
    if (c.gated_mlp) {
      const std::vector<double> gate = apply(b.gate, m_in, T);
      for (std::size_t i = 0; i < inner.size(); ++i) inner[i] *= act(gate[i]);
    } else {
      for (double& u : inner) u = act(u);
    }
    const std::vector<double> m = apply(b.down, inner, T);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += m[i];
    if (c.post_norm) x = norm_rows(x, T, b.mlp_norm);
  }
  out.hidden = c.final_norm ? norm_rows(x, T, final_norm_) : x;
  out.hidden_states.push_back(out.hidden);
  std::vector<double> head_in = out.hidden;
  if (c.head == wa::HeadKind::mlm) {
    head_in = apply(transform_, head_in, T);
    for (double& u : head_in) u = act(u);
    head_in = norm_rows(head_in, T, transform_norm_);
  }
  if (c.head != wa::HeadKind::none) out.logits = apply(lm_, head_in, T);
  return out;
}

}  // namespace wa_test
