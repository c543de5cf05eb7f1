// One transformer layer over the hidden rows x, in place:
//   pre-norm   x += attention(norm₁(x));  x += mlp(norm₂(x))       (Llama, Mistral, Qwen2, GPT-2)
//   post-norm  x = norm₁(x + attention(x));  x = norm₂(x + mlp(x))  (BERT)
// The attention is the engine's prepared layer (wa::Layer: Q/K/V/O projections, GQA, RoPE, window),
// reading and appending to the layer's KV cache when there is one.
#pragma once

#include <cstddef>

#include "../attention.h"
#include "mlp.h"
#include "model-config.h"
#include "norm.h"

namespace wa {

// A block's working memory (model.cpp carves it from one arena per forward).
struct BlockScratch {
  float* h = nullptr;        // [rows, hidden]: the normed input of a sublayer
  float* a = nullptr;        // [rows, hidden]: the attention's output
  float* mlp = nullptr;      // Mlp::scratch_floats(rows)
  float* weights = nullptr;  // [heads, rows, keys]: the attention weights asked for, or null
};

// One call of a block: rows tokens at positions pos0, pos0 + 1, …; with a cache, pos0 is its length.
struct BlockStep {
  std::size_t rows = 0, pos0 = 0;
  KvCache* cache = nullptr;
};

class Block {
 public:
  Status init(const ModelConfig& config, const BlockWeights& weights);
  static double bytes(const ModelConfig& config);
  bool ready() const { return ready_; }
  const Layer& attention() const { return attention_; }

  // Out of memory (the attention's scratch) leaves x partly updated and the cache as it was or one
  // call longer: the model truncates caches back itself.
  Status forward(const BlockStep& step, float* x, const BlockScratch& s) const;

 private:
  Status attend(const BlockStep& step, const float* in, const BlockScratch& s) const;
  Plan plan(const ForwardArgs& args) const;

  Norm attention_norm_, mlp_norm_;
  Layer attention_;
  Mlp mlp_;
  bool post_norm_ = false, causal_ = true, ready_ = false;
  float scale_ = 0.0f;
};

}  // namespace wa
