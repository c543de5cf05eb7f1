// The C++ API of wasm-attention: plain pointers and sizes, no Emscripten.
//
// One layer type serves both public functions:
//   selfAttention       = 1 head of width dK (dV for values), no output projection
//   multiHeadAttention  = numHeads heads of embedDim/numHeads, output projection
//
// Layouts (row-major, batch first):
//   query [batch, tgt_len, q_in]   key [batch, src_len, k_in]   value [batch, src_len, v_in]
//   wq [heads·head_dim_qk, q_in]   wk [heads·head_dim_qk, k_in]   wv [heads·head_dim_v, v_in]
//   wo [out_dim, heads·head_dim_v] (nn.Linear: y = x·Wᵀ + b)
//   output [batch, tgt_len, out_dim or heads·head_dim_v]
//   weights [batch, heads, tgt_len, src_len], or [batch, tgt_len, src_len] when averaged
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffer.h"

namespace wa {

enum class Status : int { ok = 0, invalid_argument = 1, out_of_memory = 2 };

struct LayerConfig {
  std::size_t q_in = 0, k_in = 0, v_in = 0;
  std::size_t num_heads = 1, head_dim_qk = 0, head_dim_v = 0;
  bool out_projection = false;  // out_dim = heads·head_dim_v when present
};

struct LayerWeights {
  const float* wq = nullptr;
  const float* wk = nullptr;
  const float* wv = nullptr;
  const float* bq = nullptr;  // each bias optional
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* wo = nullptr;  // required when out_projection
  const float* bo = nullptr;
};

enum class MaskKind : int { none = 0, boolean = 1, additive = 2 };

struct Mask {
  MaskKind kind = MaskKind::none;
  const void* data = nullptr;  // uint8_t (1 = masked) or float (added to the scaled score)
  bool per_head = false;       // attn mask [batch·heads, L, S] instead of [L, S]
};

// Optional copies of what happens inside, for teaching (the demo page). Any pointer may be null.
struct Intermediates {
  float* q = nullptr;             // [batch, tgt_len, heads·head_dim_qk]
  float* k = nullptr;             // [batch, src_len, heads·head_dim_qk]
  float* v = nullptr;             // [batch, src_len, heads·head_dim_v]
  float* scores = nullptr;        // [batch, heads, tgt_len, src_len], Q·Kᵀ unscaled
  float* scaled_scores = nullptr; // same shape, scaled and masked (-inf where masked)
  float* attn_output = nullptr;   // [batch, tgt_len, heads·head_dim_v], before the out projection
};

struct ForwardArgs {
  std::size_t batch = 1, tgt_len = 0, src_len = 0;
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  Mask attn_mask;
  Mask key_padding_mask;  // [batch, src_len]
  bool is_causal = false;  // key j > query i is masked
  float scale = 0.0f;
  float* output = nullptr;
  float* weights = nullptr;  // null: no weights wanted
  bool average_weights = true;
  Intermediates* intermediates = nullptr;
};

// The sizes of one forward, without its data: what the size functions below need.
struct ForwardShape {
  std::size_t batch = 1, tgt_len = 0, src_len = 0;
  bool weights = false;        // attention weights wanted (ForwardArgs::weights non-null)
  bool average_weights = true;
  bool intermediates = false;  // ForwardArgs::intermediates non-null
};

ForwardShape shape_of(const ForwardArgs& args);

// What a caller allocates for one forward (counts in floats) and what the forward allocates
// itself (workspace, bytes). The binding checks these against the memory limit before it
// allocates anything, so the one formula lives here, beside the code that allocates.
struct ForwardSizes {
  std::size_t output = 0;   // [batch, tgt_len, out_dim]
  std::size_t weights = 0;  // 0 when not wanted
  std::size_t q = 0, k = 0, v = 0, scores = 0, attn_output = 0;  // intermediates; 0 when not wanted
  std::size_t workspace_bytes = 0;
};

struct Scratch;

// Weights copied and packed for the GEMM kernel once.
class Layer {
 public:
  Status init(const LayerConfig& config, const LayerWeights& weights);
  // Status::ok, invalid_argument or out_of_memory. A NaN or ±Inf in the inputs propagates as
  // IEEE arithmetic says: a query row is NaN wherever a float64 evaluation is; a key that is masked
  // for a query (by a mask, −inf in a float mask, or causality) takes no part in that row.
  Status forward(const ForwardArgs& args) const;
  const LayerConfig& config() const { return config_; }

  // Bytes init allocates for the packed weights of a layer of this configuration.
  static std::size_t weights_bytes(const LayerConfig& config);
  // Bytes forward allocates (its scratch), with the thread count now in use.
  static std::size_t workspace_bytes(const LayerConfig& config, const ForwardShape& shape);
  static ForwardSizes forward_sizes(const LayerConfig& config, const ForwardShape& shape);

  struct Projection {
    FloatBuffer packed;  // per head: panels of that head's rows of W
    FloatBuffer bias;    // heads·width, zeros when the layer has no bias
    std::size_t width = 0, in = 0, head_stride = 0;
  };

 private:
  void project_head(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s) const;
  void attend_head(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s, float* attn_out) const;
  void attend_head_fused(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s, float* attn_out) const;
  void store_weights(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t i, const float* row,
                     std::size_t keys) const;
  void project_output(std::size_t rows, Scratch& s, float* rows_inout) const;
  void add_nonfinite_values(const ForwardArgs& a, std::size_t b, std::size_t h, const Scratch& s, std::size_t i0,
                            std::size_t rows, std::size_t j0, std::size_t keys, const float* p, std::size_t ldp,
                            const bool* attends, float* out, std::size_t ldo) const;

  LayerConfig config_;
  Projection q_, k_, v_, o_;
};

}  // namespace wa
