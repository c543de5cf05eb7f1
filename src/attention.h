// The C++ API of wasm-attention: plain pointers and sizes, no Emscripten.
//
// One layer type serves both public functions:
//   selfAttention       = 1 head of width dK (dV for values), no output projection
//   multiHeadAttention  = numHeads heads of embedDim/numHeads, output projection
//
// Layouts (row-major, batch first):
//   query [batch, tgt_len, q_in]   key [batch, src_len, k_in]   value [batch, src_len, v_in]
//   wq [heads·head_dim_qk, q_in]   wk [num_kv_heads·head_dim_qk, k_in]   wv [num_kv_heads·head_dim_v, v_in]
//   wo [out_dim, heads·head_dim_v] (nn.Linear: y = x·Wᵀ + b)
//   output [batch, tgt_len, out_dim or heads·head_dim_v]
//   weights [batch, heads, tgt_len, src_len], or [batch, tgt_len, src_len] when averaged
//
// Decoder features: query head h reads K/V head ⌊h·num_kv_heads/heads⌋ (grouped-query attention); query
// i sits at position position_offset + i, key j at j; RoPE rotates Q and K by those positions;
// ALiBi adds slope_h·(j − pos(i)) to the scaled score; a sliding window w masks key j when
// pos(i) − j ≥ w. A KvCache holds the projected (rotated) K and V of earlier tokens.
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffer.h"
#include "kernels/packed-matrix.h"
#include "kernels/weight-dtype.h"

namespace wa {

enum class Status : int { ok = 0, invalid_argument = 1, out_of_memory = 2 };

// How a KV cache stores K and V: float32, or rounded to nearest-even in binary16 / bfloat16.
enum class KvDtype : int { f32 = 0, f16 = 1, bf16 = 2 };

struct RopeConfig {
  std::size_t dim = 0;  // 0: no rotary embedding; else even, ≤ head_dim_qk
  double base = 10000.0;
  bool interleaved = false;
  // dim/2 angles per position step, pair k turning by position · inverse_frequencies[k] (a model's
  // scaled RoPE: linear, llama3). Null: base^(−2k/dim). Layer::init copies them; its config() then
  // points at its own copy.
  const double* inverse_frequencies = nullptr;
};

struct LayerConfig {
  std::size_t q_in = 0, k_in = 0, v_in = 0;
  std::size_t num_heads = 1, head_dim_qk = 0, head_dim_v = 0;
  bool out_projection = false;
  std::size_t num_kv_heads = 1;  // divides num_heads: num_heads for multi-head attention, 1 multi-query
  std::size_t out_dim = 0;       // of the out projection; 0: heads·head_dim_v
  RopeConfig rope;
  bool alibi = false;              // slopes from LayerWeights::alibi_slopes, or the paper's
  std::size_t sliding_window = 0;  // 0: none
  // How the projections' weights are stored (prepared layers; a borrowed one-shot layer reads f32).
  WeightDtype weight_dtype = WeightDtype::f32;

  std::size_t attn_width() const { return num_heads * head_dim_v; }
  std::size_t output_width() const { return out_projection && out_dim ? out_dim : attn_width(); }
};

// The K/V head query head h reads: consecutive query heads share one (grouped-query attention).
inline std::size_t kv_head_of(const LayerConfig& c, std::size_t h) { return h / (c.num_heads / c.num_kv_heads); }

struct LayerWeights {
  const float* wq = nullptr;
  const float* wk = nullptr;
  const float* wv = nullptr;
  const float* bq = nullptr;  // each bias optional
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* wo = nullptr;  // required when out_projection
  const float* bo = nullptr;
  const float* alibi_slopes = nullptr;  // [num_heads]; null with alibi: the paper's slopes
};

enum class MaskKind : int { none = 0, boolean = 1, additive = 2 };

struct Mask {
  MaskKind kind = MaskKind::none;
  const void* data = nullptr;  // uint8_t (1 = masked) or float (added to the scaled score)
  bool per_head = false;       // attn mask [batch·heads, L, S] instead of [L, S]
};

// Optional copies of what happens inside, for teaching (the demo page). Any pointer may be null.
struct Intermediates {
  float* q = nullptr;              // [batch, tgt_len, heads·head_dim_qk]
  float* k = nullptr;              // [batch, src_len, heads·head_dim_qk]
  float* v = nullptr;              // [batch, src_len, heads·head_dim_v]
  float* scores = nullptr;         // [batch, heads, tgt_len, src_len], Q·Kᵀ unscaled
  float* scaled_scores = nullptr;  // same shape, scaled and masked (-inf where masked)
  float* attn_output = nullptr;    // [batch, tgt_len, heads·head_dim_v], before the out projection
};

class KvCache;

struct ForwardArgs {
  std::size_t batch = 1, tgt_len = 0, src_len = 0;  // with a cache, src_len = its length + tgt_len
  std::size_t position_offset = 0;                  // position of query 0
  KvCache* cache = nullptr;  // K and V then come from query, are appended, and key/value are unused
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  Mask attn_mask;
  Mask key_padding_mask;   // [batch, src_len]
  bool is_causal = false;  // key j > pos(i) is masked
  float scale = 0.0f;
  float* output = nullptr;
  float* weights = nullptr;  // null: no weights wanted
  bool average_weights = true;
  Intermediates* intermediates = nullptr;
};

// The sizes of one forward, without its data: what the size functions below need.
struct ForwardShape {
  std::size_t batch = 1, tgt_len = 0, src_len = 0;
  bool weights = false;  // attention weights wanted (ForwardArgs::weights non-null)
  bool average_weights = true;
  bool intermediates = false;          // ForwardArgs::intermediates non-null
  bool cached = false;                 // ForwardArgs::cache non-null
  KvDtype cache_dtype = KvDtype::f32;  // the cache's: a reduced one widens key tiles into scratch
};

ForwardShape shape_of(const ForwardArgs& args);

// Keys [first, end).
struct KeyRange {
  std::size_t first, end;
};
// The keys that causality and the sliding window leave to some query of rows [i0, i1): the attention
// skips the others (so a windowed forward costs O(L·w), not O(L·S)). first is rounded down to a
// panel of the packed K.
KeyRange attended_keys(const ForwardArgs& args, const LayerConfig& config, std::size_t i0, std::size_t i1);

// How a forward runs, chosen from its shape (and the thread count) once: the binding sizes the
// caller's memory from it and the forward runs on it.
struct Plan {
  bool fused = true;       // no whole score rows: key tiles with a running max and sum
  bool all_heads = false;  // every head projected, then every head attended (else one head at a time)
  bool head_rows = false;  // averaged weights of few rows: each head's rows apart, then summed
  bool parallel = false;
  std::size_t workers = 1;
};
Plan plan_forward(const LayerConfig& config, const ForwardShape& shape);

// What a caller allocates for one forward (counts in floats) and what the forward allocates
// itself (workspace, bytes). The binding checks these against the memory limit before it
// allocates anything, so the one formula lives here, beside the code that allocates. Counted in
// double (exact below 2^53): in wasm32 a size_t wraps at 2^32, and a wrapped size would pass the
// check and be allocated short.
struct ForwardSizes {
  double output = 0;                                        // [batch, tgt_len, out_dim]
  double weights = 0;                                       // 0 when not wanted
  double q = 0, k = 0, v = 0, scores = 0, attn_output = 0;  // intermediates; 0 when not wanted
  double workspace_bytes = 0;
};

struct Scratch;
struct HeadView;
struct BlockRows;
struct HeadRange;
struct KvStore;

// Weights copied and packed for the GEMM kernel once.
class Layer {
 public:
  Status init(const LayerConfig& config, const LayerWeights& weights);
  // A layer for one call with few rows: it reads the weights where they are (they must outlive it)
  // instead of packing them, which would cost about as much as the call's own products.
  Status init_borrowed(const LayerConfig& config, const LayerWeights& weights);
  // Whether a one-shot call of this shape runs faster on borrowed weights than on packed ones.
  static bool borrow_pays(const LayerConfig& config, const ForwardShape& shape);
  // Status::ok, invalid_argument or out_of_memory. A NaN or ±Inf in the inputs propagates as
  // IEEE arithmetic says: a query row is NaN wherever a float64 evaluation is; a key that is masked
  // for a query (by a mask, −inf in a float mask, or causality) takes no part in that row.
  // `plan` must be plan_forward(config(), shape_of(args)), made once for the sizes and the call.
  Status forward(const ForwardArgs& args, const Plan& plan) const;
  Status forward(const ForwardArgs& args) const { return forward(args, plan_forward(config_, shape_of(args))); }
  const LayerConfig& config() const { return config_; }

  // Bytes init allocates for the packed weights of a layer of this configuration.
  static double weights_bytes(const LayerConfig& config);
  // Bytes forward allocates (its scratch) on this plan.
  static double workspace_bytes(const LayerConfig& config, const ForwardShape& shape, const Plan& plan);
  static double workspace_bytes(const LayerConfig& config, const ForwardShape& shape) {
    return workspace_bytes(config, shape, plan_forward(config, shape));
  }
  static ForwardSizes forward_sizes(const LayerConfig& config, const ForwardShape& shape, const Plan& plan);
  static ForwardSizes forward_sizes(const LayerConfig& config, const ForwardShape& shape) {
    return forward_sizes(config, shape, plan_forward(config, shape));
  }

  struct Projection {
    PackedMatrix weights;  // per head: that head's rows of W, packed (or borrowed) once
    FloatBuffer bias;      // heads·width, zeros when the layer has no bias
    std::size_t width = 0, in = 0;
  };

 private:
  // 1. Projection (projection.cpp)
  void project(const ForwardArgs& a, std::size_t b, const HeadRange& r, Scratch& s) const;
  void project_query(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t slot, std::size_t r0,
                     std::size_t rows, Scratch& s) const;
  void project_key(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                   std::size_t rows, Scratch& s) const;
  void project_value(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                     std::size_t rows, Scratch& s) const;
  void project_value16(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                       std::size_t rows, Scratch& s, const KvStore& store) const;
  KvStore kv_store(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, const Scratch& s) const;
  static bool flagged(const Scratch& s, std::size_t slot, std::size_t kv_rows);
  HeadView view_of(const ForwardArgs& a, std::size_t b, std::size_t h, const HeadRange& r, const Scratch& s) const;
  // 2. Attention (attend.cpp, attend-fused.cpp)
  void attend(const ForwardArgs& a, std::size_t b, const HeadRange& r, const Scratch& s, bool fused,
              float* attn_out) const;
  void attend_block(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t blk, std::size_t worker,
                    const Scratch& s, const HeadView& view, float* attn_out) const;
  void attend_block_fused(const ForwardArgs& a, std::size_t b, const BlockRows& rows, std::size_t worker,
                          const Scratch& s, const HeadView& view, float* attn_out) const;
  void store_weights(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t i, const float* row,
                     std::size_t first, std::size_t end, float* head_rows) const;
  void average_head_rows(const ForwardArgs& a, std::size_t b, const Scratch& s) const;
  void add_nonfinite_values(const ForwardArgs& a, std::size_t b, const BlockRows& rows, const HeadView& view,
                            std::size_t j0, std::size_t keys, const float* p, std::size_t ldp, const bool* attends,
                            float* out, std::size_t ldo) const;
  // 3. The out projection (layer.cpp)
  void project_output(std::size_t rows, Scratch& s, const float* in, float* out) const;
  // The weights (weights.cpp)
  Status init_projections(const LayerConfig& config, const LayerWeights& weights, bool borrow);

  LayerConfig config_;
  Projection q_, k_, v_, o_;
  FloatBuffer alibi_;          // [num_heads] slopes when config_.alibi
  DoubleBuffer inverse_freq_;  // [rope.dim / 2] when given: config_.rope.inverse_frequencies points here
};

// The K and V of earlier tokens, for every batch element and K/V head, packed as the attention
// reads them: keys as Q·Kᵀ panels, values as P·V panels (and as rows, for non-finite values).
class KvCache {
 public:
  Status init(const LayerConfig& config, std::size_t batch, std::size_t max_length, KvDtype dtype = KvDtype::f32);
  // What init allocates.
  static double bytes(const LayerConfig& config, std::size_t batch, std::size_t max_length,
                      KvDtype dtype = KvDtype::f32);
  KvDtype dtype() const { return dtype_; }
  std::size_t length() const { return length_; }
  std::size_t batch() const { return batch_; }
  std::size_t max_length() const { return max_length_; }
  void truncate(std::size_t n) { length_ = n < length_ ? n : length_; }
  bool fits(const LayerConfig& config) const;

 private:
  friend class Layer;
  std::size_t num_kv_heads_ = 0, dk_ = 0, dv_ = 0, batch_ = 0, max_length_ = 0, length_ = 0;
  FloatBuffer keys_, values_, value_rows_, nonfinite_;  // nonfinite_: per (batch, K/V head), 0 or 1
  // A reduced cache (dtype_ f16 or bf16) holds keys, values and value rows here instead, in the
  // same layouts, 16 bits each (keys_, values_ and value_rows_ stay empty).
  KvDtype dtype_ = KvDtype::f32;
  AlignedBuffer<std::uint16_t> keys16_, values16_, value_rows16_;
  std::size_t key_floats() const;
  std::size_t value_floats() const;
  float* keys(std::size_t b, std::size_t g) const { return keys_.get() + (b * num_kv_heads_ + g) * key_floats(); }
  float* values(std::size_t b, std::size_t g) const { return values_.get() + (b * num_kv_heads_ + g) * value_floats(); }
  float* value_rows(std::size_t b, std::size_t g) const {
    return value_rows_.get() + (b * num_kv_heads_ + g) * max_length_ * dv_;
  }
  std::uint16_t* keys16(std::size_t b, std::size_t g) const {
    return keys16_.get() + (b * num_kv_heads_ + g) * key_floats();
  }
  std::uint16_t* values16(std::size_t b, std::size_t g) const {
    return values16_.get() + (b * num_kv_heads_ + g) * value_floats();
  }
  std::uint16_t* value_rows16(std::size_t b, std::size_t g) const {
    return value_rows16_.get() + (b * num_kv_heads_ + g) * max_length_ * dv_;
  }
};

}  // namespace wa
