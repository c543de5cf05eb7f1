// 2. The attention of the projected heads: how the row blocks of the heads become tasks (attend),
//    and the path with whole score rows that the attention weights and the teaching copies need.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "../kernels/f32-softmax.h"
#include "heads.h"
#include "kv-tile.h"
#include "masking.h"
#include "recorder.h"
#include "scratch.h"

namespace wa {

// The attention of query heads [h0, h1) in one parallel pass: a task is a row block of one head,
// so a few tokens still make a task per head. Averaged weights add the heads of a row in order,
// so then a task is a row block of every head. A grouped-query step with few rows stacks the
// heads that share a K/V head into one block, so K and V are read once per stack.
void Layer::attend(const ForwardArgs& a, std::size_t b, const HeadRange& r, const Scratch& s, bool fused,
                   float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, H = c.num_heads, group = H / c.num_kv_heads, heads = r.h1 - r.h0;
  const std::size_t blocks = ceil_div(L, kRowBlock);
  if (fused && group > 1 && heads == H && group * L <= kRowBlock) {
    // Stacks of `per` heads, enough of them for every thread (the shape alone decides). From a reduced
    // cache, one stack per K/V head: each stack widens the K/V tiles it reads, so a split group would
    // widen them again per stack (a row's bits do not depend on its stack).
    const bool reduced = a.cache && a.cache->dtype() != KvDtype::f32;
    const std::size_t per =
        reduced ? group : ceil_div(group, std::min(group, ceil_div(kMinStackTasks, c.num_kv_heads)));
    const std::size_t stacks = ceil_div(group, per);
    s.run(c.num_kv_heads * stacks, [&](std::size_t t, std::size_t worker) {
      const std::size_t g = t / stacks, first = g * group + t % stacks * per;
      const BlockRows br = stacked_block(first, std::min(per, (g + 1) * group - first), L);
      attend_block_fused(a, b, br, worker, s, view_of(a, b, first, r, s), attn_out);
    });
    return;
  }
  const bool averaged = !fused && a.average_weights && H > 1 && heads > 1;
  if (averaged && s.head_rows) {
    s.run(heads * blocks, [&](std::size_t t, std::size_t worker) {
      const std::size_t h = r.h0 + t / blocks;
      attend_block(a, b, h, t % blocks, worker, s, view_of(a, b, h, r, s), attn_out);
    });
    average_head_rows(a, b, s);
    return;
  }
  if (averaged) {
    s.run(blocks, [&](std::size_t blk, std::size_t worker) {
      for (std::size_t h = r.h0; h < r.h1; ++h) attend_block(a, b, h, blk, worker, s, view_of(a, b, h, r, s), attn_out);
    });
    return;
  }
  s.run(heads * blocks, [&](std::size_t t, std::size_t worker) {
    const std::size_t h = r.h0 + t / blocks, blk = t % blocks;
    if (fused)
      attend_block_fused(a, b, head_block(h, blk, L), worker, s, view_of(a, b, h, r, s), attn_out);
    else
      attend_block(a, b, h, blk, worker, s, view_of(a, b, h, r, s), attn_out);
  });
}

// Query head h, rows [blk·kRowBlock, …): scores → scale, mask → softmax → weights → P·V into attn_out.
void Layer::attend_block(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t blk, std::size_t worker,
                         const Scratch& s, const HeadView& view, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, dk = c.head_dim_qk, dv = c.head_dim_v, width_v = c.attn_width();
  const Recorder record(a, c);
  const double slope = c.alibi ? alibi_.get()[h] : 0.0;
  float* block_scores = s.scores + worker * kRowBlock * S;
  bool attends[kRowBlock];  // false: every key masked, the row is zeros
  const std::size_t i0 = blk * kRowBlock, i1 = std::min(L, i0 + kRowBlock), rows = i1 - i0;
  // Keys that causality or the window mask for every query of the block are skipped.
  const KeyRange keys = attended_keys(a, c, i0, i1);
  const std::size_t first = keys.first, n = keys.end - keys.first;
  float* widened = s.kv_tile ? s.kv_tile + worker * kv_tile_floats(dk, dv) : nullptr;
  if (view.dtype == KvDtype::f32) {
    gemm_packed(rows, n, dk, view.q + i0 * dk, dk, view.keys_packed + first * dk, dk, nullptr, block_scores + first, S);
  } else {
    // A reduced cache, a key tile at a time (each score is one dot product: the same as in one call).
    for (std::size_t j0 = first; j0 < keys.end; j0 += kReducedKeyTile) {
      const std::size_t tk = std::min(kReducedKeyTile, keys.end - j0);
      const KeyTile kv = key_tile(view, j0, tk, dk, dv, widened, rows);
      tile_scores(kv, rows, tk, dk, view.q + i0 * dk, block_scores + j0, S);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r;
    float* row = block_scores + r * S;
    record.scores(b, h, i, row, keys, view);
    mask_scores(a, c, slope, b, h, i, first, row + first, n, record.score_scale(a.scale));
    record.scaled_scores(b, h, i, row, keys);
    attends[r] = softmax_row(row + first, n);
    // Every score −inf, yet a key is left: −inf through arithmetic, NaN as in float64 (not masked).
    if (!attends[r] && !keys_masked(a, c, b, h, i, first, n)) {
      std::fill_n(row + first, n, NAN);
      attends[r] = true;
    }
    if (a.weights) store_weights(a, b, h, i, row, first, keys.end, s.head_rows);
  }
  float* out = attn_out + i0 * width_v + h * dv;
  if (view.dtype == KvDtype::f32) {
    gemm_packed(rows, dv, n, block_scores + first, S, view.values_packed + first * kPanelWidth, view.values_ld, nullptr,
                out, width_v);
  } else {
    for (std::size_t r = 0; r < rows; ++r) std::fill_n(out + r * width_v, dv, 0.0f);
    for (std::size_t j0 = first; j0 < keys.end; j0 += kReducedKeyTile) {
      const std::size_t tk = std::min(kReducedKeyTile, keys.end - j0);
      const KeyTile kv = key_tile(view, j0, tk, dk, dv, widened, rows);
      tile_accumulate(kv, rows, dv, tk, block_scores + j0, S, out, width_v);
    }
  }
  if (view.nonfinite(keys))
    add_nonfinite_values(a, b, head_block(h, blk, L), view, first, n, block_scores + first, S, attends, out, width_v);
}

// Head h's softmax row for query i (keys [first, end) of row) into the weights: per head, or summed
// into the head average; or into head_rows [heads, tgt_len, src_len], which average_head_rows sums.
void Layer::store_weights(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t i, const float* row,
                          std::size_t first, std::size_t end, float* head_rows) const {
  const std::size_t H = config_.num_heads, L = a.tgt_len, S = a.src_len;
  const bool average = a.average_weights && H > 1 && !head_rows;
  float* dst = head_rows ? head_rows + (h * L + i) * S : a.weights + (average ? b * L + i : (b * H + h) * L + i) * S;
  // Keys outside [first, end) were skipped (causal, window): weight 0, or NaN in a NaN row
  // (softmax_row makes a row with a NaN all NaN).
  const bool nan_row = end > first && std::isnan(row[first]);
  if (!average || h == 0) {
    std::fill(dst, dst + first, nan_row ? NAN : 0.0f);
    std::memcpy(dst + first, row + first, (end - first) * sizeof(float));
    std::fill(dst + end, dst + S, nan_row ? NAN : 0.0f);
  } else {
    for (std::size_t j = first; j < end; ++j) dst[j] += row[j];
    if (nan_row) {
      std::fill(dst, dst + first, NAN);
      std::fill(dst + end, dst + S, NAN);
    }
  }
  if (average && h == H - 1)
    for (std::size_t j = 0; j < S; ++j) dst[j] /= static_cast<float>(H);
}

// The head average of the rows store_weights kept apart: heads added in order, then divided, as it
// adds them into the average itself (so the bits are the same).
void Layer::average_head_rows(const ForwardArgs& a, std::size_t b, const Scratch& s) const {
  const std::size_t H = config_.num_heads, L = a.tgt_len, S = a.src_len;
  const std::size_t cols = std::max<std::size_t>(256, ceil_div(S, 4 * s.workers)), chunks = ceil_div(S, cols);
  s.run(L * chunks, [&](std::size_t t, std::size_t) {
    const std::size_t i = t / chunks, j0 = t % chunks * cols, j1 = std::min(S, j0 + cols);
    float* dst = a.weights + (b * L + i) * S;
    for (std::size_t j = j0; j < j1; ++j) {
      float sum = s.head_rows[i * S + j];
      for (std::size_t h = 1; h < H; ++h) sum += s.head_rows[(h * L + i) * S + j];
      dst[j] = sum / static_cast<float>(H);
    }
  });
}

// A value row with a NaN or ±Inf was left out of the P·V product (its packed copy is zeros); this
// adds p·v for it to the rows [i0, i0 + rows) that attend and do not mask it: so 0·NaN is NaN
// exactly where a float64 evaluation has it. p: the block's rows' weights for keys [j0, j0 + keys).
void Layer::add_nonfinite_values(const ForwardArgs& a, std::size_t b, const BlockRows& br, const HeadView& view,
                                 std::size_t j0, std::size_t keys, const float* p, std::size_t ldp, const bool* attends,
                                 float* out, std::size_t ldo) const {
  const std::size_t dv = config_.head_dim_v;
  if (view.dtype != KvDtype::f32) {
    const bool bf16 = view.dtype == KvDtype::bf16;
    for (std::size_t j = j0; j < j0 + keys; ++j) {
      if (reduced_value_row_finite(view, j, dv)) continue;
      const std::uint16_t* v = view.value_rows16 + j * dv;
      for (std::size_t r = 0; r < br.rows; ++r) {
        if (!attends[r] || key_masked(a, config_, b, br.head(r), br.query(r), j)) continue;
        const float weight = p[r * ldp + (j - j0)];
        for (std::size_t d = 0; d < dv; ++d) out[r * ldo + d] += weight * kv_widen(v[d], bf16);
      }
    }
    return;
  }
  for (std::size_t j = j0; j < j0 + keys; ++j) {
    const float* v = view.values + j * dv;
    if (all_finite(v, dv)) continue;
    for (std::size_t r = 0; r < br.rows; ++r) {
      if (!attends[r] || key_masked(a, config_, b, br.head(r), br.query(r), j)) continue;
      const float weight = p[r * ldp + (j - j0)];
      for (std::size_t d = 0; d < dv; ++d) out[r * ldo + d] += weight * v[d];
    }
  }
}

}  // namespace wa
