// The graph of a forward: embedding, every block (with its KV cache), the head; and the parts'
// assembly and sizes.
#include "model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "../attention/plan.h"
#include "../parallel.h"
#include "mlp.h"

namespace wa {
namespace {

bool valid_config(const ModelConfig& c) {
  return c.num_layers && c.hidden && c.num_heads && c.num_kv_heads && c.num_heads % c.num_kv_heads == 0 && c.head_dim &&
         c.intermediate && c.vocab && c.rope_dim % 2 == 0 && c.rope_dim <= c.head_dim &&
         (!c.rope_dim || c.inverse_frequencies) && (!c.learned_positions || c.max_positions) &&
         std::isfinite(c.attention_scale) && c.norm_eps >= 0.0f &&
         (c.head != HeadKind::mlm || c.norm == NormKind::layer) && (!c.tied_head || c.head != HeadKind::none) &&
         valid_weight_dtype(c.weight_dtype);
}

// A forward's working memory, carved from one allocation.
struct Workspace {
  FloatBuffer arena;
  float* x = nullptr;  // [tokens, hidden]: the residual stream
  BlockScratch block;
  float* head = nullptr;
  float* hidden = nullptr;  // [tokens, hidden] when the caller wants none back
};

struct WorkspaceSizes {
  double x, h, a, mlp, weights, head, hidden;
  double total() const {
    double t = 0;
    for (double f : {x, h, a, mlp, weights, head, hidden}) t += aligned_floats(static_cast<std::size_t>(f));
    return t;
  }
};

WorkspaceSizes workspace_sizes(const ModelConfig& c, const ModelForwardShape& f, bool hidden_given) {
  const double T = static_cast<double>(f.tokens), E = static_cast<double>(c.hidden);
  const double keys = static_cast<double>(f.cache_length + f.tokens);
  WorkspaceSizes z;
  z.x = T * E;
  z.h = T * E;
  z.a = T * E;
  z.mlp = Mlp::scratch_floats(c, f.tokens);
  z.weights = f.capture ? static_cast<double>(c.num_heads) * T * keys : 0;
  z.head = Head::scratch_floats(c, f.tokens);
  z.hidden = hidden_given ? 0 : T * E;
  return z;
}

bool allocate(Workspace& w, const WorkspaceSizes& z) {
  const double total = z.total();
  if (!(total <= static_cast<double>(SIZE_MAX / sizeof(float) / 2)) ||
      !w.arena.allocate(static_cast<std::size_t>(total)))
    return false;
  float* next = w.arena.get();
  const auto carve = [&](double floats) {
    float* p = floats > 0 ? next : nullptr;
    next += aligned_floats(static_cast<std::size_t>(floats));
    return p;
  };
  w.x = carve(z.x);
  w.block.h = carve(z.h);
  w.block.a = carve(z.a);
  w.block.mlp = carve(z.mlp);
  w.block.weights = carve(z.weights);
  w.head = carve(z.head);
  w.hidden = carve(z.hidden);
  return true;
}

}  // namespace

Status Model::init(const ModelConfig& c) {
  if (!valid_config(c)) return Status::invalid_argument;
  config_ = c;
  config_.inverse_frequencies = nullptr;
  if (c.rope_dim) {
    if (!inverse_frequencies_.allocate(c.rope_dim / 2)) return Status::out_of_memory;
    std::memcpy(inverse_frequencies_.get(), c.inverse_frequencies, c.rope_dim / 2 * sizeof(double));
    config_.inverse_frequencies = inverse_frequencies_.get();
  }
  blocks_.reset(new (std::nothrow) Block[c.num_layers]);
  block_set_.reset(new (std::nothrow) bool[c.num_layers]());
  if (!blocks_ || !block_set_) return Status::out_of_memory;
  return Status::ok;
}

Status Model::set_embeddings(const EmbeddingWeights& w) {
  if (!blocks_ || embeddings_set_) return Status::invalid_argument;
  if (config_.tied_head) {
    if (!w.tokens) return Status::invalid_argument;
    const Status s = head_.init_table(config_, w.tokens);
    if (s != Status::ok) return s;
  }
  const Status s = embedding_.init(config_, w, config_.tied_head ? &head_.table() : nullptr);
  embeddings_set_ = s == Status::ok;
  return s;
}

Status Model::set_block(std::size_t layer, const BlockWeights& w) {
  if (!blocks_ || layer >= config_.num_layers || block_set_[layer]) return Status::invalid_argument;
  const Status s = blocks_[layer].init(config_, w);
  block_set_[layer] = s == Status::ok;
  return s;
}

Status Model::set_head(const HeadWeights& w) {
  if (!blocks_ || head_set_ || (config_.tied_head && !embeddings_set_)) return Status::invalid_argument;
  const Status s = head_.init(config_, w);
  head_set_ = s == Status::ok;
  return s;
}

bool Model::ready() const {
  if (!blocks_ || !embeddings_set_ || !head_set_) return false;
  for (std::size_t l = 0; l < config_.num_layers; ++l)
    if (!block_set_[l]) return false;
  return true;
}

double Model::weights_bytes(const ModelConfig& c) {
  return Embedding::bytes(c) + static_cast<double>(c.num_layers) * Block::bytes(c) + Head::bytes(c);
}

double Model::forward_bytes(const ModelForwardShape& f) const {
  const ModelConfig& c = config_;
  double bytes = workspace_sizes(c, f, false).total() * sizeof(float);
  // The attention's own scratch, of the largest of its calls (weights asked: both are made).
  ForwardShape shape;
  shape.tgt_len = f.tokens;
  shape.src_len = f.cache_length + f.tokens;
  shape.cached = f.cached;
  shape.cache_dtype = f.cache_dtype;
  const LayerConfig lc = attention_config(c, 0);
  double layer = Layer::workspace_bytes(lc, shape);
  if (f.capture) {
    shape.weights = true;
    shape.average_weights = false;
    layer = std::max(layer, Layer::workspace_bytes(lc, shape));
  }
  return bytes + layer;
}

Status Model::check(const ModelForward& r) const {
  const ModelConfig& c = config_;
  if (!ready() || !r.ids || r.tokens == 0) return Status::invalid_argument;
  for (std::size_t t = 0; t < r.tokens; ++t) {
    if (r.ids[t] < 0 || static_cast<std::size_t>(r.ids[t]) >= c.vocab) return Status::invalid_argument;
    if (r.token_types && (r.token_types[t] < 0 || static_cast<std::size_t>(r.token_types[t]) >= c.type_vocab))
      return Status::invalid_argument;
  }
  const ModelCache* cache = r.cache;
  const std::size_t pos0 = cache ? cache->length() : 0;
  if (cache && (!c.causal || cache->layers() != c.num_layers || pos0 + r.tokens > cache->max_length() ||
                !cache->layer(0).fits(cache_layer_config())))
    return Status::invalid_argument;
  if (c.learned_positions && pos0 + r.tokens > c.max_positions) return Status::invalid_argument;
  if (r.logits_mode != LogitsMode::none && c.head != HeadKind::none && !r.logits) return Status::invalid_argument;
  if (r.attention)
    for (std::size_t i = 0; i < r.head_count; ++i)
      if (!r.heads || r.heads[i] >= c.num_heads) return Status::invalid_argument;
  return Status::ok;
}

Status Model::forward(const ModelForward& r) const {
  const Status valid = check(r);
  if (valid != Status::ok) return valid;
  const ModelConfig& c = config_;
  const std::size_t T = r.tokens, pos0 = r.cache ? r.cache->length() : 0, keys = pos0 + T;
  bool capture = false;
  for (std::size_t l = 0; r.attention && l < c.num_layers; ++l) capture = capture || r.attention[l];
  ModelForwardShape shape;
  shape.tokens = T;
  shape.cached = r.cache != nullptr;
  if (r.cache) shape.cache_dtype = r.cache->dtype();
  shape.cache_length = pos0;
  shape.capture = capture;
  // Sleeping workers wake while the workspace is allocated and the embedding and first norm run:
  // a decode step's first products then find them polling. Not for a step too small for any of its
  // products to split, or while the pool is contended (a woken worker would only spin).
  const double largest_product = static_cast<double>(T) * static_cast<double>(c.hidden) *
                                 static_cast<double>(std::max((c.gated_mlp ? 2 : 1) * c.intermediate, c.vocab));
  if (threads_once_awake(largest_product) > 1) parallel_wake();
  Workspace w;
  if (!allocate(w, workspace_sizes(c, shape, r.hidden != nullptr))) return Status::out_of_memory;
  // A hidden state asked for is copied out as the stream passes: no second pass, nothing kept.
  const auto keep = [&](std::size_t entry, const float* rows) {
    if (r.hidden_states && r.hidden_states[entry])
      std::memcpy(r.hidden_states[entry], rows, T * c.hidden * sizeof(float));
  };
  embedding_.forward(r.ids, r.token_types, T, pos0, w.x);
  keep(0, w.x);
  Status status = Status::ok;
  for (std::size_t l = 0; l < c.num_layers && status == Status::ok; ++l) {
    BlockStep step;
    step.rows = T;
    step.pos0 = pos0;
    step.cache = r.cache ? &r.cache->layer(l) : nullptr;
    BlockScratch s = w.block;
    float* out = r.attention ? r.attention[l] : nullptr;
    if (!out) s.weights = nullptr;
    status = blocks_[l].forward(step, w.x, s);
    // [heads, T, keys] of the layer → the heads asked, in their order.
    for (std::size_t i = 0; out && status == Status::ok && i < r.head_count; ++i)
      std::memcpy(out + i * T * keys, s.weights + r.heads[i] * T * keys, T * keys * sizeof(float));
    if (status == Status::ok && l + 1 < c.num_layers) keep(l + 1, w.x);
  }
  if (status != Status::ok) {
    if (r.cache) r.cache->truncate(pos0);
    parallel_rest();
    return status;
  }
  float* hidden = r.hidden ? r.hidden : w.hidden;
  head_.forward(w.x, T, r.logits_mode, hidden, r.logits, w.head);
  keep(c.num_layers, hidden);
  parallel_rest();
  return Status::ok;
}

Status ModelCache::init(const Model& model, std::size_t max_length, KvDtype dtype) {
  const std::size_t layers = model.config().num_layers;
  if (max_length == 0 || !model.config().causal) return Status::invalid_argument;
  caches_.reset(new (std::nothrow) KvCache[layers]);
  if (!caches_) return Status::out_of_memory;
  layers_ = layers;
  max_length_ = max_length;
  dtype_ = dtype;
  const LayerConfig lc = model.cache_layer_config();
  for (std::size_t l = 0; l < layers; ++l) {
    const Status s = caches_[l].init(lc, 1, max_length, dtype);
    if (s != Status::ok) return s;
  }
  return Status::ok;
}

double ModelCache::bytes(const Model& model, std::size_t max_length, KvDtype dtype) {
  return static_cast<double>(model.config().num_layers) *
         KvCache::bytes(model.cache_layer_config(), 1, max_length, dtype);
}

void ModelCache::truncate(std::size_t n) {
  for (std::size_t l = 0; l < layers_; ++l) caches_[l].truncate(n);
}

}  // namespace wa
