// The size of each piece of a forward's scratch, and the arena carved from them.
#include "scratch.h"

namespace wa {

ScratchSizes scratch_sizes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  const std::size_t L = f.tgt_len, S = f.src_len, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t kv_rows = f.cached ? L : S;  // K and V rows this forward projects
  const std::size_t workers = p.workers;         // per-worker scratch: one set when the forward runs serially
  const std::size_t q_heads = p.all_heads ? c.num_heads : 1, num_kv_heads = p.all_heads ? c.num_kv_heads : 1;
  ScratchSizes z;
  z.q = q_heads * L * dk;             // Q rows of the heads attended next, scaled unless teaching copies are wanted
  z.k = num_kv_heads * kv_rows * dk;  // K rows (the teaching copy of skipped scores reads them)
  // With a cache, V rows and packed K and V go into it.
  z.v = f.cached ? 0 : num_kv_heads * S * dv;  // V rows, for non-finite values
  z.packed_k = f.cached ? 0 : num_kv_heads * packed_panel_floats(S, dk);
  z.packed_v = f.cached ? 0 : num_kv_heads * packed_panel_floats(dv, S);
  // A value row of a K/V head holds a NaN or ±Inf: its packed copy is zeros, so a masked key's 0·NaN
  // does not reach the rows that never see it, and the attention adds it for the rows that do.
  z.kv_flags = num_kv_heads * flag_count(kv_rows);
  z.scores = workers * kRowBlock * (p.fused ? kKeyTile : S);  // per worker: a block's score rows
  z.block_out = p.fused ? workers * kRowBlock * dv : 0;       // per worker: the fused running output
  const bool separate = separate_attn_rows(c, p);
  z.out_rows = c.out_projection && !separate ? workers * kProjRows * c.output_width() : 0;  // out projection
  z.attn_rows = separate ? L * c.attn_width() : 0;      // [tgt_len, heads·head_dim_v]: the heads' results
  z.head_rows = p.head_rows ? c.num_heads * L * S : 0;  // [heads, tgt_len, src_len]: weights before averaging
  z.rope_q = L * c.rope.dim;                            // cos/sin tables of the query positions
  z.rope_k = kv_rows * c.rope.dim;                      // and of the new key positions
  return z;
}

std::size_t arena_floats(const ScratchSizes& z) {
  std::size_t total = 0;
#define WA_SCRATCH_ADD(name) total += aligned_floats(z.name);
  WA_SCRATCH_PIECES(WA_SCRATCH_ADD)
#undef WA_SCRATCH_ADD
  return total;
}

bool Scratch::allocate(const ScratchSizes& z) {
  if (!arena.allocate(arena_floats(z))) return false;
  float* next = arena.get();
#define WA_SCRATCH_CARVE(name)    \
  name = z.name ? next : nullptr; \
  next += aligned_floats(z.name);
  WA_SCRATCH_PIECES(WA_SCRATCH_CARVE)
#undef WA_SCRATCH_CARVE
  return true;
}

}  // namespace wa
