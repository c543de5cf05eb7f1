// A packed weight matrix: its layout chosen at allocation, the packing and products dispatched on it.
#include "packed-matrix.h"

#include "f32-bf16w-gemm.h"
#include "f32-f16w-gemm.h"
#include "f32-gemm-rows.h"
#include "f32-gemm.h"
#include "f32-qc8w-gemm.h"

namespace wa {
namespace {

std::size_t whole_panels(std::size_t n) { return (n + kPanelWidth - 1) / kPanelWidth * kPanelWidth; }

}  // namespace

double PackedMatrix::bytes(WeightDtype dtype, std::size_t count, std::size_t n, std::size_t k) {
  const double columns = static_cast<double>(whole_panels(n));
  const double scales = dtype == WeightDtype::int8 ? columns * sizeof(float) : 0.0;
  const double one = columns * static_cast<double>(k) * static_cast<double>(weight_element_bytes(dtype)) + scales;
  return one * static_cast<double>(count);
}

bool PackedMatrix::allocate(WeightDtype dtype, std::size_t count, std::size_t n, std::size_t k) {
  dtype_ = dtype;
  count_ = count;
  n_ = n;
  k_ = k;
  columns_ = whole_panels(n);
  stride_ = columns_ * k;
  release();
  if (dtype == WeightDtype::f32) return floats_.allocate(stride_ * count);
  return bytes_.allocate(stride_ * count * weight_element_bytes(dtype)) &&
         (dtype != WeightDtype::int8 || scales_.allocate(columns_ * count));
}

void PackedMatrix::borrow(const float* rows, std::size_t count, std::size_t n, std::size_t k) {
  dtype_ = WeightDtype::f32;
  count_ = count;
  n_ = n;
  k_ = k;
  columns_ = n;
  stride_ = n * k;
  release();
  rows_ = rows;
}

void PackedMatrix::release() {
  floats_.release();
  bytes_.release();
  scales_.release();
  rows_ = nullptr;
  specials_ = false;
}

void PackedMatrix::pack(std::size_t m, const float* w, std::size_t ld_j, std::size_t ld_k, std::size_t j0,
                        std::size_t j1) {
  const std::size_t cols = (j1 < n_ ? j1 : n_) - j0;
  const std::size_t panels_end = j1 < n_ ? j1 : columns_;  // the last panel's padding too
  switch (dtype_) {
    case WeightDtype::f32:
      if (ld_k == 1) return pack_transposed(w + j0 * ld_j, cols, k_, ld_j, floats_.get() + m * stride_ + j0 * k_);
      return pack_rows(w + j0 * ld_j, k_, cols, ld_k, floats_.get() + m * stride_ + j0 * k_, k_);
    case WeightDtype::f16:
      return pack_f16w(w, ld_j, ld_k, n_, k_, j0, panels_end, bytes_.get() + m * stride_ * 2);
    case WeightDtype::bf16:
      return pack_bf16w(w, ld_j, ld_k, n_, k_, j0, panels_end, bytes_.get() + m * stride_ * 2);
    case WeightDtype::int8:
      return pack_qc8w(w, ld_j, ld_k, n_, k_, j0, panels_end, bytes_.get() + m * stride_, scales_.get() + m * columns_);
  }
}

void PackedMatrix::finish_packing() {
  specials_ = dtype_ == WeightDtype::f16 && f16w_has_specials(bytes_.get(), stride_ * count_);
}

ReducedPanels PackedMatrix::reduced(std::size_t m) const {
  ReducedPanels w;
  w.dtype = dtype_;
  w.data = bytes_.get() + m * stride_ * weight_element_bytes(dtype_);
  w.scales = scales_.get() ? scales_.get() + m * columns_ : nullptr;
  w.packed_k = k_;
  w.specials = specials_;
  return w;
}

void PackedMatrix::gemm(std::size_t m, std::size_t c0, std::size_t cols, const float* a, std::size_t lda,
                        std::size_t rows, const float* bias, float* c, std::size_t ldc, bool add) const {
  if (rows_) return gemm_rows(rows, cols, k_, a, lda, rows_ + m * stride_ + c0 * k_, k_, bias, c, ldc);
  if (dtype_ != WeightDtype::f32)
    return gemm_reduced(rows, cols, k_, a, lda, reduced(m).from_column(c0), bias, c, ldc, add);
  const float* panels = floats_.get() + m * stride_ + c0 * k_;
  if (add) return gemm_packed_add(rows, cols, k_, a, lda, panels, k_, bias, c, ldc);
  gemm_packed(rows, cols, k_, a, lda, panels, k_, bias, c, ldc);
}

void PackedMatrix::f32_row(std::size_t o, float* row) const {
  const float* lane = floats_.get() + (o / kPanelWidth) * kPanelWidth * k_ + o % kPanelWidth;
  for (std::size_t kk = 0; kk < k_; ++kk) row[kk] = lane[kk * kPanelWidth];
}

void gemm_reduced(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const ReducedPanels& w,
                  const float* bias, float* c, std::size_t ldc, bool add) {
  switch (w.dtype) {
    case WeightDtype::f16:
      return f32_f16w_gemm(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::bf16:
      return f32_bf16w_gemm(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::int8:
      return f32_qc8w_gemm(m, n, k, a, lda, w, bias, c, ldc, add);
    case WeightDtype::f32:
      break;  // float32 panels are multiplied by gemm_packed itself
  }
}

}  // namespace wa
