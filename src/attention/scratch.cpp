// The size of each piece of a forward's scratch, and the arena carved from them.
#include "scratch.h"

#include <cmath>
#include <cstdint>

#include "kv-tile.h"

namespace wa {

namespace {

// Floats of n rows (or columns) rounded up to whole 16-wide panels.
double panel_rows(double n) { return std::ceil(n / kPanelWidth) * kPanelWidth; }

// 64-byte alignment of each piece of the arena.
double aligned(double floats) { return std::ceil(floats / 16) * 16; }

}  // namespace

// Counted in double (exact below 2^53), so that no size wraps where size_t has 32 bits.
ScratchSizes scratch_sizes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  const double L = static_cast<double>(f.tgt_len), S = static_cast<double>(f.src_len);
  const double dk = static_cast<double>(c.head_dim_qk), dv = static_cast<double>(c.head_dim_v);
  const double kv_rows = f.cached ? L : S;                // K and V rows this forward projects
  const double workers = static_cast<double>(p.workers);  // per-worker scratch: one set when the forward runs serially
  const double q_heads = static_cast<double>(p.all_heads ? c.num_heads : 1);
  const double num_kv_heads = static_cast<double>(p.all_heads ? c.num_kv_heads : 1);
  ScratchSizes z;
  z.q = q_heads * L * dk;             // Q rows of the heads attended next, scaled unless teaching copies are wanted
  z.k = num_kv_heads * kv_rows * dk;  // K rows (the teaching copy of skipped scores reads them)
  // With a cache, V rows and packed K and V go into it.
  // V rows, for non-finite values; with a reduced cache, the rows projected before they are rounded into it.
  const bool reduced = f.cached && f.cache_dtype != KvDtype::f32;
  z.v = f.cached ? (reduced ? num_kv_heads * L * dv : 0) : num_kv_heads * S * dv;
  z.packed_k = f.cached ? 0 : num_kv_heads * panel_rows(S) * dk;
  z.packed_v = f.cached ? 0 : num_kv_heads * panel_rows(dv) * S;
  // A value row of a K/V head holds a NaN or ±Inf: its packed copy is zeros, so a masked key's 0·NaN
  // does not reach the rows that never see it, and the attention adds it for the rows that do.
  z.kv_flags = num_kv_heads * panel_rows(kv_rows) / kPanelWidth;
  z.scores = workers * kRowBlock * (p.fused ? kKeyTile : S);  // per worker: a block's score rows
  z.block_out = p.fused ? workers * kRowBlock * dv : 0;       // per worker: the fused running output
  const bool separate = separate_attn_rows(c, p);
  z.out_rows = c.out_projection && !separate ? workers * kProjRows * c.output_width() : 0;  // out projection
  z.attn_rows = separate ? L * c.attn_width() : 0;      // [tgt_len, heads·head_dim_v]: the heads' results
  z.head_rows = p.head_rows ? c.num_heads * L * S : 0;  // [heads, tgt_len, src_len]: weights before averaging
  z.rope_q = L * c.rope.dim;                            // cos/sin tables of the query positions
  z.rope_k = kv_rows * c.rope.dim;                      // and of the new key positions
  // per worker: a reduced cache's key tile widened to floats (kv-tile.h)
  z.kv_tile = reduced ? workers * static_cast<double>(kv_tile_floats(c.head_dim_qk, c.head_dim_v)) : 0;
  return z;
}

double arena_floats(const ScratchSizes& z) {
  double total = 0;
#define WA_SCRATCH_ADD(name) total += aligned(z.name);
  WA_SCRATCH_PIECES(WA_SCRATCH_ADD)
#undef WA_SCRATCH_ADD
  return total;
}

bool Scratch::allocate(const ScratchSizes& z) {
  const double total = arena_floats(z);
  if (!(total <= static_cast<double>(SIZE_MAX / sizeof(float) / 2)) || !arena.allocate(static_cast<std::size_t>(total)))
    return false;
  float* next = arena.get();
#define WA_SCRATCH_CARVE(name)    \
  name = z.name ? next : nullptr; \
  next += static_cast<std::size_t>(aligned(z.name));
  WA_SCRATCH_PIECES(WA_SCRATCH_CARVE)
#undef WA_SCRATCH_CARVE
  return true;
}

}  // namespace wa
