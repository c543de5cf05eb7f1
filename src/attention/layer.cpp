// A layer's forward, stage by stage: check the arguments, allocate the scratch of its plan, then per
// batch element 1. project (projection.cpp), 2. attend (attend.cpp, attend-fused.cpp), 3. project
// the heads' results out.
#include <cstring>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "heads.h"
#include "positions.h"
#include "recorder.h"
#include "scratch.h"
#include "weights.h"

namespace wa {
namespace {

bool valid_args(const ForwardArgs& a, const LayerConfig& c) {
  if (a.tgt_len == 0 || a.src_len == 0 || a.batch == 0 || !a.query || !a.output || c.q_in == 0) return false;
  const KvCache* cache = a.cache;
  if (!cache) return a.key && a.value;
  return cache->fits(c) && a.batch == cache->batch() && cache->length() + a.tgt_len == a.src_len &&
         a.src_len <= cache->max_length() && !a.intermediates && c.k_in == c.q_in && c.v_in == c.q_in;
}

}  // namespace

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

Status Layer::forward(const ForwardArgs& a, const Plan& plan) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads;
  const std::size_t width_v = c.attn_width(), out_width = c.output_width();
  KvCache* cache = a.cache;
  if (!valid_args(a, c)) return Status::invalid_argument;
  Scratch s(plan);
  if (!s.allocate(scratch_sizes(c, shape_of(a), plan))) return Status::out_of_memory;
  if (c.rope.dim) {
    const double* inv = c.rope.inverse_frequencies;
    rope_table(a.position_offset, L, c.rope.dim, c.rope.base, inv, s.rope_q);
    rope_table(cache ? cache->length_ : 0, cache ? L : S, c.rope.dim, c.rope.base, inv, s.rope_k);
  }
  for (std::size_t b = 0; b < a.batch; ++b) {
    // With an out projection of the same width (one head at a time), the heads' results are gathered
    // in `output` and projected in place.
    float* attn_out = s.attn_rows ? s.attn_rows : a.output + b * L * width_v;
    if (plan.all_heads) {
      const HeadRange all{0, H, 0, c.num_kv_heads};
      project(a, b, all, s);
      attend(a, b, all, s, plan.fused, attn_out);
    } else {
      // Each K/V head is projected once, with the first query head that reads it.
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t g = kv_head_of(c, h);
        const HeadRange one{h, h + 1, g, h == 0 || kv_head_of(c, h - 1) != g ? g + 1 : g};
        project(a, b, one, s);
        attend(a, b, one, s, plan.fused, attn_out);
      }
    }
    Recorder(a, c).attn_output(b, attn_out);
    if (c.out_projection) project_output(L, s, attn_out, a.output + b * L * out_width);
  }
  if (cache) cache->length_ = S;
  if (s.parallel) parallel_rest();
  return Status::ok;
}

}  // namespace wa
