// A stack of weight matrices (a layer's heads, or one linear layer's W), each n outputs × k inputs,
// packed once into the GEMM's 16-column panels in the dtype the layer stores them in (float32, f16,
// bf16, or int8 with a scale per output), or borrowed in place as float32 rows. The layout is chosen
// once, when the matrix is made; every product dispatches on it, so callers never ask which it was.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../buffer.h"
#include "reduced-panels.h"
#include "weight-dtype.h"

namespace wa {

class PackedMatrix {
 public:
  // Room for `count` matrices stored as `dtype`, filled by pack(); false when it cannot be allocated.
  bool allocate(WeightDtype dtype, std::size_t count, std::size_t n, std::size_t k);
  // `count` matrices of n rows of k float32 weights each, read in place (nothing is copied): for a
  // product of a few rows, which costs less than packing (f32-gemm-rows.h). Products overwrite C.
  void borrow(const float* rows, std::size_t count, std::size_t n, std::size_t k);
  // Bytes allocate takes (in double: nothing wraps where size_t has 32 bits).
  static double bytes(WeightDtype dtype, std::size_t count, std::size_t n, std::size_t k);

  // Columns [j0, j1) of matrix `m` (j0 a multiple of 16), given as float32 with element (column j,
  // step kk) at w[j·ld_j + kk·ld_k]: ld_k = 1 for nn.Linear's [out, in], ld_j = 1 for Conv1D's
  // [in, out]. Disjoint ranges may be packed by different threads at once.
  void pack(std::size_t m, const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t j0, std::size_t j1);
  // Once every column is packed: whether f16 panels hold an Inf or NaN (then widened the longer way).
  void finish_packing();

  // C[rows × cols] (row stride ldc) = A[rows × k] (row stride lda) · columns [c0, c0 + cols) of matrix
  // m (c0 a multiple of 16) + bias[cols] (may be null); with `add`, that plus C (panels only).
  void gemm(std::size_t m, std::size_t c0, std::size_t cols, const float* a, std::size_t lda, std::size_t rows,
            const float* bias, float* c, std::size_t ldc, bool add) const;
  // Row o of matrix 0 (output o's weights) read back from float32 panels: a tied head's embedding.
  void f32_row(std::size_t o, float* row) const;

  bool ready() const { return floats_.get() || bytes_.get() || rows_; }
  WeightDtype dtype() const { return dtype_; }

 private:
  ReducedPanels reduced(std::size_t m) const;
  void release();  // a matrix made again keeps nothing of the last layout

  WeightDtype dtype_ = WeightDtype::f32;
  std::size_t count_ = 0, n_ = 0, k_ = 0;
  std::size_t columns_ = 0;  // n rounded up to whole panels
  std::size_t stride_ = 0;   // elements (weights) from one matrix to the next
  FloatBuffer floats_;       // f32 panels
  ByteBuffer bytes_;         // f16, bf16 or int8 panels
  FloatBuffer scales_;       // int8: columns_ per matrix
  const float* rows_ = nullptr;
  bool specials_ = false;  // f16: some weight is Inf or NaN
};

// C = A · W (+ bias) (+ C) for reduced panels that another structure owns (a KV cache's key tile):
// the f32-*w-gemm kernel of w.dtype.
void gemm_reduced(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                  const float* bias, float* c, std::size_t ldc, bool add);

}  // namespace wa
