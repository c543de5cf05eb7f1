#include "linear.h"

#include <algorithm>
#include <cstring>

#include "../attention/plan.h"
#include "../kernels/f32-gemm.h"
#include "../kernels/reduced-gemm.h"
#include "../parallel.h"
#include "tasks.h"

namespace wa {
namespace {

// Output columns per packing task (a multiple of the panel width).
constexpr std::size_t kPackCols = 64;

std::size_t stored_ld(const LinearSource& s, std::size_t out, std::size_t in) {
  return s.ld ? s.ld : (s.layout == Layout::out_in ? in : out);
}

}  // namespace

double Linear::bytes(std::size_t out, std::size_t in, bool bias, WeightDtype dtype) {
  const double b = bias ? static_cast<double>(out) * sizeof(float) : 0.0;
  if (dtype != WeightDtype::f32) return reduced_bytes(dtype, out, in) + b;
  const double panels = static_cast<double>(ceil_div(out, kPanelWidth) * kPanelWidth) * static_cast<double>(in);
  return panels * sizeof(float) + b;
}

Status Linear::init(const LinearSource& s, std::size_t out, std::size_t in, WeightDtype dtype) {
  const std::size_t ld = stored_ld(s, out, in);
  if (!s.weight || out == 0 || in == 0 || ld < (s.layout == Layout::out_in ? in : out) ||
      static_cast<unsigned>(dtype) > static_cast<unsigned>(WeightDtype::int8))
    return Status::invalid_argument;
  out_ = out;
  in_ = in;
  dtype_ = dtype;
  if (!(bytes(out, in, false, dtype) <= static_cast<double>(SIZE_MAX / 2))) return Status::out_of_memory;
  if (dtype != WeightDtype::f32) return init_reduced(s, ld);
  if (!packed_.allocate(packed_panel_floats(out, in))) return Status::out_of_memory;
  // Tasks of kPackCols outputs: pack_transposed reads their rows of [out, in]; pack_rows their
  // columns of [in, out] into the same panels.
  const std::size_t tasks = ceil_div(out, kPackCols);
  float* packed = packed_.get();
  run_tasks(tasks, static_cast<double>(out) * static_cast<double>(in), [&](std::size_t t, std::size_t) {
    const std::size_t c0 = t * kPackCols, cols = std::min(out, c0 + kPackCols) - c0;
    if (s.layout == Layout::out_in)
      pack_transposed(s.weight + c0 * ld, cols, in, ld, packed + c0 * in);
    else
      pack_rows(s.weight + c0, in, cols, ld, packed + c0 * in, in);
  });
  return set_bias(s.bias);
}

// W rounded or quantized into reduced panels, kPackCols outputs per task; an output's weights are
// a row of [out, in], a column of Conv1D's [in, out].
Status Linear::init_reduced(const LinearSource& s, std::size_t ld) {
  const std::size_t columns = ceil_div(out_, kPanelWidth) * kPanelWidth;
  if (!reduced_.allocate(columns * in_ * weight_element_bytes(dtype_)) ||
      (dtype_ == WeightDtype::int8 && !scales_.allocate(columns)))
    return Status::out_of_memory;
  const bool rows = s.layout == Layout::out_in;
  run_tasks(ceil_div(out_, kPackCols), static_cast<double>(out_) * static_cast<double>(in_),
            [&](std::size_t t, std::size_t) {
              const std::size_t c0 = t * kPackCols;
              store_reduced(dtype_, s.weight, rows ? ld : 1, rows ? 1 : ld, out_, in_, c0,
                            std::min(columns, c0 + kPackCols), reduced_.get(), scales_.get());
            });
  specials_ = has_specials(dtype_, reduced_.get(), columns * in_);
  return set_bias(s.bias);
}

Status Linear::set_bias(const float* bias) {
  has_bias_ = bias != nullptr;
  if (!has_bias_) {
    bias_.release();
    return Status::ok;
  }
  if (!bias_.allocate(out_)) return Status::out_of_memory;
  std::memcpy(bias_.get(), bias, out_ * sizeof(float));
  return Status::ok;
}

void Linear::product(const float* x, std::size_t lda, std::size_t rows, std::size_t c0, std::size_t cols, float* y,
                     std::size_t ldy, bool add) const {
  const float* bias = has_bias_ ? bias_.get() + c0 : nullptr;
  if (dtype_ != WeightDtype::f32) {
    ReducedWeights w;
    w.dtype = dtype_;
    w.data = reduced_.get();
    w.scales = scales_.get();
    w.packed_k = in_;
    w.specials = specials_;
    reduced_gemm(rows, cols, in_, x, lda, w.from_column(c0), bias, y + c0, ldy, add);
    return;
  }
  const float* panels = packed_.get() + c0 * in_;
  if (add)
    gemm_packed_add(rows, cols, in_, x, lda, panels, in_, bias, y + c0, ldy);
  else
    gemm_packed(rows, cols, in_, x, lda, panels, in_, bias, y + c0, ldy);
}

void Linear::forward(const float* x, std::size_t lda, std::size_t rows, float* y, std::size_t ldy, bool add) const {
  const Tiles tiles = tile_product(rows, out_, in_);
  run_tasks(tiles.count(), tiles.work, [&](std::size_t t, std::size_t) {
    const Tiles::Tile tile = tiles[t];
    product(x + tile.r0 * lda, lda, tile.rows, tile.c0, tile.cols, y + tile.r0 * ldy, ldy, add);
  });
}

void Linear::weight_row(std::size_t o, float* row) const {
  const float* lane = packed_.get() + (o / kPanelWidth) * kPanelWidth * in_ + o % kPanelWidth;
  for (std::size_t k = 0; k < in_; ++k) row[k] = lane[k * kPanelWidth];
}

const float* dense_out_in(const LinearSource& s, std::size_t out, std::size_t in, FloatBuffer& copy) {
  const std::size_t ld = stored_ld(s, out, in);
  if (s.layout == Layout::out_in && ld == in) return s.weight;
  if (!copy.allocate(out * in)) return nullptr;
  float* dst = copy.get();
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t i = 0; i < in; ++i)
      dst[o * in + i] = s.layout == Layout::out_in ? s.weight[o * ld + i] : s.weight[i * ld + o];
  return dst;
}

}  // namespace wa
