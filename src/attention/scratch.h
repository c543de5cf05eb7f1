// A forward's working memory: one arena carved into named pieces, each piece named once in
// WA_SCRATCH_PIECES (the sizes, the arena's total and the pointers are generated from that list),
// and the way a forward hands its tasks to threads.
#pragma once

#include <algorithm>
#include <cstddef>

#include "../attention.h"
#include "../buffer.h"
#include "../kernels/f32-gemm.h"
#include "../parallel.h"
#include "plan.h"

namespace wa {

// The pieces, in the order the arena holds them (what each holds: scratch_sizes).
// clang-format off
#define WA_SCRATCH_PIECES(X) \
  X(q) X(k) X(v) X(packed_k) X(packed_v) X(kv_flags) X(scores) X(block_out) X(out_rows) X(attn_rows) X(head_rows) \
  X(rope_q) X(rope_k) X(kv_tile)
// clang-format on

// Floats of each piece (in double: a size that passes size_t is refused, never wrapped).
struct ScratchSizes {
#define WA_SCRATCH_SIZE(name) double name = 0;
  WA_SCRATCH_PIECES(WA_SCRATCH_SIZE)
#undef WA_SCRATCH_SIZE
};

ScratchSizes scratch_sizes(const LayerConfig& config, const ForwardShape& shape, const Plan& plan);
double arena_floats(const ScratchSizes& sizes);

// One flag per 16 K/V rows (projection tasks start at multiples of 16): set when a value row there
// holds a NaN or ±Inf. Each task writes only its own flags, so no two threads write one.
inline std::size_t flag_count(std::size_t rows) { return ceil_div(rows, kPanelWidth); }

// Working memory of one forward, reused by every batch element (and head): linear in the sequence
// lengths.
struct Scratch {
  // Below about a million multiply-adds, handing tasks to another thread costs more than it saves.
  bool parallel = true;
  std::size_t workers = 1;
  // One allocation carved into 64-byte aligned pieces: fewer calls into malloc for small forwards.
  FloatBuffer arena;
#define WA_SCRATCH_POINTER(name) float* name = nullptr;
  WA_SCRATCH_PIECES(WA_SCRATCH_POINTER)
#undef WA_SCRATCH_POINTER

  explicit Scratch(const Plan& plan) : parallel(plan.parallel), workers(plan.workers) {}
  bool allocate(const ScratchSizes& sizes);

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
};

// Whether the heads' results need their own rows before the out projection (else they are gathered
// in the output and projected in place): when the widths differ, and when every head is attended at
// once (few rows, a cache: the out projection then splits columns over threads, which in place
// would overwrite rows still read).
inline bool separate_attn_rows(const LayerConfig& c, const Plan& p) {
  return c.out_projection && (c.output_width() != c.attn_width() || p.all_heads);
}

}  // namespace wa
