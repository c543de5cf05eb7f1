#include "attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "kernels/f32-gemm-rows.h"
#include "kernels/f32-gemm.h"
#include "kernels/f32-softmax.h"
#include "parallel.h"
#include "positions.h"

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
// Most scratch (floats) for projecting every head before attending: beyond it, one head at a time
// keeps the scratch small (long sequences). Below it, one parallel pass per stage (projections, then
// attention) gives threads a task per head and row block, where one head at a time gives a few
// tokens nothing to share and costs two waits per head.
constexpr double kAllHeadsFloats = 4e6;
// Fewest tasks a grouped-query attention step aims for: its heads are stacked per K/V head, and a
// few K/V heads (one, multi-query) would leave threads idle.
constexpr std::size_t kMinStackTasks = 8;
// Most scratch (floats) for keeping each head's weights apart before averaging them.
constexpr double kMaxHeadRowsFloats = 1 << 20;
// Weight rows per packing task (one-shot calls pack every weight on every call).
constexpr std::size_t kPackRows = 64;
// Smallest weight (floats) worth packing on several threads.
constexpr std::size_t kMinParallelPack = 1 << 16;
// A one-shot call of 3 or 4 tokens reads its weights in place when every projection has at least this
// many inputs per row: packing reads and writes every weight once more, which then costs more than
// the panels save (4 tokens of 512 or 768 inputs: 1.5–1.7× faster; of 256, the panels win).
constexpr std::size_t kBorrowInputsPerRow = 128;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Floats of one packed projection: the panels of every head, then the bias.
std::size_t projection_floats(std::size_t heads, std::size_t width, std::size_t in) {
  return packed_panel_floats(width, in) * heads + heads * width;
}

// Allocates a projection's panels (packed later by pack_weights) and copies its bias; a borrowed
// projection keeps a pointer to its weights instead of panels.
Status allocate_projection(Layer::Projection& p, const float* w, const float* b, std::size_t heads,
                           std::size_t width, std::size_t in, bool borrow) {
  p.width = width;
  p.in = in;
  p.head_stride = borrow ? width * in : packed_panel_floats(width, in);
  p.rows = borrow ? w : nullptr;
  const std::size_t panels = projection_floats(heads, width, in) - heads * width;
  if ((!borrow && !p.packed.allocate(panels)) || !p.bias.allocate(heads * width)) return Status::out_of_memory;
  for (std::size_t i = 0; i < heads * width; ++i) p.bias.get()[i] = b ? b[i] : 0.0f;
  return Status::ok;
}

// A projection's weights to pack: `heads` blocks of p.width rows of p.in.
struct PackJob {
  Layer::Projection* p;
  const float* w;
  std::size_t heads;
  std::size_t tasks() const { return heads * ceil_div(p->width, kPackRows); }
};

// Packs the weights in tasks of kPackRows rows of one head, on every thread when they are large: a
// one-shot call packs every weight on every call, and a few tokens cost about as much again.
void pack_weights(const PackJob* jobs, std::size_t count) {
  std::size_t tasks = 0, floats = 0;
  for (std::size_t j = 0; j < count; ++j) {
    tasks += jobs[j].tasks();
    floats += jobs[j].heads * jobs[j].p->width * jobs[j].p->in;
  }
  const TaskFn pack = [&](std::size_t t, std::size_t) {
    std::size_t j = 0;
    for (; t >= jobs[j].tasks(); ++j) t -= jobs[j].tasks();
    const Layer::Projection& p = *jobs[j].p;
    const std::size_t per_head = ceil_div(p.width, kPackRows), h = t / per_head, r0 = t % per_head * kPackRows;
    pack_transposed(jobs[j].w + (h * p.width + r0) * p.in, std::min(kPackRows, p.width - r0), p.in, p.in,
                    p.packed.get() + h * p.head_stride + r0 * p.in);
  };
  if (floats >= kMinParallelPack) {
    parallel_for(tasks, pack);
  } else {
    for (std::size_t t = 0; t < tasks; ++t) pack(t, 0);
  }
}

// out[rows, ldo] = x[rows, in] · W[c0, c0 + cols)ᵀ + b[c0, c0 + cols) of one head's block of W.
void project_cols(const Layer::Projection& p, std::size_t h, std::size_t c0, std::size_t cols, const float* x,
                  std::size_t rows, float* out, std::size_t ldo) {
  const float* bias = p.bias.get() + h * p.width + c0;
  if (p.rows)
    gemm_rows(rows, cols, p.in, x, p.in, p.rows + h * p.head_stride + c0 * p.in, p.in, bias, out, ldo);
  else
    gemm_packed(rows, cols, p.in, x, p.in, p.packed.get() + h * p.head_stride + c0 * p.in, p.in, bias, out, ldo);
}

// out[rows, width] = x[rows, in] · W_hᵀ + b_h for head h.
void project_rows(const Layer::Projection& p, std::size_t h, const float* x, std::size_t rows, float* out) {
  project_cols(p, h, 0, p.width, x, rows, out, p.width);
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

// Whether a mask, causality (key j > pos(i)) or the sliding window (pos(i) − j ≥ window) masks key
// j for query i (what mask_scores sets to −inf).
bool key_masked(const ForwardArgs& a, const LayerConfig& c, std::size_t b, std::size_t h, std::size_t i,
                std::size_t j) {
  const std::size_t pos = a.position_offset + i, window = c.sliding_window;
  return (a.is_causal && j > pos) || (window && j <= pos && pos - j >= window) ||
         masks_out(a.attn_mask, attn_mask_offset(a, c.num_heads, b, h, i) + j) ||
         masks_out(a.key_padding_mask, b * a.src_len + j);
}

// Query i's scores against keys [j0, j0 + n), in place: scaled, ALiBi's slope·(j − pos(i)) added,
// then the attention mask, the key padding mask, causality and the window applied: bool → -inf,
// float → added.
void mask_scores(const ForwardArgs& a, const LayerConfig& c, double slope, std::size_t b, std::size_t h,
                 std::size_t i, std::size_t j0, float* row, std::size_t n, float scale) {
  const std::size_t heads = c.num_heads, pos = a.position_offset + i;
  if (scale != 1.0f) scale_row(row, n, scale);
  if (slope != 0.0) {
    const double distance0 = static_cast<double>(j0) - static_cast<double>(pos);
    for (std::size_t j = 0; j < n; ++j) row[j] += static_cast<float>(slope * (distance0 + static_cast<double>(j)));
  }
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
    for (std::size_t j = pos + 1 > j0 ? pos + 1 - j0 : 0; j < n; ++j) row[j] = -INFINITY;
  const std::size_t window = c.sliding_window;
  if (window && pos >= window && pos - window + 1 > j0)  // keys j ≤ pos − window
    std::fill(row, row + std::min(n, pos - window + 1 - j0), -INFINITY);
}

bool all_finite(const float* x, std::size_t n) {
  for (std::size_t d = 0; d < n; ++d)
    if (!std::isfinite(x[d])) return false;
  return true;
}

// How a forward runs: fused (no whole score rows) or not, and on how many workers.
struct Plan {
  bool fused = true;
  bool all_heads = false;  // every head projected, then every head attended (else one head at a time)
  bool head_rows = false;  // averaged weights of few rows: each head's rows apart, then summed
  bool parallel = false;
  std::size_t workers = 1;
};

// Scratch floats of the all-heads plan: Q, K, V rows and packed K, V of every head, and the heads'
// results before the out projection.
double all_heads_floats(const LayerConfig& c, const ForwardShape& f) {
  const double L = static_cast<double>(f.tgt_len), S = static_cast<double>(f.src_len);
  const double kv = static_cast<double>(c.kv_heads()), dk = static_cast<double>(c.head_dim_qk);
  const double dv = static_cast<double>(c.head_dim_v), panels_k = static_cast<double>(ceil_div(f.src_len, kPanelWidth));
  const double panels_v = static_cast<double>(ceil_div(c.head_dim_v, kPanelWidth));
  return L * static_cast<double>(c.num_heads) * dk + kv * S * (dk + dv) +
         kv * kPanelWidth * (panels_k * dk + panels_v * S) + L * static_cast<double>(c.attn_width());
}

Plan plan_forward(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t L = f.tgt_len, S = f.src_len, H = c.num_heads, dk = c.head_dim_qk, Hkv = c.kv_heads();
  const std::size_t width_v = c.attn_width(), kv_rows = f.cached ? L : S;
  Plan p;
  // Weights and the teaching copies need whole score rows; otherwise the fused path runs.
  p.fused = !f.weights && !f.intermediates;
  // Chosen by the shape alone, never by the thread count: the two plans may differ in the last bit.
  p.all_heads = f.cached || (!f.intermediates && all_heads_floats(c, f) <= kAllHeadsFloats);
  const double macs = static_cast<double>(f.batch) *
                      (static_cast<double>(L) * c.q_in * H * dk +
                       static_cast<double>(kv_rows) * (c.k_in * Hkv * dk + c.v_in * Hkv * c.head_dim_v) +
                       static_cast<double>(L) * S * H * (dk + c.head_dim_v) +
                       (c.out_projection ? static_cast<double>(L) * width_v * c.output_width() : 0.0));
  p.parallel = macs >= kMinParallelMacs;
  p.workers = p.parallel ? static_cast<std::size_t>(thread_count()) : 1;
  // Averaged weights add the heads of a row in order, so a task is a row block of every head: a few
  // rows (a decode step) then leave threads idle, unless each head's rows are kept apart and summed
  // in the same order afterwards (same bits).
  p.head_rows = !p.fused && f.average_weights && H > 1 && p.all_heads && p.workers > 1 &&
                ceil_div(L, kRowBlock) < 2 * p.workers && static_cast<double>(H) * L * S <= kMaxHeadRowsFloats;
  return p;
}

// The pieces of a forward's scratch, in floats, in the order Scratch::allocate carves them.
struct ScratchSizes {
  std::size_t q, k, v, packed_k, packed_v, kv_flags, scores, block_out, out_rows, attn_rows, head_rows, rope_q, rope_k;
};

// Whether the heads' results need their own rows before the out projection (else they are gathered
// in the output and projected in place): when the widths differ, and when every head is attended at
// once (few rows, a cache: the out projection then splits columns over threads, which in place
// would overwrite rows still read).
bool separate_attn_rows(const LayerConfig& c, const Plan& p) {
  return c.out_projection && (c.output_width() != c.attn_width() || p.all_heads);
}

// One flag per 16 K/V rows (projection tasks start at multiples of 16): set when a value row there
// holds a NaN or ±Inf. Each task writes only its own flags, so no two threads write one.
std::size_t flag_count(std::size_t rows) { return ceil_div(rows, kPanelWidth); }

ScratchSizes scratch_sizes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  const std::size_t L = f.tgt_len, S = f.src_len, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t kv_rows = f.cached ? L : S;  // K and V rows this forward projects
  const std::size_t workers = p.workers;  // per-worker scratch: one set when the forward runs serially
  const bool separate = separate_attn_rows(c, p);
  const std::size_t q_heads = p.all_heads ? c.num_heads : 1, kv_heads = p.all_heads ? c.kv_heads() : 1;
  // With a cache, V rows and packed K and V go into it.
  return {q_heads * L * dk,
          kv_heads * kv_rows * dk,
          f.cached ? 0 : kv_heads * S * dv,
          f.cached ? 0 : kv_heads * packed_panel_floats(S, dk),
          f.cached ? 0 : kv_heads * packed_panel_floats(dv, S),
          kv_heads * flag_count(kv_rows),
          workers * kRowBlock * (p.fused ? kKeyTile : S),
          p.fused ? workers * kRowBlock * dv : 0,
          c.out_projection && !separate ? workers * kProjRows * c.output_width() : 0,
          separate ? L * c.attn_width() : 0,
          p.head_rows ? c.num_heads * L * S : 0,
          L * c.rope.dim,
          kv_rows * c.rope.dim};
}

// 64-byte alignment of each piece of the arena.
std::size_t aligned_floats(std::size_t n) { return (n + 15) / 16 * 16; }

std::size_t arena_floats(const ScratchSizes& z) {
  std::size_t total = 0;
  for (std::size_t n : {z.q, z.k, z.v, z.packed_k, z.packed_v, z.kv_flags, z.scores, z.block_out, z.out_rows,
                        z.attn_rows, z.head_rows, z.rope_q, z.rope_k})
    total += aligned_floats(n);
  return total;
}

}  // namespace

// What the attention of one query head reads: its Q rows and its K/V head, packed (in the scratch or
// in a cache).
struct HeadView {
  const float* q = nullptr;  // [tgt_len, head_dim_qk], scaled unless teaching copies are wanted
  const float* k = nullptr;  // [src_len, head_dim_qk] rows: the teaching copy of skipped scores
  const float* keys_packed = nullptr;
  const float* values_packed = nullptr;
  std::size_t values_ld = 0;      // rows of each packed value panel
  const float* values = nullptr;  // [src_len, head_dim_v] rows, for non-finite values
  bool nonfinite = false;         // some value row holds a NaN or ±Inf (its packed copy is zeros)
};

// The query rows of one attention block: rows [i0, i0 + rows) of head h, or, stacked (a grouped-query
// decode step), all L rows of `heads` consecutive heads from h that share one K/V head, so the
// cached K and V are read once for the group: row r is then query r % L of head h + r / L.
struct BlockRows {
  std::size_t h = 0, heads = 1, i0 = 0, rows = 0, L = 0;
  std::size_t head(std::size_t r) const { return heads > 1 ? h + r / L : h; }
  std::size_t query(std::size_t r) const { return heads > 1 ? r % L : i0 + r; }
  std::size_t i1() const { return heads > 1 ? L : i0 + rows; }
};

BlockRows head_block(std::size_t h, std::size_t blk, std::size_t L) {
  BlockRows br;
  br.h = h;
  br.i0 = blk * kRowBlock;
  br.rows = std::min(L, br.i0 + kRowBlock) - br.i0;
  br.L = L;
  return br;
}

// The heads one projection pass and the attention after it cover: query heads [h0, h1) and K/V heads
// [g0, g1) (empty when the K/V head came with an earlier query head). The scratch holds them from
// slot 0: query head h in slot h − h0, K/V head g in slot g − g0.
struct HeadRange {
  std::size_t h0, h1, g0, g1;
};

// Where K/V head g's keys and values go and are read: packed in the scratch, or in a cache after
// the tokens it holds (j0 of them).
struct KvStore {
  float* keys_packed;
  float* values_packed;
  std::size_t values_ld;  // rows of each packed value panel
  float* value_rows;      // [rows, head_dim_v], for non-finite values
  std::size_t j0;
};

// Working memory of one forward, reused by every batch element (and head): linear in the sequence
// lengths.
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
  // A value row of a K/V head holds a NaN or ±Inf (see flag_count): its packed copy is zeros, so a
  // masked key's 0·NaN does not reach the rows that never see it, and add_nonfinite_values adds it
  // for the rows that do.
  float* kv_flags = nullptr;
  float* scores = nullptr;     // per worker: kRowBlock rows of src_len scores (of kKeyTile when fused)
  float* block_out = nullptr;  // per worker: kRowBlock rows of the fused attention's running output
  float* out_rows = nullptr;   // per worker: kProjRows rows of the output projection
  float* attn_rows = nullptr;  // [tgt_len, heads·head_dim_v] when the out projection changes the width
  float* head_rows = nullptr;  // [heads, tgt_len, src_len]: each head's weights, before their average
  float *rope_q = nullptr, *rope_k = nullptr;  // cos/sin tables of the query and new key positions

  bool allocate(const ScratchSizes& z) {
    if (!arena.allocate(arena_floats(z))) return false;
    float* next = arena.get();
    for (auto piece : {std::make_pair(&q, z.q), std::make_pair(&k, z.k), std::make_pair(&v, z.v),
                       std::make_pair(&packed_k, z.packed_k), std::make_pair(&packed_v, z.packed_v),
                       std::make_pair(&kv_flags, z.kv_flags), std::make_pair(&scores, z.scores), std::make_pair(&block_out, z.block_out),
                       std::make_pair(&out_rows, z.out_rows), std::make_pair(&attn_rows, z.attn_rows),
                       std::make_pair(&head_rows, z.head_rows),
                       std::make_pair(&rope_q, z.rope_q), std::make_pair(&rope_k, z.rope_k)}) {
      *piece.first = piece.second ? next : nullptr;
      next += aligned_floats(piece.second);
    }
    return true;
  }
};

KeyRange attended_keys(const ForwardArgs& a, const LayerConfig& c, std::size_t i0, std::size_t i1) {
  const std::size_t off = a.position_offset, window = c.sliding_window;
  const std::size_t end = a.is_causal ? std::min(a.src_len, off + i1) : a.src_len;
  const std::size_t first = window && off + i0 + 1 > window ? off + i0 + 1 - window : 0;
  return {std::min(first, end) / kPanelWidth * kPanelWidth, end};
}

ForwardShape shape_of(const ForwardArgs& a) {
  ForwardShape f;
  f.batch = a.batch;
  f.tgt_len = a.tgt_len;
  f.src_len = a.src_len;
  f.weights = a.weights != nullptr;
  f.average_weights = a.average_weights;
  f.intermediates = a.intermediates != nullptr;
  f.cached = a.cache != nullptr;
  return f;
}

std::size_t Layer::weights_bytes(const LayerConfig& c) {
  const std::size_t h = c.num_heads, kv = c.kv_heads(), width_v = c.attn_width();
  std::size_t floats = projection_floats(h, c.head_dim_qk, c.q_in) + projection_floats(kv, c.head_dim_qk, c.k_in) +
                       projection_floats(kv, c.head_dim_v, c.v_in);
  if (c.out_projection) floats += projection_floats(1, c.output_width(), width_v);
  if (c.alibi) floats += aligned_floats(h);
  return floats * sizeof(float);
}

std::size_t Layer::workspace_bytes(const LayerConfig& c, const ForwardShape& f) {
  return arena_floats(scratch_sizes(c, f, plan_forward(c, f))) * sizeof(float);
}

ForwardSizes Layer::forward_sizes(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t B = f.batch, L = f.tgt_len, S = f.src_len, H = c.num_heads, Hkv = c.kv_heads();
  const std::size_t width_v = c.attn_width();
  ForwardSizes z;
  z.output = B * L * c.output_width();
  z.weights = f.weights ? B * (f.average_weights ? 1 : H) * L * S : 0;
  if (f.intermediates) {
    z.q = B * L * H * c.head_dim_qk;
    z.k = B * S * Hkv * c.head_dim_qk;
    z.v = B * S * Hkv * c.head_dim_v;
    z.scores = B * H * L * S;  // and as many scaled scores
    z.attn_output = c.out_projection ? B * L * width_v : 0;
  }
  z.workspace_bytes = workspace_bytes(c, f);
  return z;
}

bool Layer::borrow_pays(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t inputs = std::min({c.q_in, c.k_in, c.v_in, c.out_projection ? c.attn_width() : c.q_in});
  const std::size_t widest = std::max({c.q_in, c.k_in, c.v_in, c.attn_width()});
  // gemm_rows puts 4 rows in the lanes: fewer than 3 leave most of them idle, and more than 4 (or a
  // batch) read the weights again per group, which measured slower than packing them once.
  const std::size_t rows = f.batch * std::max(f.tgt_len, f.src_len);
  return !f.cached && std::min(f.tgt_len, f.src_len) >= 3 && rows <= 4 && widest <= kMaxRowsK &&
         rows * kBorrowInputsPerRow <= inputs;
}

Status Layer::init(const LayerConfig& c, const LayerWeights& w) { return init_projections(c, w, false); }

Status Layer::init_borrowed(const LayerConfig& c, const LayerWeights& w) { return init_projections(c, w, true); }

Status Layer::init_projections(const LayerConfig& c, const LayerWeights& w, bool borrow) {
  if (c.q_in == 0 || c.k_in == 0 || c.v_in == 0 || c.num_heads == 0 || c.head_dim_qk == 0 ||
      c.head_dim_v == 0 || !w.wq || !w.wk || !w.wv || (c.out_projection && !w.wo) ||
      c.num_heads % c.kv_heads() != 0 || c.rope.dim % 2 != 0 || c.rope.dim > c.head_dim_qk ||
      (c.rope.dim && !(c.rope.base > 0.0)))
    return Status::invalid_argument;
  config_ = c;
  const std::size_t h = c.num_heads, kv = c.kv_heads();
  Status s = allocate_projection(q_, w.wq, w.bq, h, c.head_dim_qk, c.q_in, borrow);
  if (s == Status::ok) s = allocate_projection(k_, w.wk, w.bk, kv, c.head_dim_qk, c.k_in, borrow);
  if (s == Status::ok) s = allocate_projection(v_, w.wv, w.bv, kv, c.head_dim_v, c.v_in, borrow);
  if (s == Status::ok && c.out_projection)
    s = allocate_projection(o_, w.wo, w.bo, 1, c.output_width(), c.attn_width(), borrow);
  if (s != Status::ok) return s;
  const PackJob jobs[] = {{&q_, w.wq, h}, {&k_, w.wk, kv}, {&v_, w.wv, kv}, {&o_, w.wo, 1}};
  if (!borrow) pack_weights(jobs, c.out_projection ? 4 : 3);
  if (s == Status::ok && c.alibi) {
    if (!alibi_.allocate(h)) return Status::out_of_memory;
    if (w.alibi_slopes)
      std::memcpy(alibi_.get(), w.alibi_slopes, h * sizeof(float));
    else
      alibi_slopes(h, alibi_.get());
  }
  return s;
}

// Key rows placed one by one into Q·Kᵀ panels (pack_transposed's layout) from key `j0` on: a cache
// appends at any length, not only at panel boundaries.
void place_keys(const float* k, std::size_t rows, std::size_t dk, float* packed, std::size_t j0) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t j = j0 + r;
    float* dst = packed + (j / kPanelWidth) * kPanelWidth * dk + j % kPanelWidth;
    for (std::size_t d = 0; d < dk; ++d) dst[d * kPanelWidth] = k[r * dk + d];
  }
}

// Where K/V head g (in scratch slot `slot`) is packed: in the scratch, or in the cache.
KvStore Layer::kv_store(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, const Scratch& s) const {
  const std::size_t S = a.src_len, dk = config_.head_dim_qk, dv = config_.head_dim_v;
  if (a.cache) {
    const KvCache& cache = *a.cache;
    return {cache.keys(b, g), cache.values(b, g), cache.max_length_, cache.value_rows(b, g), cache.length_};
  }
  return {s.packed_k + slot * packed_panel_floats(S, dk), s.packed_v + slot * packed_panel_floats(dv, S), S,
          s.v + slot * S * dv, 0};
}

// 1. Project query heads [h0, h1) and K/V heads [g0, g1) in one parallel pass: row chunks of each
//    head's Q, K and V are independent tasks (a few tokens make one task per head, so heads are what
//    threads share), and each K or V chunk is rotated and packed by the task that made it. With a
//    cache, K and V come from the query and are appended after the tokens it holds.
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
    if (flagged(s, slot, kv_rows)) a.cache->nonfinite_.get()[b * config_.kv_heads() + r.g0 + slot] = 1.0f;
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
  Intermediates* in = a.intermediates;
  float* q = s.q + (slot * L + r0) * dk;
  project_rows(q_, h, a.query + (b * L + r0) * c.q_in, rows, q);
  if (rope) apply_rope(q, rows, dk, s.rope_q + r0 * rope, rope, c.rope.interleaved);
  for (std::size_t i = 0; in && in->q && i < rows; ++i)
    std::memcpy(in->q + (b * L + r0 + i) * c.num_heads * dk + h * dk, q + i * dk, dk * sizeof(float));
  // Scaling Q (L·dk products) instead of the scores (L·S) saves a pass over every score row, as
  // PyTorch does. The teaching copy wants raw Q·Kᵀ, so then the scores are scaled instead.
  if (!in) scale_row(q, rows * dk, a.scale);
}

// The key or value input of K/V rows [r0, …): the query's with a cache.
const float* kv_input(const ForwardArgs& a, std::size_t b, std::size_t r0, const float* x, std::size_t width) {
  return a.cache ? x + (b * a.tgt_len + r0) * width : x + (b * a.src_len + r0) * width;
}

// Key rows [r0, r0 + rows) of K/V head g: projected, rotated, packed for Q·Kᵀ.
void Layer::project_key(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                        std::size_t rows, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t kv_rows = a.cache ? a.tgt_len : a.src_len, dk = c.head_dim_qk, rope = c.rope.dim;
  Intermediates* in = a.intermediates;
  float* k = s.k + (slot * kv_rows + r0) * dk;
  project_rows(k_, g, kv_input(a, b, r0, a.cache ? a.query : a.key, c.k_in), rows, k);
  if (rope) apply_rope(k, rows, dk, s.rope_k + r0 * rope, rope, c.rope.interleaved);
  const KvStore store = kv_store(a, b, g, slot, s);
  const std::size_t j = store.j0 + r0;
  if (j % kPanelWidth == 0)  // whole panels from here (the rest of the last one is zeros)
    pack_transposed(k, rows, dk, dk, store.keys_packed + j * dk);
  else
    place_keys(k, rows, dk, store.keys_packed, j);
  for (std::size_t i = 0; in && in->k && i < rows; ++i)
    std::memcpy(in->k + (b * a.src_len + r0 + i) * c.kv_heads() * dk + g * dk, k + i * dk, dk * sizeof(float));
}

// Value rows [r0, r0 + rows) of K/V head g: projected, packed for P·V; a row with a NaN or ±Inf is
// packed as zeros and flagged.
void Layer::project_value(const ForwardArgs& a, std::size_t b, std::size_t g, std::size_t slot, std::size_t r0,
                          std::size_t rows, Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t dv = c.head_dim_v;
  Intermediates* in = a.intermediates;
  const KvStore store = kv_store(a, b, g, slot, s);
  const std::size_t j = store.j0 + r0;
  float* v = store.value_rows + j * dv;
  project_rows(v_, g, kv_input(a, b, r0, a.cache ? a.query : a.value, c.v_in), rows, v);
  pack_rows(v, rows, dv, dv, store.values_packed + j * kPanelWidth, store.values_ld);
  for (std::size_t i = 0; i < rows; ++i) {
    if (all_finite(v + i * dv, dv)) continue;
    s.kv_flags[slot * flag_count(a.cache ? a.tgt_len : a.src_len) + r0 / kPanelWidth] = 1.0f;
    for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth)
      std::fill_n(store.values_packed + p0 * store.values_ld + (j + i) * kPanelWidth, kPanelWidth, 0.0f);
  }
  for (std::size_t i = 0; in && in->v && i < rows; ++i)
    std::memcpy(in->v + (b * a.src_len + r0 + i) * c.kv_heads() * dv + g * dv, v + i * dv, dv * sizeof(float));
}

// What query head h's attention reads (the heads of `r` in the scratch).
HeadView Layer::view_of(const ForwardArgs& a, std::size_t b, std::size_t h, const HeadRange& r, const Scratch& s) const {
  const LayerConfig& c = config_;
  const std::size_t g = h / (c.num_heads / c.kv_heads()), slot = g - r.g0;
  const std::size_t kv_rows = a.cache ? a.tgt_len : a.src_len;
  const KvStore store = kv_store(a, b, g, slot, s);
  HeadView view;
  view.q = s.q + (h - r.h0) * a.tgt_len * c.head_dim_qk;
  view.k = s.k + slot * kv_rows * c.head_dim_qk;
  view.keys_packed = store.keys_packed;
  view.values_packed = store.values_packed;
  view.values_ld = store.values_ld;
  view.values = store.value_rows;
  view.nonfinite = a.cache ? a.cache->nonfinite_.get()[b * c.kv_heads() + g] != 0.0f : flagged(s, slot, kv_rows);
  return view;
}

// 2. Query head h, rows [blk·kRowBlock, …): scores → scale, mask → softmax → weights → P·V into attn_out.
void Layer::attend_block(const ForwardArgs& a, std::size_t b, std::size_t h, std::size_t blk, std::size_t worker,
                         const Scratch& s, const HeadView& view, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t width_v = H * dv;
  const float score_scale = a.intermediates ? a.scale : 1.0f;  // else folded into Q
  const double slope = c.alibi ? alibi_.get()[h] : 0.0;
  Intermediates* in = a.intermediates;
  float* block_scores = s.scores + worker * kRowBlock * S;
  bool attends[kRowBlock];  // false: every key masked, the row is zeros
  const std::size_t i0 = blk * kRowBlock, i1 = std::min(L, i0 + kRowBlock), rows = i1 - i0;
  // Keys that causality or the window mask for every query of the block are skipped.
  const KeyRange keys = attended_keys(a, c, i0, i1);
  const std::size_t first = keys.first, n = keys.end - keys.first;
  gemm_packed(rows, n, dk, view.q + i0 * dk, dk, view.keys_packed + first * dk, dk, nullptr, block_scores + first, S);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r;
    float* row = block_scores + r * S;
    const std::size_t head_row = (b * H + h) * L + i;
    if (in && in->scores) {
      float* dst = in->scores + head_row * S;
      std::memcpy(dst + first, row + first, n * sizeof(float));
      // Skipped keys were never multiplied; the teaching copy shows their product.
      for (std::size_t j = 0; j < S; ++j) {
        if (j == first) j = keys.end;
        if (j >= S) break;
        float dot = 0.0f;
        for (std::size_t d = 0; d < dk; ++d) dot += view.q[i * dk + d] * view.k[j * dk + d];
        dst[j] = dot;
      }
    }
    mask_scores(a, c, slope, b, h, i, first, row + first, n, score_scale);
    if (in && in->scaled_scores) {
      float* dst = in->scaled_scores + head_row * S;
      std::fill(dst, dst + S, -INFINITY);
      std::memcpy(dst + first, row + first, n * sizeof(float));
    }
    attends[r] = softmax_row(row + first, n);
    if (a.weights) store_weights(a, b, h, i, row, first, keys.end, s.head_rows);
  }
  float* out = attn_out + i0 * width_v + h * dv;
  gemm_packed(rows, dv, n, block_scores + first, S, view.values_packed + first * kPanelWidth, view.values_ld, nullptr,
              out, width_v);
  if (view.nonfinite)
    add_nonfinite_values(a, b, head_block(h, blk, L), view, first, n, block_scores + first, S, attends, out, width_v);
}

// 2'. The same without weights, FlashAttention-style: key tiles of kKeyTile, a running max and
//     sum per query row, the output rescaled when the max grows. No row ever holds all src_len
//     scores, so memory and cache footprint stay flat as sequences grow; with a sliding window
//     only the tiles inside it are visited.
void Layer::attend_block_fused(const ForwardArgs& a, std::size_t b, const BlockRows& br, std::size_t worker,
                               const Scratch& s, const HeadView& view, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v;
  float* tile = s.scores + worker * kRowBlock * kKeyTile;
  float* out = s.block_out + worker * kRowBlock * dv;
  float running_max[kRowBlock], running_sum[kRowBlock];
  bool attends[kRowBlock];  // per tile: false when the row's keys so far are all masked
  const std::size_t i0 = br.i0, rows = br.rows;
  const KeyRange keys = attended_keys(a, c, i0, br.i1());
  std::fill(out, out + rows * dv, 0.0f);
  std::fill(running_max, running_max + rows, -INFINITY);
  std::fill(running_sum, running_sum + rows, 0.0f);
  for (std::size_t j0 = keys.first; j0 < keys.end; j0 += kKeyTile) {
    const std::size_t tk = std::min(kKeyTile, keys.end - j0);
    gemm_packed(rows, tk, dk, view.q + i0 * dk, dk, view.keys_packed + j0 * dk, dk, nullptr, tile, kKeyTile);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t h = br.head(r), i = br.query(r);
      float* row = tile + r * kKeyTile;
      attends[r] = true;
      if (std::isnan(running_sum[r])) {  // a NaN met earlier: the whole row is NaN
        std::fill(row, row + tk, NAN);
        continue;
      }
      mask_scores(a, c, c.alibi ? alibi_.get()[h] : 0.0, b, h, i, j0, row, tk, 1.0f);
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
    gemm_packed_accumulate(rows, dv, tk, tile, kKeyTile, view.values_packed + j0 * kPanelWidth, view.values_ld, out,
                           dv);
    if (view.nonfinite) add_nonfinite_values(a, b, br, view, j0, tk, tile, kKeyTile, attends, out, dv);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    // A query whose every key is masked attends to nothing: zeros, not 0/0. A NaN sum stays NaN.
    const float inv = running_sum[r] == 0.0f ? 0.0f : 1.0f / running_sum[r];
    float* dst = attn_out + br.query(r) * H * dv + br.head(r) * dv;
    for (std::size_t d = 0; d < dv; ++d) dst[d] = out[r * dv + d] * inv;
  }
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

// A value row with a NaN or ±Inf was left out of the P·V product (its packed copy is zeros); this
// adds p·v for it to the rows [i0, i0 + rows) that attend and do not mask it: so 0·NaN is NaN
// exactly where a float64 evaluation has it. p: the block's rows' weights for keys [j0, j0 + keys).
void Layer::add_nonfinite_values(const ForwardArgs& a, std::size_t b, const BlockRows& br, const HeadView& view,
                                 std::size_t j0, std::size_t keys, const float* p, std::size_t ldp, const bool* attends,
                                 float* out, std::size_t ldo) const {
  const std::size_t dv = config_.head_dim_v;
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

// 3. Output projection, in place when in == out: each row chunk is read before it is overwritten.
//    Not in place, few rows (a decode step) also split the columns, by whole panels, over threads.
void Layer::project_output(std::size_t rows_total, Scratch& s, const float* in, float* out) const {
  const std::size_t width = o_.width, in_width = o_.in;
  const std::size_t chunk = s.chunk(rows_total), row_tasks = ceil_div(rows_total, chunk);
  const std::size_t panels = ceil_div(width, kPanelWidth);
  const std::size_t wanted = in != out && s.parallel ? std::min(panels, ceil_div(4 * s.workers, row_tasks)) : 1;
  const std::size_t group = ceil_div(panels, wanted) * kPanelWidth, groups = ceil_div(width, group);
  s.run(row_tasks * groups, [&](std::size_t t, std::size_t worker) {
    const std::size_t r0 = (t / groups) * chunk, rows = std::min(rows_total, r0 + chunk) - r0;
    if (in != out) {
      const std::size_t c0 = (t % groups) * group, cols = std::min(width, c0 + group) - c0;
      project_cols(o_, 0, c0, cols, in + r0 * in_width, rows, out + r0 * width + c0, width);
      return;
    }
    float* tmp = s.out_rows + worker * kProjRows * width;
    project_cols(o_, 0, 0, width, in + r0 * in_width, rows, tmp, width);
    std::memcpy(out + r0 * width, tmp, rows * width * sizeof(float));
  });
}

// 2''. The attention of query heads [h0, h1) in one parallel pass: a task is a row block of one head,
//      so a few tokens still make a task per head. Averaged weights add the heads of a row in order,
//      so then a task is a row block of every head. A grouped-query step with few rows stacks the
//      heads that share a K/V head into one block, so K and V are read once per stack.
void Layer::attend(const ForwardArgs& a, std::size_t b, const HeadRange& r, const Scratch& s, bool fused,
                   float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, H = c.num_heads, Hkv = c.kv_heads(), group = H / Hkv, heads = r.h1 - r.h0;
  const std::size_t blocks = ceil_div(L, kRowBlock);
  if (fused && group > 1 && heads == H && group * L <= kRowBlock) {
    // Stacks of `per` heads, enough of them for every thread (the shape alone decides).
    const std::size_t per = ceil_div(group, std::min(group, ceil_div(kMinStackTasks, Hkv)));
    const std::size_t stacks = ceil_div(group, per);
    s.run(Hkv * stacks, [&](std::size_t t, std::size_t worker) {
      const std::size_t g = t / stacks, first = g * group + t % stacks * per;
      BlockRows br;
      br.h = first;
      br.heads = std::min(per, (g + 1) * group - first);
      br.rows = br.heads * L;
      br.L = L;
      attend_block_fused(a, b, br, worker, s, view_of(a, b, first, r, s), attn_out);
    });
    return;
  }
  if (!fused && a.average_weights && H > 1 && heads > 1 && s.head_rows) {
    s.run(heads * blocks, [&](std::size_t t, std::size_t worker) {
      const std::size_t h = r.h0 + t / blocks;
      attend_block(a, b, h, t % blocks, worker, s, view_of(a, b, h, r, s), attn_out);
    });
    average_head_rows(a, b, s);
    return;
  }
  if (!fused && a.average_weights && H > 1 && heads > 1) {
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

Status Layer::forward(const ForwardArgs& a) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, Hkv = c.kv_heads(), group = H / Hkv;
  const std::size_t width_v = c.attn_width(), out_width = c.output_width();
  KvCache* cache = a.cache;
  if (L == 0 || S == 0 || a.batch == 0 || !a.query || !a.output || c.q_in == 0) return Status::invalid_argument;
  if (cache ? !cache->fits(c) || a.batch != cache->batch_ || cache->length_ + L != S || S > cache->max_length_ ||
                  a.intermediates || c.k_in != c.q_in || c.v_in != c.q_in
            : !a.key || !a.value)
    return Status::invalid_argument;

  const ForwardShape shape = shape_of(a);
  const Plan plan = plan_forward(c, shape);
  Scratch s;
  s.parallel = plan.parallel;
  s.workers = plan.workers;
  if (!s.allocate(scratch_sizes(c, shape, plan))) return Status::out_of_memory;
  if (c.rope.dim) {
    rope_table(a.position_offset, L, c.rope.dim, c.rope.base, s.rope_q);
    rope_table(cache ? cache->length_ : 0, cache ? L : S, c.rope.dim, c.rope.base, s.rope_k);
  }

  for (std::size_t b = 0; b < a.batch; ++b) {
    // With an out projection of the same width (one head at a time), the heads' results are gathered
    // in `output` and projected in place.
    float* attn_out = s.attn_rows ? s.attn_rows : a.output + b * L * width_v;
    if (plan.all_heads) {
      const HeadRange all{0, H, 0, Hkv};
      project(a, b, all, s);
      attend(a, b, all, s, plan.fused, attn_out);
    } else {
      // Query heads [g·group, (g+1)·group) share K/V head g, projected once with the first of them.
      for (std::size_t g = 0; g < Hkv; ++g)
        for (std::size_t h = g * group; h < (g + 1) * group; ++h) {
          const HeadRange one{h, h + 1, g, h == g * group ? g + 1 : g};
          project(a, b, one, s);
          attend(a, b, one, s, plan.fused, attn_out);
        }
    }
    if (a.intermediates && a.intermediates->attn_output)
      std::memcpy(a.intermediates->attn_output + b * L * width_v, attn_out, L * width_v * sizeof(float));
    if (c.out_projection) project_output(L, s, attn_out, a.output + b * L * out_width);
  }
  if (cache) cache->length_ = S;
  if (s.parallel) parallel_rest();
  return Status::ok;
}

std::size_t KvCache::key_floats() const { return packed_panel_floats(max_length_, dk_); }
std::size_t KvCache::value_floats() const { return packed_panel_floats(dv_, max_length_); }

double KvCache::bytes(const LayerConfig& c, std::size_t batch, std::size_t max_length) {
  const double heads = static_cast<double>(batch) * static_cast<double>(c.kv_heads());
  const double rows = static_cast<double>(ceil_div(max_length, kPanelWidth) * kPanelWidth);
  const double dv_panels = static_cast<double>(ceil_div(c.head_dim_v, kPanelWidth) * kPanelWidth);
  const double per_head = rows * static_cast<double>(c.head_dim_qk) + dv_panels * static_cast<double>(max_length) +
                          static_cast<double>(max_length) * static_cast<double>(c.head_dim_v) + 1.0;
  return heads * per_head * sizeof(float);
}

bool KvCache::fits(const LayerConfig& c) const {
  return kv_heads_ == c.kv_heads() && dk_ == c.head_dim_qk && dv_ == c.head_dim_v;
}

Status KvCache::init(const LayerConfig& c, std::size_t batch, std::size_t max_length) {
  if (batch == 0 || max_length == 0 || c.head_dim_qk == 0 || c.head_dim_v == 0) return Status::invalid_argument;
  kv_heads_ = c.kv_heads();
  dk_ = c.head_dim_qk;
  dv_ = c.head_dim_v;
  batch_ = batch;
  max_length_ = max_length;
  length_ = 0;
  const std::size_t heads = batch * kv_heads_;
  if (!keys_.allocate(heads * key_floats()) || !values_.allocate(heads * value_floats()) ||
      !value_rows_.allocate(heads * max_length * dv_) || !nonfinite_.allocate(heads))
    return Status::out_of_memory;
  // The key panels' unused lanes are read by the GEMM (and dropped): zeros, never garbage.
  std::fill_n(keys_.get(), heads * key_floats(), 0.0f);
  std::fill_n(nonfinite_.get(), heads, 0.0f);
  return Status::ok;
}

}  // namespace wa
