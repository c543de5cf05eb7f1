// A model's norm layer (RMSNorm or LayerNorm, with its weights copied in) over rows of hidden
// states, and the residual step that precedes most norms: x += a, then y = norm(x).
#pragma once

#include <cstddef>

#include "../attention.h"
#include "../buffer.h"
#include "model-config.h"

namespace wa {

class Norm {
 public:
  Status init(NormKind kind, float eps, std::size_t n, const NormWeights& weights);
  static double bytes(std::size_t n, bool bias) { return (bias ? 2.0 : 1.0) * static_cast<double>(n) * sizeof(float); }
  bool ready() const { return weight_.get() != nullptr; }

  // y = norm(x) for rows [r0, r1) (y may be x).
  void apply(const float* x, std::size_t r0, std::size_t r1, float* y) const;
  // y = norm(x) for every row, over threads when there are many.
  void forward(const float* x, std::size_t rows, float* y) const;
  // x += a, then y = norm(x) (y may be x), row by row over threads.
  void add_forward(float* x, const float* a, std::size_t rows, float* y) const;

 private:
  FloatBuffer weight_, bias_;
  NormKind kind_ = NormKind::rms;
  float eps_ = 0.0f;
  std::size_t n_ = 0;
  bool has_bias_ = false;
};

// x += a over rows [r0, r1) of width n.
void add_rows(float* x, const float* a, std::size_t r0, std::size_t r1, std::size_t n);

}  // namespace wa
