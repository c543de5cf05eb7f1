// The plan of a forward (fused or not, all heads at once or one at a time, on how many workers) and
// the sizes the caller allocates for it, both from the shape alone.
#include "plan.h"

#include <algorithm>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "../parallel.h"
#include "scratch.h"

namespace wa {
namespace {

// Scratch floats of the all-heads plan: Q, K, V rows and packed K, V of every head, and the heads'
// results before the out projection.
double all_heads_floats(const LayerConfig& c, const ForwardShape& f) {
  const double L = static_cast<double>(f.tgt_len), S = static_cast<double>(f.src_len);
  const double kv = static_cast<double>(c.num_kv_heads), dk = static_cast<double>(c.head_dim_qk);
  const double dv = static_cast<double>(c.head_dim_v), panels_k = static_cast<double>(ceil_div(f.src_len, kPanelWidth));
  const double panels_v = static_cast<double>(ceil_div(c.head_dim_v, kPanelWidth));
  return L * static_cast<double>(c.num_heads) * dk + kv * S * (dk + dv) +
         kv * kPanelWidth * (panels_k * dk + panels_v * S) + L * static_cast<double>(c.attn_width());
}

}  // namespace

double forward_macs(const LayerConfig& c, const ForwardShape& f) {
  const double L = static_cast<double>(f.tgt_len), S = static_cast<double>(f.src_len);
  const double kv_rows = f.cached ? L : S, H = static_cast<double>(c.num_heads),
               dk = static_cast<double>(c.head_dim_qk);
  const double num_kv_heads = static_cast<double>(c.num_kv_heads);
  return static_cast<double>(f.batch) *
         (L * c.q_in * H * dk + kv_rows * (c.k_in * num_kv_heads * dk + c.v_in * num_kv_heads * c.head_dim_v) +
          L * S * H * (dk + c.head_dim_v) +
          (c.out_projection ? L * static_cast<double>(c.attn_width()) * c.output_width() : 0.0));
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
  if (a.cache) f.cache_dtype = a.cache->dtype();
  return f;
}

Plan plan_forward(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t L = f.tgt_len, S = f.src_len, H = c.num_heads;
  Plan p;
  // Weights and the teaching copies need whole score rows; otherwise the fused path runs.
  p.fused = !f.weights && !f.intermediates;
  // Chosen by the shape alone, never by the thread count: the two plans may differ in the last bit.
  p.all_heads = f.cached || (!f.intermediates && all_heads_floats(c, f) <= kAllHeadsFloats);
  // Split when two threads pay with the workers polling (a forward's jobs come back to back).
  p.parallel = planned_threads_for(forward_macs(c, f)) > 1;
  p.workers = p.parallel ? static_cast<std::size_t>(thread_count()) : 1;
  // Averaged weights add the heads of a row in order, so a task is a row block of every head: a few
  // rows (a decode step) then leave threads idle, unless each head's rows are kept apart and summed
  // in the same order afterwards (same bits).
  p.head_rows = !p.fused && f.average_weights && H > 1 && p.all_heads && p.workers > 1 &&
                ceil_div(L, kRowBlock) < 2 * p.workers && static_cast<double>(H) * L * S <= kMaxHeadRowsFloats;
  return p;
}

double Layer::workspace_bytes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  return arena_floats(scratch_sizes(c, f, p)) * sizeof(float);
}

ForwardSizes Layer::forward_sizes(const LayerConfig& c, const ForwardShape& f, const Plan& p) {
  const double B = static_cast<double>(f.batch), L = static_cast<double>(f.tgt_len), S = static_cast<double>(f.src_len);
  const double H = static_cast<double>(c.num_heads);
  ForwardSizes z;
  z.output = B * L * c.output_width();
  z.weights = f.weights ? B * (f.average_weights ? 1 : H) * L * S : 0;
  if (f.intermediates) {
    z.q = B * L * H * c.head_dim_qk;
    z.k = B * S * c.num_kv_heads * c.head_dim_qk;
    z.v = B * S * c.num_kv_heads * c.head_dim_v;
    z.scores = B * H * L * S;  // and as many scaled scores
    z.attn_output = c.out_projection ? B * L * c.attn_width() : 0;
  }
  z.workspace_bytes = workspace_bytes(c, f, p);
  return z;
}

}  // namespace wa
