// 1. The forward's projection pass: Q, K and V rows of the heads it covers, rotated (RoPE), and K and
//    V packed as the attention reads them, in the scratch or appended to a KV cache.
#include <algorithm>
#include <cmath>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "../kernels/f32-softmax.h"
#include "../kernels/kv-half.h"
#include "heads.h"
#include "positions.h"
#include "recorder.h"
#include "scratch.h"
#include "weights.h"

namespace wa {
namespace {

// Key rows placed one by one into Q·Kᵀ panels (pack_transposed's layout) from key `j0` on: a cache
// appends at any length, not only at panel boundaries.
void place_keys(const float* k, std::size_t rows, std::size_t dk, float* packed, std::size_t j0) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t j = j0 + r;
    float* dst = packed + (j / kPanelWidth) * kPanelWidth * dk + j % kPanelWidth;
    for (std::size_t d = 0; d < dk; ++d) dst[d * kPanelWidth] = k[r * dk + d];
  }
}

// The same into a reduced cache's 16-bit panels, each value rounded to nearest-even.
void place_keys16(const float* k, std::size_t rows, std::size_t dk, std::uint16_t* packed, std::size_t j0, bool bf16) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t j = j0 + r;
    std::uint16_t* dst = packed + (j / kPanelWidth) * kPanelWidth * dk + j % kPanelWidth;
    for (std::size_t d = 0; d < dk; ++d) dst[d * kPanelWidth] = kv_round(k[r * dk + d], bf16);
  }
}

// The key or value input of K/V rows [r0, …): the query's with a cache.
const float* kv_input(const ForwardArgs& a, std::size_t b, std::size_t r0, const float* x, std::size_t width) {
  return a.cache ? x + (b * a.tgt_len + r0) * width : x + (b * a.src_len + r0) * width;
}

}  // namespace

// Where K/V head g (in scratch slot `slot`) is packed: in the scratch, or in the cache.
KvStore Layer::kv_store(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, const Scratch& s) const {
  const std::size_t S = a.src_len, dk = config_.head_dim_qk, dv = config_.head_dim_v;
  if (a.cache) {
    const KvCache& cache = *a.cache;
    if (cache.dtype_ != KvDtype::f32) {
      KvStore store{nullptr, nullptr, cache.max_length_, nullptr, cache.length_};
      store.dtype = cache.dtype_;
      store.keys16 = cache.keys16(b, g);
      store.values16 = cache.values16(b, g);
      store.value_rows16 = cache.value_rows16(b, g);
      return store;
    }
    return {cache.keys(b, g), cache.values(b, g), cache.max_length_, cache.value_rows(b, g), cache.length_};
  }
  return {s.packed_k + slot * packed_panel_floats(S, dk), s.packed_v + slot * packed_panel_floats(dv, S), S,
          s.v + slot * S * dv, 0};
}

// Project query heads [h0, h1) and K/V heads [g0, g1) in one parallel pass: row chunks of each
// head's Q, K and V are independent tasks (a few tokens make one task per head, so heads are what
// threads share), and each K or V chunk is rotated and packed by the task that made it. With a
// cache, K and V come from the query and are appended after the tokens it holds.
void Layer::project(const ForwardArgs& a, std::size_t b, const HeadRange& r, Scratch& s) const {
  const std::size_t L = a.tgt_len, kv_rows = a.cache ? L : a.src_len;
  const std::size_t q_chunk = s.chunk(L), kv_chunk = s.chunk(kv_rows);
  const std::size_t q_per = ceil_div(L, q_chunk), kv_per = ceil_div(kv_rows, kv_chunk);
  const std::size_t q_tasks = (r.h1 - r.h0) * q_per, kv_tasks = (r.g1 - r.g0) * kv_per;
  std::fill_n(s.kv_flags, (r.g1 - r.g0) * flag_count(kv_rows), 0.0f);
  s.run(q_tasks + 2 * kv_tasks, [&](std::size_t t, std::size_t) {
    if (t < q_tasks) {
      const std::size_t r0 = t % q_per * q_chunk;
      project_query(a, b, r.h0 + t / q_per, t / q_per, r0, std::min(L, r0 + q_chunk) - r0, s);
      return;
    }
    t -= q_tasks;
    const bool key = t < kv_tasks;
    if (!key) t -= kv_tasks;
    const std::size_t slot = t / kv_per, r0 = t % kv_per * kv_chunk, rows = std::min(kv_rows, r0 + kv_chunk) - r0;
    if (key)
      project_key(a, b, r.g0 + slot, slot, r0, rows, s);
    else
      project_value(a, b, r.g0 + slot, slot, r0, rows, s);
  });
  if (!a.cache) return;
  // The cache remembers a non-finite value for the later calls that read it.
  for (std::size_t slot = 0; slot < r.g1 - r.g0; ++slot)
    if (flagged(s, slot, kv_rows)) a.cache->nonfinite_.get()[b * config_.num_kv_heads + r.g0 + slot] = 1.0f;
}

bool Layer::flagged(const Scratch& s, std::size_t slot, std::size_t kv_rows) {
  const float* flags = s.kv_flags + slot * flag_count(kv_rows);
  return std::any_of(flags, flags + flag_count(kv_rows), [](float f) { return f != 0.0f; });
}

// Query rows [r0, r0 + rows) of head h, into scratch slot `slot`: projected, rotated, scaled.
void Layer::project_query(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t slot, std::size_t r0,
                          std::size_t rows, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, dk = c.head_dim_qk, rope = c.rope.dim;
  const Recorder record(a, c);
  float* q = s.q + (slot * L + r0) * dk;
  project_rows(q_, h, a.query + (b * L + r0) * c.q_in, rows, q);
  if (rope) apply_rope(q, rows, dk, s.rope_q + r0 * rope, rope, c.rope.interleaved);
  record.query(b, h, r0, rows, q);
  const float scale = record.q_scale(a.scale);
  if (scale != 1.0f) scale_row(q, rows * dk, scale);
}

// Key rows [r0, r0 + rows) of K/V head g: projected, rotated, packed for Q·Kᵀ.
void Layer::project_key(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                        std::size_t rows, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t kv_rows = a.cache ? a.tgt_len : a.src_len, dk = c.head_dim_qk, rope = c.rope.dim;
  float* k = s.k + (slot * kv_rows + r0) * dk;
  project_rows(k_, g, kv_input(a, b, r0, a.cache ? a.query : a.key, c.k_in), rows, k);
  if (rope) apply_rope(k, rows, dk, s.rope_k + r0 * rope, rope, c.rope.interleaved);
  const KvStore store = kv_store(a, b, g, slot, s);
  const std::size_t j = store.j0 + r0;
  if (store.dtype != KvDtype::f32)
    place_keys16(k, rows, dk, store.keys16, j, store.dtype == KvDtype::bf16);
  else if (j % kPanelWidth == 0)  // whole panels from here (the rest of the last one is zeros)
    pack_transposed(k, rows, dk, dk, store.keys_packed + j * dk);
  else
    place_keys(k, rows, dk, store.keys_packed, j);
  Recorder(a, c).key(b, g, r0, rows, k);
}

// Value rows [r0, r0 + rows) of K/V head g: projected, packed for P·V; a row with a NaN or ±Inf is
// packed as zeros and flagged.
void Layer::project_value(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                          std::size_t rows, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t dv = c.head_dim_v;
  const KvStore store = kv_store(a, b, g, slot, s);
  const std::size_t j = store.j0 + r0;
  if (store.dtype != KvDtype::f32) {
    project_value16(a, b, g, slot, r0, rows, s, store);
    return;
  }
  float* v = store.value_rows + j * dv;
  project_rows(v_, g, kv_input(a, b, r0, a.cache ? a.query : a.value, c.v_in), rows, v);
  pack_rows(v, rows, dv, dv, store.values_packed + j * kPanelWidth, store.values_ld);
  for (std::size_t i = 0; i < rows; ++i) {
    if (all_finite(v + i * dv, dv)) continue;
    s.kv_flags[slot * flag_count(a.cache ? a.tgt_len : a.src_len) + (r0 + i) / kPanelWidth] = 1.0f;
    for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth)
      std::fill_n(store.values_packed + p0 * store.values_ld + (j + i) * kPanelWidth, kPanelWidth, 0.0f);
  }
  Recorder(a, c).value(b, g, r0, rows, v);
}

// project_value into a reduced cache: the rows projected into the scratch, rounded into the cache's
// 16-bit rows and panels; a row that holds a NaN or ±Inf once rounded (f16 overflows past 65504) is
// packed as zeros and flagged.
void Layer::project_value16(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                            std::size_t rows, Scratch& s, const KvStore& store) const {
  const LayerConfig& c = config_;
  const std::size_t dv = c.head_dim_v, j = store.j0 + r0, ld = store.values_ld;
  const bool bf16 = store.dtype == KvDtype::bf16;
  float* v = s.v + (slot * a.tgt_len + r0) * dv;
  project_rows(v_, g, kv_input(a, b, r0, a.query, c.v_in), rows, v);
  for (std::size_t i = 0; i < rows; ++i) {
    std::uint16_t* row = store.value_rows16 + (j + i) * dv;
    bool finite = true;
    for (std::size_t d = 0; d < dv; ++d) {
      row[d] = kv_round(v[i * dv + d], bf16);
      finite = finite && !kv_half_nonfinite(row[d], bf16);
    }
    if (!finite) s.kv_flags[slot * flag_count(a.tgt_len) + (r0 + i) / kPanelWidth] = 1.0f;
    for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth) {
      std::uint16_t* dst = store.values16 + p0 * ld + (j + i) * kPanelWidth;
      const std::size_t cols = std::min(kPanelWidth, dv - p0);
      for (std::size_t d = 0; d < kPanelWidth; ++d) dst[d] = finite && d < cols ? row[p0 + d] : std::uint16_t{0};
    }
  }
  Recorder(a, c).value(b, g, r0, rows, v);
}

// What query head h's attention reads (the heads of `r` in the scratch).
HeadView Layer::view_of(const ForwardArgs& a, std::size_t b, std::size_t h, const HeadRange& r,
                        const Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t g = kv_head_of(c, h), slot = g - r.g0;
  const std::size_t kv_rows = a.cache ? a.tgt_len : a.src_len;
  const KvStore store = kv_store(a, b, g, slot, s);
  HeadView view;
  view.q = s.q + (h - r.h0) * a.tgt_len * c.head_dim_qk;
  view.k = s.k + slot * kv_rows * c.head_dim_qk;
  view.keys_packed = store.keys_packed;
  view.values_packed = store.values_packed;
  view.values_ld = store.values_ld;
  view.values = store.value_rows;
  view.dtype = store.dtype;
  view.keys16 = store.keys16;
  view.values16 = store.values16;
  view.value_rows16 = store.value_rows16;
  if (a.cache)
    view.cached_nonfinite = a.cache->nonfinite_.get()[b * c.num_kv_heads + g] != 0.0f;
  else
    view.flags = s.kv_flags + slot * flag_count(kv_rows);
  return view;
}

}  // namespace wa
