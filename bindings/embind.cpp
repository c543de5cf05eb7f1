// The Embind table of the attention API: a flat table of free functions for bindings/attention-calls.mjs.
//
// Arguments travel as one block of 32-bit slots in the heap (pointers, sizes, flags, a float, a
// double in two slots) written by the JavaScript wrapper: one cheap call instead of dozens of
// converted arguments.
// The slot names come from WA_SLOTS below and reach JavaScript through wireSlots(), so the two
// sides cannot drift apart. Failures return a status code; no C++ exception crosses the boundary.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "../src/attention.h"
#include "../src/kernels/f32-gemm.h"
#include "../src/parallel.h"
#include "wire.h"

namespace {

// One line per group of slots:
// clang-format off
#define WA_SLOTS(X)                                                                                  \
  X(status) X(layer)                                                                                 \
  X(q_in) X(k_in) X(v_in) X(num_heads) X(head_dim_qk) X(head_dim_v) X(out_projection)               \
  X(wq) X(wk) X(wv) X(bq) X(bk) X(bv) X(wo) X(bo)                                                    \
  X(batch) X(tgt_len) X(src_len) X(query) X(key) X(value)                                            \
  X(attn_mask_kind) X(attn_mask) X(attn_mask_per_head) X(key_padding_mask_kind) X(key_padding_mask)  \
  X(is_causal) X(scale) X(output) X(weights) X(average_weights) X(need_weights) X(intermediates)     \
  X(i_q) X(i_k) X(i_v) X(i_scores) X(i_scaled_scores) X(i_attn_output)                               \
  X(num_kv_heads) X(out_dim) X(rope_dim) X(rope_base_lo) X(rope_base_hi) X(rope_interleaved)          \
  X(alibi) X(alibi_slopes) X(sliding_window) X(position_offset) X(cache) X(max_length)                \
  X(cache_dtype) X(weight_dtype)

WA_DEFINE_SLOTS(WA_SLOTS, wireSlots)
// clang-format on

using wa_wire::f32;
using wa_wire::ptr;
using wa_wire::Wire;

wa::LayerConfig layer_config(Wire w) {
  wa::LayerConfig config;
  config.q_in = w[slot_q_in];
  config.k_in = w[slot_k_in];
  config.v_in = w[slot_v_in];
  config.num_heads = w[slot_num_heads];
  config.weight_dtype = static_cast<wa::WeightDtype>(w[slot_weight_dtype]);  // checked by Layer::init
  config.head_dim_qk = w[slot_head_dim_qk];
  config.head_dim_v = w[slot_head_dim_v];
  config.out_projection = w[slot_out_projection] != 0;
  config.num_kv_heads = w[slot_num_kv_heads];
  config.out_dim = w[slot_out_dim];
  config.rope.dim = w[slot_rope_dim];
  std::memcpy(&config.rope.base, &w[slot_rope_base_lo], sizeof config.rope.base);  // a double in two slots
  config.rope.interleaved = w[slot_rope_interleaved] != 0;
  config.alibi = w[slot_alibi] != 0;
  config.sliding_window = w[slot_sliding_window];
  return config;
}

wa::ForwardShape forward_shape(Wire w) {
  wa::ForwardShape shape;
  shape.batch = w[slot_batch];
  shape.tgt_len = w[slot_tgt_len];
  shape.src_len = w[slot_src_len];
  shape.weights = w[slot_need_weights] != 0;
  shape.average_weights = w[slot_average_weights] != 0;
  shape.intermediates = w[slot_intermediates] != 0;
  shape.cached = w[slot_cache] != 0;
  if (shape.cached) shape.cache_dtype = ptr<const wa::KvCache>(w, slot_cache)->dtype();
  return shape;
}

wa::LayerWeights layer_weights(Wire w) {
  wa::LayerWeights weights;
  weights.wq = ptr<const float>(w, slot_wq);
  weights.wk = ptr<const float>(w, slot_wk);
  weights.wv = ptr<const float>(w, slot_wv);
  weights.bq = ptr<const float>(w, slot_bq);
  weights.bk = ptr<const float>(w, slot_bk);
  weights.bv = ptr<const float>(w, slot_bv);
  weights.wo = ptr<const float>(w, slot_wo);
  weights.bo = ptr<const float>(w, slot_bo);
  weights.alibi_slopes = ptr<const float>(w, slot_alibi_slopes);
  return weights;
}

bool same(const wa::LayerConfig& x, const wa::LayerConfig& y) {
  return x.q_in == y.q_in && x.k_in == y.k_in && x.v_in == y.v_in && x.num_heads == y.num_heads &&
         x.head_dim_qk == y.head_dim_qk && x.head_dim_v == y.head_dim_v && x.out_projection == y.out_projection &&
         x.num_kv_heads == y.num_kv_heads && x.out_dim == y.out_dim && x.rope.dim == y.rope.dim &&
         x.rope.base == y.rope.base && x.rope.interleaved == y.rope.interleaved &&
         x.rope.inverse_frequencies == y.rope.inverse_frequencies && x.alibi == y.alibi &&
         x.sliding_window == y.sliding_window;
}

bool same(const wa::ForwardShape& x, const wa::ForwardShape& y) {
  return x.batch == y.batch && x.tgt_len == y.tgt_len && x.src_len == y.src_len && x.weights == y.weights &&
         x.average_weights == y.average_weights && x.intermediates == y.intermediates && x.cached == y.cached &&
         x.cache_dtype == y.cache_dtype;
}

// The wrapper asks a forward's sizes (to budget its memory), then makes the call with the same layer
// and shape: the plan made for the sizes is kept, and the call runs on it instead of planning again.
struct Planned {
  wa::LayerConfig config;
  wa::ForwardShape shape;
  int threads = 0;
  wa::Plan plan;
} planned;

const wa::Plan& plan_of(const wa::LayerConfig& config, const wa::ForwardShape& shape) {
  if (!same(planned.config, config) || !same(planned.shape, shape) || planned.threads != wa::thread_count())
    planned = {config, shape, wa::thread_count(), wa::plan_forward(config, shape)};
  return planned.plan;
}

wa::Status init_layer(Wire w, wa::Layer& layer) { return layer.init(layer_config(w), layer_weights(w)); }

// A one-shot call's weights stay in the heap for the whole call: a few rows read them in place.
wa::Status init_one_shot_layer(Wire w, wa::Layer& layer) {
  const wa::LayerConfig config = layer_config(w);
  if (wa::Layer::borrow_pays(config, forward_shape(w))) return layer.init_borrowed(config, layer_weights(w));
  return layer.init(config, layer_weights(w));
}

wa::Mask mask(Wire w, Slot kind, Slot data, bool per_head) {
  wa::Mask m;
  m.kind = static_cast<wa::MaskKind>(w[kind]);
  m.data = ptr<const void>(w, data);
  m.per_head = per_head;
  return m;
}

int forward(Wire w, const wa::Layer& layer) {
  wa::ForwardArgs a;
  a.batch = w[slot_batch];
  a.tgt_len = w[slot_tgt_len];
  a.src_len = w[slot_src_len];
  a.position_offset = w[slot_position_offset];
  a.cache = ptr<wa::KvCache>(w, slot_cache);
  a.query = ptr<const float>(w, slot_query);
  a.key = ptr<const float>(w, slot_key);
  a.value = ptr<const float>(w, slot_value);
  a.attn_mask = mask(w, slot_attn_mask_kind, slot_attn_mask, w[slot_attn_mask_per_head] != 0);
  a.key_padding_mask = mask(w, slot_key_padding_mask_kind, slot_key_padding_mask, false);
  a.is_causal = w[slot_is_causal] != 0;
  a.scale = f32(w, slot_scale);
  a.output = ptr<float>(w, slot_output);
  a.weights = ptr<float>(w, slot_weights);
  a.average_weights = w[slot_average_weights] != 0;
  wa::Intermediates inter;
  inter.q = ptr<float>(w, slot_i_q);
  inter.k = ptr<float>(w, slot_i_k);
  inter.v = ptr<float>(w, slot_i_v);
  inter.scores = ptr<float>(w, slot_i_scores);
  inter.scaled_scores = ptr<float>(w, slot_i_scaled_scores);
  inter.attn_output = ptr<float>(w, slot_i_attn_output);
  const bool any = inter.q || inter.k || inter.v || inter.scores || inter.scaled_scores || inter.attn_output;
  a.intermediates = any ? &inter : nullptr;
  return static_cast<int>(layer.forward(a, plan_of(layer.config(), wa::shape_of(a))));
}

// One-shot call: pack the weights (or, for a few rows, read them in place), run, free. Both public
// functions share it; the JavaScript wrapper maps selfAttention onto one head without an output
// projection.
int oneShot(std::uintptr_t wire) {
  Wire w = wa_wire::wire_of(wire);
  wa::Layer layer;
  wa::Status s = init_one_shot_layer(w, layer);
  const int status = s == wa::Status::ok ? forward(w, layer) : static_cast<int>(s);
  wa::parallel_rest();  // init may pack on every thread before a forward that runs on one
  return status;
}

// Large weights are packed on every thread; the workers then rest at once (a forward rests them
// itself, and a one-shot call's forward follows its init without resting in between).
std::uintptr_t createLayer(std::uintptr_t wire) {
  const std::uintptr_t handle = wa_wire::create<wa::Layer>(wire, slot_status, init_layer);
  wa::parallel_rest();
  return handle;
}

int layerForward(std::uintptr_t wire) {
  Wire w = wa_wire::wire_of(wire);
  return forward(w, *ptr<const wa::Layer>(w, slot_layer));
}

void destroyLayer(std::uintptr_t handle) { delete reinterpret_cast<wa::Layer*>(handle); }

// A KV cache for the layer in the layer slot, of the batch and max_length slots. Returns a handle
// (0 on failure, with the reason in the status slot).
std::uintptr_t createKvCache(std::uintptr_t wire) {
  return wa_wire::create<wa::KvCache>(wire, slot_status, [](Wire w, wa::KvCache& cache) {
    return cache.init(ptr<const wa::Layer>(w, slot_layer)->config(), w[slot_batch], w[slot_max_length],
                      static_cast<wa::KvDtype>(w[slot_cache_dtype]));
  });
}

// Bytes createKvCache allocates, from the layer configuration, batch and max_length staged.
double kvCacheBytes(std::uintptr_t wire) {
  Wire w = wa_wire::wire_of(wire);
  return wa::KvCache::bytes(layer_config(w), w[slot_batch], w[slot_max_length],
                            static_cast<wa::KvDtype>(w[slot_cache_dtype]));
}

double kvCacheLength(std::uintptr_t handle) {
  return static_cast<double>(reinterpret_cast<const wa::KvCache*>(handle)->length());
}

void kvCacheTruncate(std::uintptr_t handle, double length) {
  reinterpret_cast<wa::KvCache*>(handle)->truncate(static_cast<std::size_t>(length));
}

void destroyKvCache(std::uintptr_t handle) { delete reinterpret_cast<wa::KvCache*>(handle); }

// Sizes the wrapper checks against the memory limit before it allocates (from the layer and
// forward sizes staged in the wire; no pointer is read). Counts in floats, the rest in bytes.
double layerBytes(std::uintptr_t wire) { return wa::Layer::weights_bytes(layer_config(wa_wire::wire_of(wire))); }

// The figures forwardSizes writes, in this order (doubles: counts can pass 2^32): the name JavaScript
// reads each by, and its value in the sizes `z`.
// clang-format off
#define WA_FORWARD_SIZES(X)                                                                              \
  X(output, z.output) X(weights, z.weights) X(q, z.q) X(k, z.k) X(v, z.v) X(scores, z.scores)          \
      X(scaledScores, z.scores) X(attnOutput, z.attn_output) X(workspaceBytes, z.workspace_bytes)
// clang-format on

emscripten::val forwardSizeNames() {
  emscripten::val names = emscripten::val::array();
#define WA_PUSH(name, value) names.call<void>("push", std::string(#name));
  WA_FORWARD_SIZES(WA_PUSH)
#undef WA_PUSH
  return names;
}

// Writes the figures of WA_FORWARD_SIZES to out (a block of doubles the wrapper allocated once):
// cheaper per call than building a JavaScript object.
void forwardSizes(std::uintptr_t wire, std::uintptr_t out) {
  Wire w = wa_wire::wire_of(wire);
  const wa::LayerConfig config = layer_config(w);
  const wa::ForwardShape shape = forward_shape(w);
  const wa::ForwardSizes z = wa::Layer::forward_sizes(config, shape, plan_of(config, shape));
  double* figures = reinterpret_cast<double*>(out);
#define WA_WRITE(name, value) *figures++ = static_cast<double>(value);
  WA_FORWARD_SIZES(WA_WRITE)
#undef WA_WRITE
}

// What JavaScript must agree on with C++: status codes, mask kinds (by their C++ names) and the
// most memory the heap can grow to (-sMAXIMUM_MEMORY).
emscripten::val constants() {
  emscripten::val status = emscripten::val::object();
  status.set("ok", static_cast<int>(wa::Status::ok));
  status.set("invalidArgument", static_cast<int>(wa::Status::invalid_argument));
  status.set("outOfMemory", static_cast<int>(wa::Status::out_of_memory));
  emscripten::val mask_kind = emscripten::val::object();
  mask_kind.set("none", static_cast<int>(wa::MaskKind::none));
  mask_kind.set("boolean", static_cast<int>(wa::MaskKind::boolean));
  mask_kind.set("additive", static_cast<int>(wa::MaskKind::additive));
  emscripten::val out = emscripten::val::object();
  out.set("status", status);
  out.set("maskKind", mask_kind);
  out.set("heapMaxBytes", static_cast<double>(emscripten_get_heap_max()));
  return out;
}

// Bytes malloc'd now: the leak checks compare it before and after calls.
double heapInUse() { return static_cast<double>(mallinfo().uordblks); }

bool simdEnabled() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

}  // namespace

EMSCRIPTEN_BINDINGS(wasm_attention) {
  emscripten::function("selfAttention", &oneShot);
  emscripten::function("multiHeadAttention", &oneShot);
  emscripten::function("createLayer", &createLayer);
  emscripten::function("layerForward", &layerForward);
  emscripten::function("destroyLayer", &destroyLayer);
  emscripten::function("createKvCache", &createKvCache);
  emscripten::function("kvCacheBytes", &kvCacheBytes);
  emscripten::function("kvCacheLength", &kvCacheLength);
  emscripten::function("kvCacheTruncate", &kvCacheTruncate);
  emscripten::function("destroyKvCache", &destroyKvCache);
  emscripten::function("wireSlots", &wireSlots);
  emscripten::function("constants", &constants);
  emscripten::function("layerBytes", &layerBytes);
  emscripten::function("forwardSizes", &forwardSizes);
  emscripten::function("forwardSizeNames", &forwardSizeNames);
  emscripten::function("heapInUse", &heapInUse);
  emscripten::function("setThreads", &wa::set_thread_count);
  emscripten::function("setCores", &wa::set_core_count);
  emscripten::function("simdEnabled", &simdEnabled);
  emscripten::function("relaxedSimdEnabled", &wa::gemm_uses_relaxed_simd);
}
