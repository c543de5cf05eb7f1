#include "mlp.h"

#include "../kernels/f32-activations.h"
#include "tasks.h"

namespace wa {

void activate(Activation act, const float* x, std::size_t n, float* y) {
  switch (act) {
    case Activation::silu:
      silu(x, n, y);
      break;
    case Activation::gelu_tanh:
      gelu_tanh(x, n, y);
      break;
    case Activation::gelu_erf:
      gelu_erf(x, n, y);
      break;
  }
}

double Mlp::bytes(const ModelConfig& c, bool biases) {
  const double in = Linear::bytes(c.intermediate, c.hidden, biases, c.weight_dtype);
  return (c.gated_mlp ? 2 : 1) * in + Linear::bytes(c.hidden, c.intermediate, biases, c.weight_dtype);
}

double Mlp::scratch_floats(const ModelConfig& c, std::size_t rows) {
  return (c.gated_mlp ? 2.0 : 1.0) * static_cast<double>(rows) * static_cast<double>(c.intermediate);
}

Status Mlp::init(const ModelConfig& c, const BlockWeights& w) {
  act_ = c.activation;
  gated_ = c.gated_mlp;
  const WeightDtype d = c.weight_dtype;
  Status s = gated_ ? gate_.init(w.gate, c.intermediate, c.hidden, d) : Status::ok;
  if (s == Status::ok) s = up_.init(w.up, c.intermediate, c.hidden, d);
  if (s == Status::ok) s = down_.init(w.down, c.hidden, c.intermediate, d);
  return s;
}

void Mlp::forward(const float* h, std::size_t rows, float* x, float* scratch) const {
  const std::size_t I = up_.out(), E = up_.in();
  float* inner = scratch;          // [rows, I]: act(gate) · up, or act(up)
  float* up = scratch + rows * I;  // [rows, I]: up, when gated
  const Tiles in_tiles = tile_product(rows, I, (gated_ ? 2 : 1) * E);
  run_tasks(in_tiles.count(), in_tiles.work, [&](std::size_t t, std::size_t) {
    const Tiles::Tile tile = in_tiles[t];
    const float* hr = h + tile.r0 * E;
    float* ir = inner + tile.r0 * I;
    if (gated_) {
      float* ur = up + tile.r0 * I;
      gate_.product(hr, E, tile.rows, tile.c0, tile.cols, ir, I, false);
      up_.product(hr, E, tile.rows, tile.c0, tile.cols, ur, I, false);
      for (std::size_t r = 0; r < tile.rows; ++r) {
        float* g = ir + r * I + tile.c0;
        if (act_ == Activation::silu) {
          silu_mul(g, ur + r * I + tile.c0, tile.cols, g);
        } else {
          activate(act_, g, tile.cols, g);
          for (std::size_t c = 0; c < tile.cols; ++c) g[c] *= ur[r * I + tile.c0 + c];
        }
      }
    } else {
      up_.product(hr, E, tile.rows, tile.c0, tile.cols, ir, I, false);
      for (std::size_t r = 0; r < tile.rows; ++r) activate(act_, ir + r * I + tile.c0, tile.cols, ir + r * I + tile.c0);
    }
  });
  down_.forward(inner, I, rows, x, E, true);
}

}  // namespace wa
