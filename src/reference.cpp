// Attention as a reader would write it, in double precision.
//
//   query [B, L, q_in], key [B, S, k_in], value [B, S, v_in]; heads H of widths dk (Q, K) and dv (V)
//   1. Q = query·Wqᵀ + bq, K = key·Wkᵀ + bk, V = value·Wvᵀ + bv           (per head: a slice of columns)
//   2. score[i][j] = scale · Q_h[i]·K_h[j] + masks (bool / causal → -inf, float → added)
//   3. P = softmax(score) by row; a row with every key masked is all zeros
//   4. O_h[i] = Σ_j P[i][j] · V_h[j]; heads concatenated
//   5. output = O·Woᵀ + bo when there is an output projection, else O
#include "reference.h"

#include <cmath>
#include <cstdint>

namespace wa {
namespace {

template <class T>
std::vector<double> linear(const T* x, std::size_t rows, std::size_t in, const float* w, const float* b,
                           std::size_t out) {
  std::vector<double> y(rows * out);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = b ? b[o] : 0.0;
      for (std::size_t k = 0; k < in; ++k) acc += static_cast<double>(x[r * in + k]) * w[o * in + k];
      y[r * out + o] = acc;
    }
  return y;
}

double mask_term(const Mask& m, std::size_t index) {
  if (m.kind == MaskKind::boolean) return static_cast<const std::uint8_t*>(m.data)[index] ? -INFINITY : 0.0;
  if (m.kind == MaskKind::additive) return static_cast<const float*>(m.data)[index];
  return 0.0;
}

}  // namespace

void reference_forward(const LayerConfig& c, const LayerWeights& w, const ForwardArgs& a) {
  const std::size_t B = a.batch, L = a.tgt_len, S = a.src_len, H = c.num_heads;
  const std::size_t dk = c.head_dim_qk, dv = c.head_dim_v, E = H * dv;
  std::vector<double> avg(L * S);
  for (std::size_t b = 0; b < B; ++b) {
    // 1. projections
    auto Q = linear(a.query + b * L * c.q_in, L, c.q_in, w.wq, w.bq, H * dk);
    auto K = linear(a.key + b * S * c.k_in, S, c.k_in, w.wk, w.bk, H * dk);
    auto V = linear(a.value + b * S * c.v_in, S, c.v_in, w.wv, w.bv, E);
    std::vector<double> O(L * E, 0.0);
    std::fill(avg.begin(), avg.end(), 0.0);
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i) {
        // 2. scores
        std::vector<double> p(S);
        double max = -INFINITY;
        for (std::size_t j = 0; j < S; ++j) {
          double dot = 0.0;
          for (std::size_t d = 0; d < dk; ++d) dot += Q[i * H * dk + h * dk + d] * K[j * H * dk + h * dk + d];
          const std::size_t attn_index = (a.attn_mask.per_head ? (b * H + h) * L + i : i) * S + j;
          p[j] = dot * a.scale + mask_term(a.attn_mask, attn_index) + mask_term(a.key_padding_mask, b * S + j);
          if (a.is_causal && j > i) p[j] = -INFINITY;
          if (p[j] > max) max = p[j];
        }
        // 3. softmax
        double sum = 0.0;
        for (std::size_t j = 0; j < S; ++j) {
          p[j] = max == -INFINITY ? 0.0 : std::exp(p[j] - max);
          sum += p[j];
        }
        for (std::size_t j = 0; j < S; ++j) p[j] = sum > 0.0 ? p[j] / sum : 0.0;
        // 4. weighted sum of V
        for (std::size_t j = 0; j < S; ++j)
          for (std::size_t d = 0; d < dv; ++d) O[i * E + h * dv + d] += p[j] * V[j * E + h * dv + d];
        if (a.weights) {
          if (a.average_weights)
            for (std::size_t j = 0; j < S; ++j) avg[i * S + j] += p[j] / static_cast<double>(H);
          else
            for (std::size_t j = 0; j < S; ++j) a.weights[((b * H + h) * L + i) * S + j] = static_cast<float>(p[j]);
        }
      }
    if (a.weights && a.average_weights)
      for (std::size_t k = 0; k < L * S; ++k) a.weights[b * L * S + k] = static_cast<float>(avg[k]);
    // 5. output projection
    const std::vector<double> Y = c.out_projection ? linear(O.data(), L, E, w.wo, w.bo, E) : O;
    for (std::size_t k = 0; k < L * E; ++k) a.output[b * L * E + k] = static_cast<float>(Y[k]);
  }
}

}  // namespace wa
