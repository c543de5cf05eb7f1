#include "head.h"

#include <cstring>

#include "mlp.h"
#include "tasks.h"

namespace wa {

double Head::bytes(const ModelConfig& c) {
  double b = c.final_norm ? Norm::bytes(c.hidden, c.norm == NormKind::layer) : 0.0;
  if (c.head == HeadKind::none) return b;
  // A tied head reads the embedding table, which stays f32.
  b += Linear::bytes(c.vocab, c.hidden, true, c.tied_head ? WeightDtype::f32 : c.weight_dtype);
  if (c.head == HeadKind::mlm)
    b += Linear::bytes(c.hidden, c.hidden, true, c.weight_dtype) + Norm::bytes(c.hidden, true);
  return b;
}

double Head::scratch_floats(const ModelConfig& c, std::size_t rows) {
  return c.head == HeadKind::mlm ? static_cast<double>(rows) * static_cast<double>(c.hidden) : 0.0;
}

Status Head::init_table(const ModelConfig& c, const float* tokens) {
  LinearSource table;
  table.weight = tokens;
  return lm_.init(table, c.vocab, c.hidden);
}

Status Head::init(const ModelConfig& c, const HeadWeights& w) {
  config_ = c;
  Status s = c.final_norm ? final_norm_.init(c.norm, c.norm_eps, c.hidden, w.final_norm) : Status::ok;
  if (s != Status::ok || c.head == HeadKind::none) return s;
  if (c.head == HeadKind::mlm) {
    s = transform_.init(w.transform, c.hidden, c.hidden, c.weight_dtype);
    if (s == Status::ok) s = transform_norm_.init(NormKind::layer, c.norm_eps, c.hidden, w.transform_norm);
    if (s != Status::ok) return s;
  }
  if (!c.tied_head) return lm_.init(w.lm, c.vocab, c.hidden, c.weight_dtype);
  if (!lm_.ready()) return Status::invalid_argument;  // the embeddings bring the table
  return lm_.set_bias(w.lm.bias);
}

void Head::forward(const float* x, std::size_t rows, LogitsMode mode, float* hidden, float* logits,
                   float* scratch) const {
  const std::size_t E = config_.hidden;
  if (config_.final_norm)
    final_norm_.forward(x, rows, hidden);
  else if (hidden != x)
    std::memcpy(hidden, x, rows * E * sizeof(float));
  if (mode == LogitsMode::none || config_.head == HeadKind::none) return;
  const std::size_t first = mode == LogitsMode::last ? rows - 1 : 0, count = rows - first;
  const float* in = hidden + first * E;
  if (config_.head == HeadKind::mlm) {
    transform_.forward(in, E, count, scratch, E, false);
    for_rows(count, 8 * E, [&](std::size_t r0, std::size_t r1) {
      activate(config_.activation, scratch + r0 * E, (r1 - r0) * E, scratch + r0 * E);
      transform_norm_.apply(scratch, r0, r1, scratch);
    });
    in = scratch;
  }
  lm_.forward(in, E, count, logits, config_.vocab, false);
}

}  // namespace wa
