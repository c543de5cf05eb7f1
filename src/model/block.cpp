#include "block.h"

#include "../attention/plan.h"
#include "tasks.h"

namespace wa {

double Block::bytes(const ModelConfig& c) {
  // Biases counted as present: the budget only needs to be an upper bound.
  double b = Layer::weights_bytes(attention_config(c, 0)) + Mlp::bytes(c, true);
  b += 2 * Norm::bytes(c.hidden, c.norm == NormKind::layer);
  if (c.rope_dim) b += static_cast<double>(c.rope_dim) / 2 * sizeof(double);
  return b;
}

Status Block::init(const ModelConfig& c, const BlockWeights& w) {
  ready_ = false;
  post_norm_ = c.post_norm;
  causal_ = c.causal;
  scale_ = c.attention_scale;
  const std::size_t E = c.hidden, q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  if (!w.q.weight || !w.k.weight || !w.v.weight || !w.o.weight) return Status::invalid_argument;
  // The attention reads nn.Linear's [out, in]: Conv1D's [in, out] (and c_attn's column slices) are
  // copied into that layout for the moment the layer packs them.
  FloatBuffer q_copy, k_copy, v_copy, o_copy;
  LayerWeights lw;
  lw.wq = dense_out_in(w.q, q_out, E, q_copy);
  lw.wk = dense_out_in(w.k, kv_out, E, k_copy);
  lw.wv = dense_out_in(w.v, kv_out, E, v_copy);
  lw.wo = dense_out_in(w.o, E, q_out, o_copy);
  if (!lw.wq || !lw.wk || !lw.wv || !lw.wo) return Status::out_of_memory;
  lw.bq = w.q.bias;
  lw.bk = w.k.bias;
  lw.bv = w.v.bias;
  lw.bo = w.o.bias;
  Status s = attention_.init(attention_config(c, w.sliding_window), lw);
  if (s == Status::ok) s = attention_norm_.init(c.norm, c.norm_eps, E, w.attention_norm);
  if (s == Status::ok) s = mlp_norm_.init(c.norm, c.norm_eps, E, w.mlp_norm);
  if (s == Status::ok) s = mlp_.init(c, w);
  ready_ = s == Status::ok;
  return s;
}

// a = attention(in) into s.a; first, when weights are asked, the same call with weights into
// s.weights, whose output and cache entries are then dropped: the weights path may round the output
// differently from the fused one, and the logits must not depend on whether weights were asked.
Status Block::attend(const BlockStep& step, const float* in, const BlockScratch& s) const {
  ForwardArgs a;
  a.tgt_len = step.rows;
  a.src_len = step.cache ? step.pos0 + step.rows : step.rows;
  a.position_offset = step.pos0;
  a.cache = step.cache;
  a.query = a.key = a.value = in;
  a.is_causal = causal_;
  a.scale = scale_;
  a.output = s.a;
  if (s.weights) {
    ForwardArgs w = a;
    w.weights = s.weights;
    w.average_weights = false;
    const Status status = attention_.forward(w, plan(w));
    if (step.cache) step.cache->truncate(step.pos0);
    if (status != Status::ok) return status;
  }
  return attention_.forward(a, plan(a));
}

// The attention's own plan, on one thread when its jobs are too small to pay for the workers' state
// (asleep: a decode step over a short cache after a pause); a serial plan gives the same bits.
Plan Block::plan(const ForwardArgs& a) const {
  const ForwardShape shape = shape_of(a);
  Plan p = plan_forward(attention_.config(), shape);
  if (threads_for(forward_macs(attention_.config(), shape)) < 2) {
    p.parallel = false;
    p.workers = 1;
    p.head_rows = false;  // only ever chosen for more than one worker
  }
  return p;
}

Status Block::forward(const BlockStep& step, float* x, const BlockScratch& s) const {
  const std::size_t rows = step.rows;
  if (post_norm_) {
    const Status status = attend(step, x, s);
    if (status != Status::ok) return status;
    attention_norm_.add_forward(x, s.a, rows, x);
    mlp_.forward(x, rows, x, s.mlp);
    mlp_norm_.forward(x, rows, x);
    return Status::ok;
  }
  attention_norm_.forward(x, rows, s.h);
  const Status status = attend(step, s.h, s);
  if (status != Status::ok) return status;
  mlp_norm_.add_forward(x, s.a, rows, s.h);
  mlp_.forward(s.h, rows, x, s.mlp);
  return Status::ok;
}

}  // namespace wa
