// How the forward names what it works on: the heads one pass covers (HeadRange), where a K/V head
// is stored (KvStore), what one query head's attention reads (HeadView) and the query rows of one
// attention block (BlockRows).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "plan.h"

namespace wa {

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
  // A reduced cache (dtype f16 or bf16): the same three, 16 bits each, instead of the float ones.
  KvDtype dtype = KvDtype::f32;
  std::uint16_t* keys16 = nullptr;
  std::uint16_t* values16 = nullptr;
  std::uint16_t* value_rows16 = nullptr;
};

// What the attention of one query head reads: its Q rows and its K/V head, packed (in the scratch or
// in a cache).
struct HeadView {
  const float* q = nullptr;  // [tgt_len, head_dim_qk], scaled unless teaching copies are wanted
  const float* k = nullptr;  // [src_len, head_dim_qk] rows: the teaching copy of skipped scores
  const float* keys_packed = nullptr;
  const float* values_packed = nullptr;
  std::size_t values_ld = 0;      // rows of each packed value panel
  const float* values = nullptr;  // [src_len, head_dim_v] rows, for non-finite values
  const float* flags = nullptr;   // the K/V head's flags in the scratch (see flag_count); null with a cache
  bool cached_nonfinite = false;  // with a cache: some value row it holds is not finite
  // A reduced cache: keys, values and value rows 16 bits each (the float pointers above are null).
  KvDtype dtype = KvDtype::f32;
  const std::uint16_t* keys16 = nullptr;
  const std::uint16_t* values16 = nullptr;
  const std::uint16_t* value_rows16 = nullptr;

  // Whether a value row of `keys` holds a NaN or ±Inf (its packed copy is then zeros). Only the flags
  // of those keys are read, so a block's check costs its key range and a windowed forward O(L·w).
  bool nonfinite(KeyRange keys) const {
    if (!flags) return cached_nonfinite;
    for (std::size_t f = keys.first / kPanelWidth; f < ceil_div(keys.end, kPanelWidth); ++f)
      if (flags[f] != 0.0f) return true;
    return false;
  }
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

// Row block blk (of kRowBlock rows) of head h's L rows.
inline BlockRows head_block(std::size_t h, std::size_t blk, std::size_t L) {
  BlockRows br;
  br.h = h;
  br.i0 = blk * kRowBlock;
  br.rows = std::min(L, br.i0 + kRowBlock) - br.i0;
  br.L = L;
  return br;
}

// `heads` query heads from `first` stacked into one block of all their L rows.
inline BlockRows stacked_block(std::size_t first, std::size_t heads, std::size_t L) {
  BlockRows br;
  br.h = first;
  br.heads = heads;
  br.rows = heads * L;
  br.L = L;
  return br;
}

}  // namespace wa
