// A whole transformer in the engine (docs/API.md, "Models"): token ids → embedding → blocks of
// attention and MLP → final norm → LM head → logits, in one call, the hidden state kept in engine
// memory from layer to layer. One graph serves the families of lib/model/config.mjs:
//   llama, mistral, qwen2  pre-norm RMSNorm, RoPE (any inverse frequencies), GQA, SwiGLU MLP
//   gpt2                   learned positions, pre-norm LayerNorm, GELU MLP, biases everywhere
//   bert                   post-norm LayerNorm, token types, bidirectional, the masked-LM head
//
// A model is made in steps so that its weights pass through memory one part at a time (a caller
// copies a part's tensors in, hands them over, frees them): init (the configuration), then
// set_embeddings, set_block for every layer and set_head, each packing what it is given; the
// embeddings come before the head (a tied head is the token table they pack).
//
// Layouts: hidden rows [tokens, hidden] (hidden states too); logits [tokens, vocab] (or [vocab], the last token's);
// attention weights of a layer [heads asked, tokens, keys], keys = the cache's length after the call
// (tokens without a cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "../attention.h"
#include "../buffer.h"
#include "block.h"
#include "embedding.h"
#include "head.h"
#include "model-config.h"

namespace wa {

class ModelCache;

// What one forward reads and writes; pointers the caller owns.
struct ModelForward {
  const std::int32_t* ids = nullptr;          // [tokens], each in [0, vocab)
  std::size_t tokens = 0;                     // > 0
  const std::int32_t* token_types = nullptr;  // [tokens] in [0, type_vocab) (BERT); null: zeros
  ModelCache* cache = nullptr;                // decoders: appended to, positions continue from its length
  LogitsMode logits_mode = LogitsMode::all;
  float* logits = nullptr;  // [tokens or 1, vocab] unless logits_mode is none or the model has no head
  float* hidden = nullptr;  // [tokens, hidden] (optional): after the final norm (BERT: the last layer's output)
  // [num_layers + 1] pointers, or null: hidden_states[i] non-null receives a copy of the residual stream
  // [tokens, hidden] as transformers' output_hidden_states gives it: 0 the embedding output (after
  // BERT's embedding LayerNorm), l the input of layer l, num_layers the same rows as `hidden` (after
  // the final norm: transformers replaces the last layer's output with the normed one).
  float* const* hidden_states = nullptr;
  // [num_layers] pointers, or null: attention[l] non-null asks for layer l's weights, of the query
  // heads heads[0 … head_count) in that order, into [head_count, tokens, keys].
  float* const* attention = nullptr;
  const std::uint32_t* heads = nullptr;
  std::size_t head_count = 0;
};

// The sizes of a forward, for the memory its caller must find before it calls.
struct ModelForwardShape {
  std::size_t tokens = 0;
  bool cached = false;
  std::size_t cache_length = 0;        // tokens the cache holds before the call
  bool capture = false;                // some layer's attention asked
  KvDtype cache_dtype = KvDtype::f32;  // how the cache stores K and V (last: shapes are brace-initialised)
};

class Model {
 public:
  Status init(const ModelConfig& config);
  Status set_embeddings(const EmbeddingWeights& weights);
  Status set_block(std::size_t layer, const BlockWeights& weights);
  Status set_head(const HeadWeights& weights);
  // Every part given.
  bool ready() const;

  // Status::invalid_argument (an id, token type or position out of range, a cache that is not this
  // model's or too short, a part missing) or out_of_memory change nothing: a cache keeps its length.
  Status forward(const ModelForward& request) const;

  const ModelConfig& config() const { return config_; }
  // The attention of layer 0 as a KV cache needs it (every layer's has the same sizes).
  LayerConfig cache_layer_config() const { return attention_config(config_, 0); }

  // Bytes the model's weights take once every part is set (in double: nothing wraps in wasm32), and
  // the most any single set_* call allocates besides (a transposed copy of a projection).
  static double weights_bytes(const ModelConfig& config);
  // Bytes a forward of this shape allocates (its working memory, outputs not included).
  double forward_bytes(const ModelForwardShape& shape) const;

 private:
  Status check(const ModelForward& r) const;

  ModelConfig config_;
  DoubleBuffer inverse_frequencies_;  // config_.inverse_frequencies points here
  Embedding embedding_;
  Head head_;
  std::unique_ptr<Block[]> blocks_;
  std::unique_ptr<bool[]> block_set_;
  bool embeddings_set_ = false, head_set_ = false;
};

// One KV cache per layer, one length: what a session of a decoder keeps between forwards.
class ModelCache {
 public:
  Status init(const Model& model, std::size_t max_length, KvDtype dtype = KvDtype::f32);
  static double bytes(const Model& model, std::size_t max_length, KvDtype dtype = KvDtype::f32);
  KvDtype dtype() const { return dtype_; }
  std::size_t length() const { return layers_ ? caches_[0].length() : 0; }
  std::size_t max_length() const { return max_length_; }
  std::size_t layers() const { return layers_; }
  void truncate(std::size_t n);
  KvCache& layer(std::size_t l) const { return caches_[l]; }

 private:
  std::unique_ptr<KvCache[]> caches_;
  std::size_t layers_ = 0, max_length_ = 0;
  KvDtype dtype_ = KvDtype::f32;
};

}  // namespace wa
