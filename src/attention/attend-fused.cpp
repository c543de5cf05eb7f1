// 2'. The attention without weights, FlashAttention-style: key tiles of kKeyTile, a running max and
//     sum per query row, the output rescaled when the max grows. No row ever holds all src_len
//     scores, so memory and cache footprint stay flat as sequences grow; with a sliding window
//     only the tiles inside it are visited.
#include <algorithm>
#include <cmath>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "../kernels/f32-softmax.h"
#include "heads.h"
#include "kv-tile.h"
#include "masking.h"
#include "scratch.h"

namespace wa {
namespace {

// The running state of a block's rows.
struct RunningRows {
  float max[kRowBlock], sum[kRowBlock];
  bool attends[kRowBlock];  // per tile: false when the row's scores so far are all −inf
  // A key not masked scored −inf (through arithmetic): if no score of the row is finite, the row is
  // NaN as in float64 (exp(−inf − (−inf))), where a row whose every key is masked is zeros.
  bool unmasked_inf[kRowBlock];
};

// Folds one tile of row r's masked scores into its running max and sum: the scores become
// exp(score − max), and the row's output so far is rescaled when the max grows. Returns false when
// every score of the row so far is −inf.
bool fold_tile(float* row, std::size_t tk, RunningRows& run, std::size_t r, float* out_row, std::size_t dv) {
  const float new_max = std::fmax(run.max[r], row_max(row, tk));
  if (new_max == -INFINITY) {
    // This tile adds nothing, unless a score is NaN (the max skips it).
    const bool nan = has_nan(row, tk);
    if (nan) run.sum[r] = NAN;
    run.attends[r] = nan;
    std::fill(row, row + tk, nan ? NAN : 0.0f);
    return nan;
  }
  const float rescale = run.max[r] == -INFINITY ? 0.0f : std::exp(run.max[r] - new_max);
  run.sum[r] = run.sum[r] * rescale + exp_minus_max_sum(row, tk, new_max);
  if (rescale != 1.0f) scale_row(out_row, dv, rescale);
  run.max[r] = new_max;
  return true;
}

}  // namespace

void Layer::attend_block_fused(const ForwardArgs& a, std::size_t b, const BlockRows& br, std::size_t worker,
                               const Scratch& s, const HeadView& view, float* attn_out) const {
  const LayerConfig& c = config_;
  const std::size_t H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v, rows = br.rows;
  float* tile = s.scores + worker * kRowBlock * kKeyTile;
  float* out = s.block_out + worker * kRowBlock * dv;
  float* widened = s.kv_tile ? s.kv_tile + worker * kv_tile_floats(dk, dv) : nullptr;
  RunningRows run;
  const KeyRange keys = attended_keys(a, c, br.i0, br.i1());
  std::fill(out, out + rows * dv, 0.0f);
  std::fill(run.max, run.max + rows, -INFINITY);
  std::fill(run.sum, run.sum + rows, 0.0f);
  std::fill(run.unmasked_inf, run.unmasked_inf + rows, false);
  const std::size_t step = key_tile_of(view);
  for (std::size_t j0 = keys.first; j0 < keys.end; j0 += step) {
    const std::size_t tk = std::min(step, keys.end - j0);
    const KeyTile kv = key_tile(view, j0, tk, dk, dv, widened, rows);
    tile_scores(kv, rows, tk, dk, view.q + br.i0 * dk, tile, kKeyTile);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t h = br.head(r);
      float* row = tile + r * kKeyTile;
      run.attends[r] = true;
      if (std::isnan(run.sum[r])) {  // a NaN met earlier: the whole row is NaN
        std::fill(row, row + tk, NAN);
        continue;
      }
      mask_scores(a, c, c.alibi ? alibi_.get()[h] : 0.0, b, h, br.query(r), j0, row, tk, 1.0f);
      if (!fold_tile(row, tk, run, r, out + r * dv, dv) && !run.unmasked_inf[r])
        run.unmasked_inf[r] = !keys_masked(a, c, b, h, br.query(r), j0, tk);
    }
    tile_accumulate(kv, rows, dv, tk, tile, kKeyTile, out, dv);
    if (view.nonfinite({j0, j0 + tk}))
      add_nonfinite_values(a, b, br, view, j0, tk, tile, kKeyTile, run.attends, out, dv);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    // A query whose every key is masked attends to nothing: zeros, not 0/0. A NaN sum stays NaN.
    const float none = run.unmasked_inf[r] ? NAN : 0.0f;
    const float inv = run.sum[r] == 0.0f ? none : 1.0f / run.sum[r];
    float* dst = attn_out + br.query(r) * H * dv + br.head(r) * dv;
    for (std::size_t d = 0; d < dv; ++d) dst[d] = out[r * dv + d] * inv;
  }
}

}  // namespace wa
