#include "linear.h"

#include <algorithm>
#include <cstring>

#include "../attention/plan.h"
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
  return PackedMatrix::bytes(dtype, 1, out, in) + b;
}

Status Linear::init(const LinearSource& s, std::size_t out, std::size_t in, WeightDtype dtype) {
  const std::size_t ld = stored_ld(s, out, in);
  if (!s.weight || out == 0 || in == 0 || ld < (s.layout == Layout::out_in ? in : out) || !valid_weight_dtype(dtype))
    return Status::invalid_argument;
  out_ = out;
  in_ = in;
  if (!(bytes(out, in, false, dtype) <= static_cast<double>(SIZE_MAX / 2)) || !weights_.allocate(dtype, 1, out, in))
    return Status::out_of_memory;
  // Tasks of kPackCols outputs: an output's weights are a row of nn.Linear's [out, in], a column of
  // Conv1D's [in, out].
  const bool rows = s.layout == Layout::out_in;
  run_tasks(ceil_div(out, kPackCols), static_cast<double>(out) * static_cast<double>(in),
            [&](std::size_t t, std::size_t) {
              const std::size_t c0 = t * kPackCols;
              weights_.pack(0, s.weight, rows ? ld : 1, rows ? 1 : ld, c0, std::min(out, c0 + kPackCols));
            });
  weights_.finish_packing();
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
  weights_.gemm(0, c0, cols, x, lda, rows, has_bias_ ? bias_.get() + c0 : nullptr, y + c0, ldy, add);
}

void Linear::forward(const float* x, std::size_t lda, std::size_t rows, float* y, std::size_t ldy, bool add) const {
  const Tiles tiles = tile_product(rows, out_, in_);
  run_tasks(tiles.count(), tiles.work, [&](std::size_t t, std::size_t) {
    const Tiles::Tile tile = tiles[t];
    product(x + tile.r0 * lda, lda, tile.rows, tile.c0, tile.cols, y + tile.r0 * ldy, ldy, add);
  });
}

void Linear::weight_row(std::size_t o, float* row) const { weights_.f32_row(o, row); }

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
