// The model functions of the module (src/model/, for lib/model/ through model-calls.mjs): a model made part by
// part from weights the wrapper copies into the heap one part at a time, its forward, its KV caches,
// and the sizes the wrapper checks against the memory limit before it allocates.
//
// Arguments travel as in embind.cpp (wire.h): one block of 32-bit slots (pointers, sizes, flags, float bits),
// named by WA_MODEL_SLOTS and read by JavaScript through modelSlots(). Failures return a status.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <new>

#include "../src/model/model.h"
#include "../src/parallel.h"
#include "wire.h"

namespace {

// A linear layer's four slots: weight, bias, layout (0 [out, in], 1 [in, out]), row stride (0 dense).
#define WA_LINEAR(X, name) X(name##_weight) X(name##_bias) X(name##_layout) X(name##_ld)

// clang-format off
#define WA_MODEL_SLOTS(X)                                                                                  \
  X(status)                                                                                                \
  /* the configuration (createModel, modelWeightsBytes) */                                                 \
  X(num_layers) X(hidden) X(num_heads) X(num_kv_heads) X(head_dim) X(intermediate) X(vocab)                \
  X(max_positions) X(type_vocab) X(norm) X(post_norm) X(norm_eps) X(activation) X(gated_mlp)               \
  X(learned_positions) X(rope_dim) X(inverse_frequencies) X(causal) X(attention_scale) X(final_norm)       \
  X(embedding_norm) X(head) X(tied_head) X(weight_dtype)                                                   \
  /* the embeddings (modelSetEmbeddings) */                                                                \
  X(tokens) X(positions) X(token_types) X(embedding_norm_weight) X(embedding_norm_bias)                    \
  /* a block (modelSetBlock) */                                                                            \
  X(layer) X(attention_norm_weight) X(attention_norm_bias) X(mlp_norm_weight) X(mlp_norm_bias)             \
  WA_LINEAR(X, q) WA_LINEAR(X, k) WA_LINEAR(X, v) WA_LINEAR(X, o)                                          \
  WA_LINEAR(X, gate) WA_LINEAR(X, up) WA_LINEAR(X, down) X(sliding_window)                                 \
  /* the head (modelSetHead) */                                                                            \
  X(final_norm_weight) X(final_norm_bias) WA_LINEAR(X, lm) WA_LINEAR(X, transform)                         \
  X(transform_norm_weight) X(transform_norm_bias)                                                          \
  /* a forward (modelForward, modelForwardBytes) */                                                        \
  X(cache) X(ids) X(token_count) X(token_type_ids) X(logits_mode) X(logits) X(hidden_out) X(attention)     \
  X(heads) X(head_count) X(hidden_states) X(cached) X(cache_length) X(capture) X(cache_dtype)

WA_DEFINE_SLOTS(WA_MODEL_SLOTS, modelSlots)
// clang-format on

using wa_wire::f32;
using wa_wire::ptr;
using wa_wire::Wire;
using wa_wire::wire_of;

wa::ModelConfig model_config(Wire w) {
  wa::ModelConfig c;
  c.num_layers = w[slot_num_layers];
  c.hidden = w[slot_hidden];
  c.num_heads = w[slot_num_heads];
  c.num_kv_heads = w[slot_num_kv_heads];
  c.head_dim = w[slot_head_dim];
  c.intermediate = w[slot_intermediate];
  c.vocab = w[slot_vocab];
  c.max_positions = w[slot_max_positions];
  c.type_vocab = w[slot_type_vocab];
  c.norm = static_cast<wa::NormKind>(w[slot_norm]);
  c.post_norm = w[slot_post_norm] != 0;
  c.norm_eps = f32(w, slot_norm_eps);
  c.activation = static_cast<wa::Activation>(w[slot_activation]);
  c.gated_mlp = w[slot_gated_mlp] != 0;
  c.learned_positions = w[slot_learned_positions] != 0;
  c.rope_dim = w[slot_rope_dim];
  c.inverse_frequencies = ptr<const double>(w, slot_inverse_frequencies);
  c.causal = w[slot_causal] != 0;
  c.attention_scale = f32(w, slot_attention_scale);
  c.final_norm = w[slot_final_norm] != 0;
  c.embedding_norm = w[slot_embedding_norm] != 0;
  c.head = static_cast<wa::HeadKind>(w[slot_head]);
  c.tied_head = w[slot_tied_head] != 0;
  c.weight_dtype = static_cast<wa::WeightDtype>(w[slot_weight_dtype]);  // checked by Model::init
  return c;
}

wa::LinearSource linear(Wire w, Slot weight) {
  wa::LinearSource s;
  s.weight = ptr<const float>(w, weight);
  s.bias = ptr<const float>(w, weight + 1);
  s.layout = w[weight + 2] ? wa::Layout::in_out : wa::Layout::out_in;
  s.ld = w[weight + 3];
  return s;
}

wa::NormWeights norm(Wire w, Slot weight, Slot bias) {
  return {ptr<const float>(w, weight), ptr<const float>(w, bias)};
}

wa::Model& model_of(std::uintptr_t handle) { return *reinterpret_cast<wa::Model*>(handle); }

// Packing may run on every thread; the workers then rest (the next part is a while away).
int rested(wa::Status s) {
  wa::parallel_rest();
  return static_cast<int>(s);
}

// A model of the staged configuration, its parts not yet set: its handle, or 0 with the reason in
// the status slot.
std::uintptr_t createModel(std::uintptr_t wire) {
  return wa_wire::create<wa::Model>(wire, slot_status,
                                    [](Wire w, wa::Model& model) { return model.init(model_config(w)); });
}

double modelWeightsBytes(std::uintptr_t wire) { return wa::Model::weights_bytes(model_config(wire_of(wire))); }

int modelSetEmbeddings(std::uintptr_t handle, std::uintptr_t wire) {
  Wire w = wire_of(wire);
  wa::EmbeddingWeights e;
  e.tokens = ptr<const float>(w, slot_tokens);
  e.positions = ptr<const float>(w, slot_positions);
  e.token_types = ptr<const float>(w, slot_token_types);
  e.norm = norm(w, slot_embedding_norm_weight, slot_embedding_norm_bias);
  return rested(model_of(handle).set_embeddings(e));
}

int modelSetBlock(std::uintptr_t handle, std::uintptr_t wire) {
  Wire w = wire_of(wire);
  wa::BlockWeights b;
  b.attention_norm = norm(w, slot_attention_norm_weight, slot_attention_norm_bias);
  b.mlp_norm = norm(w, slot_mlp_norm_weight, slot_mlp_norm_bias);
  b.q = linear(w, slot_q_weight);
  b.k = linear(w, slot_k_weight);
  b.v = linear(w, slot_v_weight);
  b.o = linear(w, slot_o_weight);
  b.gate = linear(w, slot_gate_weight);
  b.up = linear(w, slot_up_weight);
  b.down = linear(w, slot_down_weight);
  b.sliding_window = w[slot_sliding_window];
  return rested(model_of(handle).set_block(w[slot_layer], b));
}

int modelSetHead(std::uintptr_t handle, std::uintptr_t wire) {
  Wire w = wire_of(wire);
  wa::HeadWeights h;
  h.final_norm = norm(w, slot_final_norm_weight, slot_final_norm_bias);
  h.lm = linear(w, slot_lm_weight);
  h.transform = linear(w, slot_transform_weight);
  h.transform_norm = norm(w, slot_transform_norm_weight, slot_transform_norm_bias);
  return rested(model_of(handle).set_head(h));
}

bool modelReady(std::uintptr_t handle) { return model_of(handle).ready(); }

void destroyModel(std::uintptr_t handle) { delete reinterpret_cast<wa::Model*>(handle); }

double modelForwardBytes(std::uintptr_t handle, std::uintptr_t wire) {
  Wire w = wire_of(wire);
  wa::ModelForwardShape f;
  f.tokens = w[slot_token_count];
  f.cached = w[slot_cached] != 0;
  f.cache_dtype = static_cast<wa::KvDtype>(w[slot_cache_dtype]);
  f.cache_length = w[slot_cache_length];
  f.capture = w[slot_capture] != 0;
  return model_of(handle).forward_bytes(f);
}

int modelForward(std::uintptr_t handle, std::uintptr_t wire) {
  Wire w = wire_of(wire);
  wa::ModelForward f;
  f.ids = ptr<const std::int32_t>(w, slot_ids);
  f.tokens = w[slot_token_count];
  f.token_types = ptr<const std::int32_t>(w, slot_token_type_ids);
  f.cache = ptr<wa::ModelCache>(w, slot_cache);
  f.logits_mode = static_cast<wa::LogitsMode>(w[slot_logits_mode]);
  f.logits = ptr<float>(w, slot_logits);
  f.hidden = ptr<float>(w, slot_hidden_out);
  // [num_layers] heap addresses (0: layer not asked), which are float* in wasm32.
  f.attention = ptr<float* const>(w, slot_attention);
  f.heads = ptr<const std::uint32_t>(w, slot_heads);
  f.head_count = w[slot_head_count];
  // [num_layers + 1] heap addresses (0: that hidden state not asked).
  f.hidden_states = ptr<float* const>(w, slot_hidden_states);
  return static_cast<int>(model_of(handle).forward(f));
}

// A cache of max_length tokens for every layer of the model: its handle, or 0 (out of memory; the
// wrapper checked the length).
// dtype: a wa::KvDtype (0 f32, 1 f16, 2 bf16).
std::uintptr_t createModelCache(std::uintptr_t handle, double max_length, int dtype) {
  auto* cache = new (std::nothrow) wa::ModelCache();
  if (cache && cache->init(model_of(handle), static_cast<std::size_t>(max_length), static_cast<wa::KvDtype>(dtype)) ==
                   wa::Status::ok)
    return reinterpret_cast<std::uintptr_t>(cache);
  delete cache;
  return 0;
}

double modelCacheBytes(std::uintptr_t handle, double max_length, int dtype) {
  return wa::ModelCache::bytes(model_of(handle), static_cast<std::size_t>(max_length), static_cast<wa::KvDtype>(dtype));
}

double modelCacheLength(std::uintptr_t cache) {
  return static_cast<double>(reinterpret_cast<const wa::ModelCache*>(cache)->length());
}

void modelCacheTruncate(std::uintptr_t cache, double length) {
  reinterpret_cast<wa::ModelCache*>(cache)->truncate(static_cast<std::size_t>(length));
}

void destroyModelCache(std::uintptr_t cache) { delete reinterpret_cast<wa::ModelCache*>(cache); }

}  // namespace

EMSCRIPTEN_BINDINGS(wasm_attention_models) {
  emscripten::function("modelSlots", &modelSlots);
  emscripten::function("createModel", &createModel);
  emscripten::function("modelWeightsBytes", &modelWeightsBytes);
  emscripten::function("modelSetEmbeddings", &modelSetEmbeddings);
  emscripten::function("modelSetBlock", &modelSetBlock);
  emscripten::function("modelSetHead", &modelSetHead);
  emscripten::function("modelReady", &modelReady);
  emscripten::function("destroyModel", &destroyModel);
  emscripten::function("modelForwardBytes", &modelForwardBytes);
  emscripten::function("modelForward", &modelForward);
  emscripten::function("createModelCache", &createModelCache);
  emscripten::function("modelCacheBytes", &modelCacheBytes);
  emscripten::function("modelCacheLength", &modelCacheLength);
  emscripten::function("modelCacheTruncate", &modelCacheTruncate);
  emscripten::function("destroyModelCache", &destroyModelCache);
}
