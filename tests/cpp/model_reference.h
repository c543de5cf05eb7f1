// Small random models for the model tests: their weights as a checkpoint stores them, the engine's
// Model made from them, and a straightforward float64 evaluation of the same graph (loops over
// tokens, heads and keys, written from transformers' modeling code) to check it against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace wa_test {

// A weight as stored: `data` with row stride ld, [out, in] or [in, out], and an optional bias.
struct StoredLinear {
  const float* data = nullptr;
  std::size_t ld = 0;
  wa::Layout layout = wa::Layout::out_in;
  const float* bias = nullptr;
  std::size_t out = 0, in = 0;
  double w(std::size_t o, std::size_t i) const {
    return layout == wa::Layout::out_in ? data[o * ld + i] : data[i * ld + o];
  }
  wa::LinearSource source() const;
};

struct StoredNorm {
  const float* weight = nullptr;
  const float* bias = nullptr;
};

struct StoredBlock {
  StoredNorm attention_norm, mlp_norm;
  StoredLinear q, k, v, o, gate, up, down;
  std::size_t window = 0;
};

// The families' shapes at toy sizes.
enum class Family { llama, gpt2, bert };

struct ModelSpec {
  Family family = Family::llama;
  std::size_t layers = 2, hidden = 16, heads = 4, kv_heads = 2, head_dim = 4, intermediate = 24, vocab = 40;
  std::size_t max_positions = 64, type_vocab = 2, rope_dim = 4;
  bool tied = false, biases = false;
  std::vector<std::size_t> windows;  // per layer (empty: none)
  unsigned seed = 1;
};

class TestModel {
 public:
  explicit TestModel(const ModelSpec& spec);
  TestModel(const TestModel&) = delete;
  TestModel& operator=(const TestModel&) = delete;

  const wa::ModelConfig& config() const { return config_; }
  // Every part handed over; ASSERTs inside.
  void build(wa::Model& model) const;

  // The float64 evaluation of ids (positions 0 …, token types or zeros): logits [T, vocab] (empty
  // without a head), hidden [T, hidden], attention[l] [heads, T, T], and hidden_states [layers + 1]
  // of [T, hidden] as transformers' output_hidden_states: the embedding output, each layer's input,
  // then `hidden`.
  struct Result {
    std::vector<double> logits, hidden;
    std::vector<std::vector<double>> attention, hidden_states;
  };
  Result reference(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& types = {}) const;

 private:
  std::vector<float>& store(std::size_t n, float scale, float offset = 0.0f);
  StoredLinear linear(std::size_t out, std::size_t in, bool bias, wa::Layout layout);
  StoredNorm norm(bool bias);
  std::vector<double> norm_rows(const std::vector<double>& x, std::size_t rows, const StoredNorm& n) const;
  std::vector<double> apply(const StoredLinear& l, const std::vector<double>& x, std::size_t rows) const;
  double act(double x) const;

  ModelSpec spec_;
  wa::ModelConfig config_;
  std::vector<double> inverse_frequencies_;
  std::vector<std::vector<float>> arrays_;  // every stored tensor (stable addresses: reserved up front)
  const float *tokens_ = nullptr, *positions_ = nullptr, *types_ = nullptr;
  StoredNorm embedding_norm_, final_norm_, transform_norm_;
  std::vector<StoredBlock> blocks_;
  StoredLinear lm_, transform_;
};

}  // namespace wa_test
