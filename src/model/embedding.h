// The first step of a forward: each token's row of the embedding table, plus its token type's row
// (BERT) and its position's row (learned positions), then BERT's LayerNorm, in transformers' order
// ((tokens + types) + positions). A tied table lives once, as the LM head's packed panels, and its
// rows are read back from there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../attention.h"
#include "../buffer.h"
#include "linear.h"
#include "model-config.h"
#include "norm.h"

namespace wa {

class Embedding {
 public:
  // tied: the packed table when the head is tied (weights.tokens is then read by the head, not here).
  Status init(const ModelConfig& config, const EmbeddingWeights& weights, const Linear* tied);
  static double bytes(const ModelConfig& config);

  // x[tokens, hidden] for ids (in range), token types (or null: type 0) and positions pos0, pos0 + 1, ….
  void forward(const std::int32_t* ids, const std::int32_t* types, std::size_t tokens, std::size_t pos0,
               float* x) const;

 private:
  FloatBuffer tokens_, positions_, types_;
  const Linear* tied_ = nullptr;
  Norm norm_;
  std::size_t hidden_ = 0;
  bool positions_on_ = false, types_on_ = false, norm_on_ = false;
};

}  // namespace wa
