// A prepared linear layer y = x·Wᵀ + b: W packed into the GEMM's 16-column panels once (from
// nn.Linear's [out, in] or Conv1D's [in, out], any row stride), then products by any tile of rows and
// columns (tasks.h), with or without adding to what the output holds (a residual).
#pragma once

#include <cstddef>

#include "../attention.h"
#include "../buffer.h"
#include "../kernels/packed-matrix.h"
#include "../kernels/weight-dtype.h"
#include "model-config.h"

namespace wa {

class Linear {
 public:
  // dtype ≠ f32: W rounded (f16, bf16) or quantized per output (int8) into the same panels
  // (kernels/packed-matrix.h).
  Status init(const LinearSource& source, std::size_t out, std::size_t in, WeightDtype dtype = WeightDtype::f32);
  // The bias alone, for a weight packed elsewhere (BERT's tied decoder): [out] or null.
  Status set_bias(const float* bias);
  static double bytes(std::size_t out, std::size_t in, bool bias, WeightDtype dtype = WeightDtype::f32);

  std::size_t out() const { return out_; }
  std::size_t in() const { return in_; }
  bool ready() const { return weights_.ready(); }

  // y[r, c0 … c0+cols) = x[r]·W[c0 … c0+cols)ᵀ + b for rows r of x (row stride lda), c0 a multiple of
  // 16; with `add`, (x·Wᵀ + b) + y.
  void product(const float* x, std::size_t lda, std::size_t rows, std::size_t c0, std::size_t cols, float* y,
               std::size_t ldy, bool add) const;
  // y[rows, out] (row stride ldy) = x·Wᵀ + b (+ y with add), over threads.
  void forward(const float* x, std::size_t lda, std::size_t rows, float* y, std::size_t ldy, bool add) const;
  // Row o of W (output o's weights), read back from the panels: a tied head's token embedding (f32).
  void weight_row(std::size_t o, float* row) const;

 private:
  PackedMatrix weights_;
  FloatBuffer bias_;
  std::size_t out_ = 0, in_ = 0;
  bool has_bias_ = false;
};

// A source's weight as a dense [out, in] array, for code that reads nn.Linear's layout (the
// attention's projections): the weight itself when it is stored so, else a copy made in `copy`.
// Null when the copy cannot be allocated.
const float* dense_out_in(const LinearSource& source, std::size_t out, std::size_t in, FloatBuffer& copy);

}  // namespace wa
