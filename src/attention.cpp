#include "attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "kernels/f32-gemm.h"
#include "kernels/f32-softmax.h"
#include "parallel.h"

namespace wa {
namespace {

// Query rows per attention task: the scores of a block (rows × keys) stay in L2 and the
// block is the unit of work for threads.
constexpr std::size_t kRowBlock = 32;
// Rows per projection task: at most 64 (a chunk of A stays in L2 while the panels stream), fewer
// when that leaves threads without work; always a multiple of 16, the K panel width.
constexpr std::size_t kProjRows = 64;
// Keys per tile of the fused attention: a 32 × 256 score tile (32 KiB) stays in L1 while the
// K and V tiles (dk or dv × 256) come from L2.
constexpr std::size_t kKeyTile = 256;
// Smallest forward (in multiply-adds) worth splitting over threads.
constexpr double kMinParallelMacs = 1e6;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Floats of one packed projection: the panels of every head, then the bias.
std::size_t projection_floats(std::size_t heads, std::size_t width, std::size_t in) {
  return packed_panel_floats(width, in) * heads + heads * width;
}

Status pack_projection(Layer::Projection& p, const float* w, const float* b, std::size_t heads,
                       std::size_t width, std::size_t in) {
  p.width = width;
  p.in = in;
  p.head_stride = packed_panel_floats(width, in);
  const std::size_t panels = projection_floats(heads, width, in) - heads * width;
  if (!p.packed.allocate(panels) || !p.bias.allocate(heads * width)) return Status::out_of_memory;
  for (std::size_t h = 0; h < heads; ++h)
    pack_transposed(w + h * width * in, width, in, in, p.packed.get() + h * p.head_stride);
  for (std::size_t i = 0; i < heads * width; ++i) p.bias.get()[i] = b ? b[i] : 0.0f;
  return Status::ok;
}

// out[rows, width] = x[rows, in] · W_hᵀ + b_h for head h.
void project_rows(const Layer::Projection& p, std::size_t h, const float* x, std::size_t rows, float* out) {
  gemm_packed(rows, p.width, p.in, x, p.in, p.packed.get() + h * p.head_stride, p.in, p.bias.get() + h * p.width,
              out, p.width);
}

// A mask masks a key where it is true (bool) or −inf (float): the score is then −inf whatever it
// was (even NaN), so a masked key takes no part in the row. Elsewhere a float mask is added.
bool masks_out(const Mask& m, std::size_t index) {
  if (m.kind == MaskKind::boolean) return static_cast<const std::uint8_t*>(m.data)[index] != 0;
  return m.kind == MaskKind::additive && static_cast<const float*>(m.data)[index] == -INFINITY;
}
float masked_score(const Mask& m, std::size_t index, float score) {
  if (masks_out(m, index)) return -INFINITY;
  return m.kind == MaskKind::additive ? score + static_cast<const float*>(m.data)[index] : score;
}

std::size_t attn_mask_offset(const ForwardArgs& a, std::size_t heads, std::size_t b, std::size_t h, std::size_t i) {
  return (a.attn_mask.per_head ? (b * heads + h) * a.tgt_len + i : i) * a.src_len;
}

// Whether a mask or causality masks key j for query i (what mask_scores sets to −inf).
bool key_masked(const ForwardArgs& a, std::size_t heads, std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  return (a.is_causal && j > i) || masks_out(a.attn_mask, attn_mask_offset(a, heads, b, h, i) + j) ||
         masks_out(a.key_padding_mask, b * a.src_len + j);
}

// Query i's scores against keys [j0, j0 + n), in place: scaled, then the attention mask, the key
// padding mask and causality (key j > query i) applied: bool → -inf, float → added.
void mask_scores(const ForwardArgs& a, std::size_t heads, std::size_t b, std::size_t h, std::size_t i,
                 std::size_t j0, float* row, std::size_t n, float scale) {
  if (scale != 1.0f) scale_row(row, n, scale);
  const Mask& attn = a.attn_mask;
  if (attn.kind != MaskKind::none) {
    const std::size_t offset = attn_mask_offset(a, heads, b, h, i) + j0;
    for (std::size_t j = 0; j < n; ++j) row[j] = masked_score(attn, offset + j, row[j]);
  }
  const Mask& padding = a.key_padding_mask;
  if (padding.kind != MaskKind::none) {
    const std::size_t offset = b * a.src_len + j0;
    for (std::size_t j = 0; j < n; ++j) row[j] = masked_score(padding, offset + j, row[j]);
  }
  if (a.is_causal)
    for (std::size_t j = i + 1 > j0 ? i + 1 - j0 : 0; j < n; ++j) row[j] = -INFINITY;
}

bool all_finite(const float* x, std::size_t n) {
  for (std::size_t d = 0; d < n; ++d)
    if (!std::isfinite(x[d])) return false;
  return true;
}

// How a forward runs: fused (no whole score rows) or not, and on how many workers.
struct Plan {
  bool fused = true;
  bool parallel = false;
  std::size_t workers = 1;
};

Plan plan_forward(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t L = f.tgt_len, S = f.src_len, H = c.num_heads, dk = c.head_dim_qk;
  const std::size_t width_v = H * c.head_dim_v;
  Plan p;
  // Weights and the teaching copies need whole score rows; otherwise the fused path runs.
  p.fused = !f.weights && !f.intermediates;
  const double macs = static_cast<double>(f.batch) *
                      (static_cast<double>(L) * c.q_in * H * dk + static_cast<double>(S) * (c.k_in * H * dk + c.v_in * width_v) +
                       static_cast<double>(L) * S * H * (dk + c.head_dim_v) +
                       (c.out_projection ? static_cast<double>(L) * width_v * width_v : 0.0));
  p.parallel = macs >= kMinParallelMacs;
  p.workers = p.parallel ? static_cast<std::size_t>(thread_count()) : 1;
  return p;
}

// The pieces of a forward's scratch, in floats, in the order Scratch::allocate carves them.
struct ScratchSizes {
  std::size_t q, k, v, packed_k, packed_v, scores, block_out, out_rows;
};

ScratchSizes scratch_sizes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  const std::size_t L = f.tgt_len, S = f.src_len, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t workers = p.workers;  // per-worker scratch: one set when the forward runs serially
  return {L * dk,
          S * dk,
          S * dv,
          packed_panel_floats(S, dk),
          packed_panel_floats(dv, S),
          workers * kRowBlock * (p.fused ? kKeyTile : S),
          p.fused ? workers * kRowBlock * dv : 0,
          c.out_projection ? workers * kProjRows * c.num_heads * dv : 0};
}

// 64-byte alignment of each piece of the arena.
std::size_t aligned_floats(std::size_t n) { return (n + 15) / 16 * 16; }

std::size_t arena_floats(const ScratchSizes& z) {
  std::size_t total = 0;
  for (std::size_t n : {z.q, z.k, z.v, z.packed_k, z.packed_v, z.scores, z.block_out, z.out_rows})
    total += aligned_floats(n);
  return total;
}

}  // namespace

// Per-head working memory, reused by every head and batch: linear in the sequence lengths.
struct Scratch {
  // Below about a million multiply-adds, handing tasks to another thread costs more than it saves.
  bool parallel = true;
  std::size_t workers = 1;
  // About four tasks per thread over `rows`, so an uneven last task costs little.
  std::size_t chunk(std::size_t rows) const {
    const std::size_t wanted = ceil_div(rows, 4 * workers);
    return std::min(kProjRows, std::max<std::size_t>(kPanelWidth, ceil_div(wanted, kPanelWidth) * kPanelWidth));
  }
  void run(std::size_t count, const TaskFn& fn) const {
    if (parallel) {
      parallel_for(count, fn);
    } else {
      for (std::size_t t = 0; t < count; ++t) fn(t, 0);
    }
  }
  // One allocation carved into 64-byte aligned pieces: fewer calls into malloc for small forwards.
  FloatBuffer arena;
  float *q = nullptr, *k = nullptr, *v = nullptr, *packed_k = nullptr, *packed_v = nullptr;
  float* scores = nullptr;     // per worker: kRowBlock rows of src_len scores (of kKeyTile when fused)
  float* block_out = nullptr;  // per worker: kRowBlock rows of the fused attention's running output
  float* out_rows = nullptr;   // per worker: kProjRows rows of the output projection
  // Some value row of the current head holds a NaN or ±Inf: its packed copy is zeros, so a masked
  // key's 0·NaN does not reach the rows that never see it, and add_nonfinite_values adds it for
  // the rows that do.
  std::atomic<bool> nonfinite_v{false};

  bool allocate(const ScratchSizes& z) {
    if (!arena.allocate(arena_floats(z))) return false;
    float* next = arena.get();
    for (auto piece : {std::make_pair(&q, z.q), std::make_pair(&k, z.k), std::make_pair(&v, z.v),
                       std::make_pair(&packed_k, z.packed_k), std::make_pair(&packed_v, z.packed_v),
                       std::make_pair(&scores, z.scores), std::make_pair(&block_out, z.block_out),
                       std::make_pair(&out_rows, z.out_rows)}) {
      *piece.first = piece.second ? next : nullptr;
      next += aligned_floats(piece.second);
    }
    return true;
  }
};

ForwardShape shape_of(const ForwardArgs& a) {
  ForwardShape f;
  f.batch = a.batch;
  f.tgt_len = a.tgt_len;
  f.src_len = a.src_len;
  f.weights = a.weights != nullptr;
  f.average_weights = a.average_weights;
  f.intermediates = a.intermediates != nullptr;
  return f;
}

std::size_t Layer::weights_bytes(const LayerConfig& c) {
  const std::size_t h = c.num_heads, width_v = h * c.head_dim_v;
  std::size_t floats = projection_floats(h, c.head_dim_qk, c.q_in) + projection_floats(h, c.head_dim_qk, c.k_in) +
                       projection_floats(h, c.head_dim_v, c.v_in);
  if (c.out_projection) floats += projection_floats(1, width_v, width_v);
  return floats * sizeof(float);
}

std::size_t Layer::workspace_bytes(const LayerConfig& c, const ForwardShape& f) {
  return arena_floats(scratch_sizes(c, f, plan_forward(c, f))) * sizeof(float);
}

ForwardSizes Layer::forward_sizes(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t B = f.batch, L = f.tgt_len, S = f.src_len, H = c.num_heads;
  const std::size_t width_qk = H * c.head_dim_qk, width_v = H * c.head_dim_v;
  ForwardSizes z;
  z.output = B * L * width_v;
  z.weights = f.weights ? B * (f.average_weights ? 1 : H) * L * S : 0;
  if (f.intermediates) {
    z.q = B * L * width_qk;
    z.k = B * S * width_qk;
    z.v = B * S * width_v;
    z.scores = B * H * L * S;  // and as many scaled scores
    z.attn_output = c.out_projection ? B * L * width_v : 0;
  }
  z.workspace_bytes = workspace_bytes(c, f);
  return z;
}

Status Layer::init(const LayerConfig& c, const LayerWeights& w) {
  if (c.q_in == 0 || c.k_in == 0 || c.v_in == 0 || c.num_heads == 0 || c.head_dim_qk == 0 ||
      c.head_dim_v == 0 || !w.wq || !w.wk || !w.wv || (c.out_projection && !w.wo))
    return Status::invalid_argument;
  config_ = c;
  const std::size_t h = c.num_heads;
  Status s = pack_projection(q_, w.wq, w.bq, h, c.head_dim_qk, c.q_in);
  if (s == Status::ok) s = pack_projection(k_, w.wk, w.bk, h, c.head_dim_qk, c.k_in);
  if (s == Status::ok) s = pack_projection(v_, w.wv, w.bv, h, c.head_dim_v, c.v_in);
  if (s == Status::ok && c.out_projection) s = pack_projection(o_, w.wo, w.bo, 1, h * c.head_dim_v, h * c.head_dim_v);
  return s;
}

// 1. Project one head's Q, K, V and pack K and V as GEMM panels, in one parallel pass: row chunks
//    of Q, K and V are independent tasks, and each K or V chunk is packed by the task that made it.
void Layer::project_head(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, dk = c.head_dim_qk, dv = c.head_dim_v, H = c.num_heads;
  const std::size_t q_rows = s.chunk(L), kv_rows = s.chunk(S);
  const std::size_t q_tasks = ceil_div(L, q_rows), kv_tasks = ceil_div(S, kv_rows);
  Intermediates* in = a.intermediates;
  s.run(q_tasks + 2 * kv_tasks, [&](std::size_t task, std::size_t) {
    if (task < q_tasks) {
      const std::size_t r0 = task * q_rows, rows = std::min(L, r0 + q_rows) - r0;
      float* q = s.q + r0 * dk;
      project_rows(q_, h, a.query + (b * L + r0) * c.q_in, rows, q);
      for (std::size_t i = 0; in && in->q && i < rows; ++i)
        std::memcpy(in->q + (b * L + r0 + i) * H * dk + h * dk, q + i * dk, dk * sizeof(float));
      // Scaling Q (L·dk products) instead of the scores (L·S) saves a pass over every score row,
      // as PyTorch does. The teaching copy wants raw Q·Kᵀ, so then the scores are scaled instead.
      if (!in) scale_row(q, rows * dk, a.scale);
      return;
    }
    const bool is_key = task < q_tasks + kv_tasks;
    const std::size_t r0 = (task - q_tasks - (is_key ? 0 : kv_tasks)) * kv_rows;
    const std::size_t rows = std::min(S, r0 + kv_rows) - r0;
    if (is_key) {
      float* k = s.k + r0 * dk;
      project_rows(k_, h, a.key + (b * S + r0) * c.k_in, rows, k);
      pack_transposed(k, rows, dk, dk, s.packed_k + r0 * dk);  // r0 is a multiple of 16
      for (std::size_t j = 0; in && in->k && j < rows; ++j)
        std::memcpy(in->k + (b * S + r0 + j) * H * dk + h * dk, k + j * dk, dk * sizeof(float));
    } else {
      float* v = s.v + r0 * dv;
      project_rows(v_, h, a.value + (b * S + r0) * c.v_in, rows, v);
      pack_rows(v, rows, dv, dv, s.packed_v + r0 * kPanelWidth, S);
      for (std::size_t j = 0; j < rows; ++j) {
        if (all_finite(v + j * dv, dv)) continue;
        s.nonfinite_v.store(true, std::memory_order_relaxed);
        for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth)
          std::fill_n(s.packed_v + p0 * S + (r0 + j) * kPanelWidth, kPanelWidth, 0.0f);
      }
      for (std::size_t j = 0; in && in->v && j < rows; ++j)
        std::memcpy(in->v + (b * S + r0 + j) * H * dv + h * dv, v + j * dv, dv * sizeof(float));
    }
  });
}

// 2. Per block of query rows: scores → scale, mask → softmax → weights → P·V into attn_out.
void Layer::attend_head(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t width_v = H * dv;
  const float score_scale = a.intermediates ? a.scale : 1.0f;  // else folded into Q
  Intermediates* in = a.intermediates;
  s.run(ceil_div(L, kRowBlock), [&](std::size_t blk, std::size_t worker) {
    float* block_scores = s.scores + worker * kRowBlock * S;
    bool attends[kRowBlock];  // false: every key masked, the row is zeros
    const std::size_t i0 = blk * kRowBlock, i1 = std::min(L, i0 + kRowBlock), rows = i1 - i0;
    // Keys past the block's last query are all masked under causality: skip them.
    const std::size_t keys = a.is_causal ? std::min(S, i1) : S;
    gemm_packed(rows, keys, dk, s.q + i0 * dk, dk, s.packed_k, dk, nullptr, block_scores, S);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t i = i0 + r;
      float* row = block_scores + r * S;
      const std::size_t head_row = (b * H + h) * L + i;
      if (in && in->scores) {
        float* dst = in->scores + head_row * S;
        std::memcpy(dst, row, keys * sizeof(float));
        // Skipped causal keys were never multiplied; the teaching copy shows their product.
        for (std::size_t j = keys; j < S; ++j) {
          float dot = 0.0f;
          for (std::size_t d = 0; d < dk; ++d) dot += s.q[i * dk + d] * s.k[j * dk + d];
          dst[j] = dot;
        }
      }
      mask_scores(a, H, b, h, i, 0, row, keys, score_scale);
      if (in && in->scaled_scores) {
        float* dst = in->scaled_scores + head_row * S;
        std::memcpy(dst, row, keys * sizeof(float));
        std::fill(dst + keys, dst + S, -INFINITY);
      }
      attends[r] = softmax_row(row, keys);
      if (a.weights) store_weights(a, b, h, i, row, keys);
    }
    float* out = attn_out + i0 * width_v + h * dv;
    gemm_packed(rows, dv, keys, block_scores, S, s.packed_v, S, nullptr, out, width_v);
    if (s.nonfinite_v.load(std::memory_order_relaxed))
      add_nonfinite_values(a, b, h, s, i0, rows, 0, keys, block_scores, S, attends, out, width_v);
  });
}

// 2'. The same without weights, FlashAttention-style: key tiles of kKeyTile, a running max and
//     sum per query row, the output rescaled when the max grows. No row ever holds all src_len
//     scores, so memory and cache footprint stay flat as sequences grow.
void Layer::attend_head_fused(const ForwardArgs& a, std::size_t b, std::size_t h, Scratch& s, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v;
  s.run(ceil_div(L, kRowBlock), [&](std::size_t blk, std::size_t worker) {
    float* tile = s.scores + worker * kRowBlock * kKeyTile;
    float* out = s.block_out + worker * kRowBlock * dv;
    float running_max[kRowBlock], running_sum[kRowBlock];
    bool attends[kRowBlock];  // per tile: false when the row's keys so far are all masked
    const std::size_t i0 = blk * kRowBlock, i1 = std::min(L, i0 + kRowBlock), rows = i1 - i0;
    const std::size_t keys = a.is_causal ? std::min(S, i1) : S;
    std::fill(out, out + rows * dv, 0.0f);
    std::fill(running_max, running_max + rows, -INFINITY);
    std::fill(running_sum, running_sum + rows, 0.0f);
    for (std::size_t j0 = 0; j0 < keys; j0 += kKeyTile) {
      const std::size_t tk = std::min(kKeyTile, keys - j0);
      gemm_packed(rows, tk, dk, s.q + i0 * dk, dk, s.packed_k + j0 * dk, dk, nullptr, tile, kKeyTile);
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r;
        float* row = tile + r * kKeyTile;
        attends[r] = true;
        if (std::isnan(running_sum[r])) {  // a NaN met earlier: the whole row is NaN
          std::fill(row, row + tk, NAN);
          continue;
        }
        mask_scores(a, H, b, h, i, j0, row, tk, 1.0f);
        const float new_max = std::fmax(running_max[r], row_max(row, tk));
        if (new_max == -INFINITY) {
          // Every key so far masked: this tile adds nothing, unless a score is NaN (the max skips it).
          const bool nan = has_nan(row, tk);
          if (nan) running_sum[r] = NAN;
          attends[r] = nan;
          std::fill(row, row + tk, nan ? NAN : 0.0f);
          continue;
        }
        const float rescale = running_max[r] == -INFINITY ? 0.0f : std::exp(running_max[r] - new_max);
        running_sum[r] = running_sum[r] * rescale + exp_minus_max_sum(row, tk, new_max);
        if (rescale != 1.0f) scale_row(out + r * dv, dv, rescale);
        running_max[r] = new_max;
      }
      gemm_packed_accumulate(rows, dv, tk, tile, kKeyTile, s.packed_v + j0 * kPanelWidth, S, out, dv);
      if (s.nonfinite_v.load(std::memory_order_relaxed))
        add_nonfinite_values(a, b, h, s, i0, rows, j0, tk, tile, kKeyTile, attends, out, dv);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      // A query whose every key is masked attends to nothing: zeros, not 0/0. A NaN sum stays NaN.
      const float inv = running_sum[r] == 0.0f ? 0.0f : 1.0f / running_sum[r];
      float* dst = attn_out + (i0 + r) * H * dv + h * dv;
      for (std::size_t d = 0; d < dv; ++d) dst[d] = out[r * dv + d] * inv;
    }
  });
}

// Head h's softmax row for query i into the weights: per head, or summed into the head average.
void Layer::store_weights(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t i, const float* row,
                          std::size_t keys) const {
  const std::size_t H = config_.num_heads, L = a.tgt_len, S = a.src_len;
  const bool average = a.average_weights && H > 1;
  float* dst = a.weights + (average ? b * L + i : (b * H + h) * L + i) * S;
  // Keys past `keys` were skipped (causal): weight 0, or NaN in a NaN row (softmax_row makes a row
  // with a NaN all NaN).
  const bool nan_row = keys > 0 && std::isnan(row[0]);
  if (!average || h == 0) {
    std::memcpy(dst, row, keys * sizeof(float));
    std::fill(dst + keys, dst + S, nan_row ? NAN : 0.0f);
  } else {
    for (std::size_t j = 0; j < keys; ++j) dst[j] += row[j];
    if (nan_row) std::fill(dst + keys, dst + S, NAN);
  }
  if (average && h == H - 1)
    for (std::size_t j = 0; j < S; ++j) dst[j] /= static_cast<float>(H);
}

// A value row with a NaN or ±Inf was left out of the P·V product (its packed copy is zeros); this
// adds p·v for it to the rows [i0, i0 + rows) that attend and do not mask it: so 0·NaN is NaN
// exactly where a float64 evaluation has it. p: the rows' weights for keys [j0, j0 + keys).
void Layer::add_nonfinite_values(const ForwardArgs& a, std::size_t b, std::size_t h, const Scratch& s,
                                 std::size_t i0, std::size_t rows, std::size_t j0, std::size_t keys, const float* p,
                                 std::size_t ldp, const bool* attends, float* out, std::size_t ldo) const {
  const std::size_t dv = config_.head_dim_v;
  for (std::size_t j = j0; j < j0 + keys; ++j) {
    const float* v = s.v + j * dv;
    if (all_finite(v, dv)) continue;
    for (std::size_t r = 0; r < rows; ++r) {
      if (!attends[r] || key_masked(a, config_.num_heads, b, h, i0 + r, j)) continue;
      const float weight = p[r * ldp + (j - j0)];
      for (std::size_t d = 0; d < dv; ++d) out[r * ldo + d] += weight * v[d];
    }
  }
}

// 3. Output projection in place: each row chunk is read before it is overwritten.
void Layer::project_output(std::size_t rows_total, Scratch& s, float* rows_inout) const {
  const std::size_t width = o_.width;
  const std::size_t chunk = s.chunk(rows_total);
  s.run(ceil_div(rows_total, chunk), [&](std::size_t t, std::size_t worker) {
    float* tmp = s.out_rows + worker * kProjRows * width;
    const std::size_t r0 = t * chunk, rows = std::min(rows_total, r0 + chunk) - r0;
    gemm_packed(rows, width, width, rows_inout + r0 * width, width, o_.packed.get(), width, o_.bias.get(), tmp, width);
    std::memcpy(rows_inout + r0 * width, tmp, rows * width * sizeof(float));
  });
}

Status Layer::forward(const ForwardArgs& a) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, width_v = H * c.head_dim_v;
  if (L == 0 || S == 0 || a.batch == 0 || !a.query || !a.key || !a.value || !a.output || c.q_in == 0)
    return Status::invalid_argument;

  const ForwardShape shape = shape_of(a);
  const Plan plan = plan_forward(c, shape);
  const bool fused = plan.fused;
  Scratch s;
  s.parallel = plan.parallel;
  s.workers = plan.workers;
  if (!s.allocate(scratch_sizes(c, shape, plan))) return Status::out_of_memory;

  for (std::size_t b = 0; b < a.batch; ++b) {
    // With an out projection, the heads' results are gathered in `output` and projected in place.
    float* attn_out = a.output + b * L * width_v;
    for (std::size_t h = 0; h < H; ++h) {
      s.nonfinite_v.store(false, std::memory_order_relaxed);
      project_head(a, b, h, s);
      if (fused)
        attend_head_fused(a, b, h, s, attn_out);
      else
        attend_head(a, b, h, s, attn_out);
    }
    if (a.intermediates && a.intermediates->attn_output)
      std::memcpy(a.intermediates->attn_output + b * L * width_v, attn_out, L * width_v * sizeof(float));
    if (c.out_projection) project_output(L, s, attn_out);
  }
  if (s.parallel) parallel_rest();
  return Status::ok;
}

}  // namespace wa
