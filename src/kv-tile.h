// One key tile of a K/V head as the GEMM kernels read it: the float panels themselves, or, from a
// reduced (f16/bf16) cache, the tile's panels widened into the worker's scratch right before use.
// Only a tile is ever widened, never a whole cache: decode reads the cache once, at 16 bits a value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heads.h"
#include "kernels/f32-gemm.h"
#include "kernels/kv-half.h"
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

// Keys [j0, j0 + tk): Q·Kᵀ panels (key j0 first, dk steps each) and P·V panels of values_ld rows.
struct KeyTile {
  const float* keys;
  const float* values;
  std::size_t values_ld;
};

// j0 is a multiple of kPanelWidth and tk ≤ key_tile_of(view). `scratch` (kv_tile_floats, 64-byte aligned) is
// only touched for a reduced cache.
inline KeyTile key_tile(const HeadView& view, std::size_t j0, std::size_t tk, std::size_t dk, std::size_t dv,
                        float* scratch) {
  if (view.dtype == KvDtype::f32)
    return {view.keys_packed + j0 * dk, view.values_packed + j0 * kPanelWidth, view.values_ld};
  const bool bf16 = view.dtype == KvDtype::bf16;
  // Whole key panels (their unused lanes are read by the kernel and dropped).
  kv_widen_n(view.keys16 + j0 * dk, ceil_div(tk, kPanelWidth) * kPanelWidth * dk, bf16, scratch);
  float* values = scratch + kReducedKeyTile * dk;
  for (std::size_t p0 = 0; p0 < dv; p0 += kPanelWidth)
    kv_widen_n(view.values16 + p0 * view.values_ld + j0 * kPanelWidth, tk * kPanelWidth, bf16,
               values + p0 * kReducedKeyTile);
  return {scratch, values, kReducedKeyTile};
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
