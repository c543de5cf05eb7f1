// The end of a forward: the final norm (decoders) gives the hidden states returned, and the LM head
// turns them into logits, for every token or only the last (a prefill that samples one token needs
// one row of a vocabulary-wide product, not all of them). BERT's masked-LM head transforms each row
// first (dense → activation → LayerNorm), then its decoder, tied to the word embeddings, adds its
// own bias.
#pragma once

#include <cstddef>

#include "../attention.h"
#include "linear.h"
#include "model-config.h"
#include "norm.h"

namespace wa {

class Head {
 public:
  // The packed table of a tied head, given with the embeddings (the embedding reads it too).
  Status init_table(const ModelConfig& config, const float* tokens);
  Status init(const ModelConfig& config, const HeadWeights& weights);
  static double bytes(const ModelConfig& config);
  // Floats of scratch a forward of `rows` rows needs.
  static double scratch_floats(const ModelConfig& config, std::size_t rows);
  const Linear& table() const { return lm_; }

  // hidden[rows, hidden] = final_norm(x) (or x); then logits of every row, the last, or none.
  void forward(const float* x, std::size_t rows, LogitsMode mode, float* hidden, float* logits, float* scratch) const;

 private:
  ModelConfig config_;
  Norm final_norm_, transform_norm_;
  Linear lm_, transform_;
};

}  // namespace wa
