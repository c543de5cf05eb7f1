// One key tile of a K/V head as the GEMM kernels read it: the float panels themselves, or, from a
// reduced (f16/bf16) cache, its 16-bit panels as stored (a decode step's few query rows:
// the f32-f16w and f32-bf16w GEMMs' few-rows path widens each step in registers) or the tile's panels widened into the
// worker's scratch right before use (more rows, which then share one widening). Both give
// gemm_packed's bits on the widened values. Only a tile is ever widened, never a whole cache: decode
// reads the cache once, at 16 bits a value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../kernels/f32-gemm.h"
#include "../kernels/kv-half.h"
#include "../kernels/packed-matrix.h"
#include "heads.h"
#include "plan.h"

namespace wa {

// Keys per tile read from a reduced cache: fewer than kKeyTile, so that the widened K and V of a
// tile (64·64 floats each at head width 64) stay in L1 between the widening and the kernel.
constexpr std::size_t kReducedKeyTile = 64;

// The key tile of a view's attention: kKeyTile, or kReducedKeyTile from a reduced cache.
inline std::size_t key_tile_of(const HeadView& view) { return view.dtype == KvDtype::f32 ? kKeyTile : kReducedKeyTile; }

// Floats of one worker's widening scratch: K panels of kReducedKeyTile keys, and every V panel of them.
inline std::size_t kv_tile_floats(std::size_t dk, std::size_t dv) {
  return kReducedKeyTile * dk + ceil_div(dv, kPanelWidth) * kPanelWidth * kReducedKeyTile;
}

// Query rows that read a reduced tile as stored. The reduced GEMMs' tiles are two rows high, so 3 or 4
// rows (a decode step's query heads of one K/V head) widen each 16-bit step twice, in registers:
// for bf16 (a shift) still less than writing floats to scratch and reading them back, for f16 (whose
// keys take the Inf/NaN-aware widening) more (GQA 2048/32/8 after 4096 tokens: bf16 0.89×, f16 1.07×
// the scratch path's time).
inline std::size_t stored_tile_rows(KvDtype dtype) { return dtype == KvDtype::bf16 ? kReducedRowsMax : 2; }

// Keys [j0, j0 + tk): Q·Kᵀ panels (key j0 first, dk steps each) and P·V panels of values_ld rows, as
// floats or (`stored`) as the cache's 16-bit panels.
struct KeyTile {
  const float* keys = nullptr;
  const float* values = nullptr;
  std::size_t values_ld = 0;
  bool stored = false;
  ReducedPanels keys16, values16;

  static KeyTile floats(const float* keys, const float* values, std::size_t values_ld) {
    KeyTile t;
    t.keys = keys;
    t.values = values;
    t.values_ld = values_ld;
    return t;
  }
};

// j0 is a multiple of kPanelWidth and tk ≤ key_tile_of(view); `rows` query rows will read the tile.
// `scratch` (kv_tile_floats, 64-byte aligned) is only touched for a reduced cache read by more than
// stored_tile_rows rows.
inline KeyTile key_tile(const HeadView& view, std::size_t j0, std::size_t tk, std::size_t dk, std::size_t dv,
                        float* scratch, std::size_t rows) {
  if (view.dtype == KvDtype::f32)
    return KeyTile::floats(view.keys_packed + j0 * dk, view.values_packed + j0 * kPanelWidth, view.values_ld);
  const bool bf16 = view.dtype == KvDtype::bf16;
  if (rows <= stored_tile_rows(view.dtype)) {
    KeyTile t;
    t.stored = true;
    t.keys16.dtype = t.values16.dtype = bf16 ? WeightDtype::bf16 : WeightDtype::f16;
    t.keys16.data = reinterpret_cast<const std::uint8_t*>(view.keys16 + j0 * dk);
    t.keys16.packed_k = dk;
    t.values16.data = reinterpret_cast<const std::uint8_t*>(view.values16 + j0 * kPanelWidth);
    t.values16.packed_k = view.values_ld;
    t.values16.specials = false;  // a value row with an Inf or NaN is zeros in the panels (added apart)
    return t;
  }
  // Whole key panels (their unused lanes are read by the kernel and dropped).
  kv_widen_n(view.keys16 + j0 * dk, ceil_div(tk, kPanelWidth) * kPanelWidth * dk, bf16, scratch);
  float* values = scratch + kReducedKeyTile * dk;
  for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth)
    kv_widen_n(view.values16 + p0 * view.values_ld + j0 * kPanelWidth, tk * kPanelWidth, bf16,
               values + p0 * kReducedKeyTile);
  return KeyTile::floats(scratch, values, kReducedKeyTile);
}

// scores [rows × tk] (row stride ld) = q [rows × dk] · the tile's keysᵀ.
inline void tile_scores(const KeyTile& kv, std::size_t rows, std::size_t tk, std::size_t dk, const float* q,
                        float* scores, std::size_t ld) {
  if (kv.stored)
    gemm_reduced(rows, tk, dk, q, dk, kv.keys16, nullptr, scores, ld, false);
  else
    gemm_packed(rows, tk, dk, q, dk, kv.keys, dk, nullptr, scores, ld);
}

// out [rows × dv] (row stride ldo) += p [rows × tk] · the tile's values.
inline void tile_accumulate(const KeyTile& kv, std::size_t rows, std::size_t dv, std::size_t tk, const float* p,
                            std::size_t ldp, float* out, std::size_t ldo) {
  if (kv.stored)
    gemm_reduced(rows, dv, tk, p, ldp, kv.values16, nullptr, out, ldo, true);
  else
    gemm_packed_accumulate(rows, dv, tk, p, ldp, kv.values, kv.values_ld, out, ldo);
}

// Whether value row j of a reduced cache's view holds no Inf or NaN (such rows are added outside
// the P·V product, from the rows).
inline bool reduced_value_row_finite(const HeadView& view, std::size_t j, std::size_t dv) {
  const bool bf16 = view.dtype == KvDtype::bf16;
  const std::uint16_t* v = view.value_rows16 + j * dv;
  for (std::size_t d = 0; d < dv; ++d)
    if (kv_half_nonfinite(v[d], bf16)) return false;
  return true;
}

}  // namespace wa
