// A block's MLP: x += down(act(gate(h)) · up(h)) (SwiGLU: Llama, Mistral, Qwen2) or
// x += down(act(up(h))) (GPT-2, BERT), biases where the checkpoint has them. Two parallel stages:
// gate and up with the activation on each tile as soon as it is made, then down with the residual
// added in the same pass.
#pragma once

#include <cstddef>

#include "../attention.h"
#include "linear.h"
#include "model-config.h"

namespace wa {

// y = act(x) over n floats (y may be x).
void activate(Activation act, const float* x, std::size_t n, float* y);

class Mlp {
 public:
  Status init(const ModelConfig& config, const BlockWeights& weights);
  static double bytes(const ModelConfig& config, bool biases);
  // Floats of scratch a forward of `rows` rows needs.
  static double scratch_floats(const ModelConfig& config, std::size_t rows);

  // x[rows, hidden] += MLP(h[rows, hidden]); h may be x. scratch: scratch_floats(rows).
  void forward(const float* h, std::size_t rows, float* x, float* scratch) const;

 private:
  Linear gate_, up_, down_;
  Activation act_ = Activation::silu;
  bool gated_ = true;
};

}  // namespace wa
