// The teaching copies (Intermediates, returnIntermediates in JavaScript): the tuned forward calls
// one hook per copy, and each hook does nothing when no copy is wanted. Only here does the forward
// know the copies' layouts.
#pragma once

#include <cstddef>

#include "../attention.h"
#include "heads.h"

namespace wa {

class Recorder {
 public:
  Recorder(const ForwardArgs& args, const LayerConfig& config) : in_(args.intermediates), a_(args), c_(config) {}

  // The scale is folded into Q (L·dk products instead of L·S scores, as PyTorch does), unless the
  // raw Q·Kᵀ is copied: then the scores are scaled instead.
  float q_scale(float scale) const { return in_ ? 1.0f : scale; }
  float score_scale(float scale) const { return in_ ? scale : 1.0f; }

  // Rows [r0, r0 + rows) of query head h, of K/V head g.
  void query(std::size_t b, std::size_t h, std::size_t r0, std::size_t rows, const float* q) const;
  void key(std::size_t b, std::size_t g, std::size_t r0, std::size_t rows, const float* k) const;
  void value(std::size_t b, std::size_t g, std::size_t r0, std::size_t rows, const float* v) const;
  // Query i's raw scores (of `keys`; the keys outside it are multiplied here) and its scaled, masked
  // scores (−inf outside `keys`).
  void scores(std::size_t b, std::size_t h, std::size_t i, const float* row, KeyRange keys, const HeadView& view) const;
  void scaled_scores(std::size_t b, std::size_t h, std::size_t i, const float* row, KeyRange keys) const;
  // The heads' results of batch element b, before the out projection.
  void attn_output(std::size_t b, const float* attn_out) const;

 private:
  const Intermediates* in_;
  const ForwardArgs& a_;
  const LayerConfig& c_;
};

}  // namespace wa
