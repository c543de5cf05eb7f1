#include "attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/f32-gemm.h"
#include "kernels/f32-softmax.h"
#include "parallel.h"

#if defined(__GLIBC__) || defined(__EMSCRIPTEN__)
#include <malloc.h>
#endif

namespace wa {
namespace {

// Query rows per attention task: the scores of a block (rows × keys) stay in L2 and the
// block is the unit of work for threads.
constexpr std::size_t kRowBlock = 32;
// Rows per projection task.
constexpr std::size_t kProjRows = 64;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Splits [0, rows) into chunks of `chunk` rows and runs them on the pool.
template <class Fn>
void parallel_rows(std::size_t rows, std::size_t chunk, Fn&& fn) {
  parallel_for(ceil_div(rows, chunk), [&](std::size_t t) {
    const std::size_t begin = t * chunk;
    fn(begin, std::min(rows, begin + chunk));
  });
}

Status pack_projection(Layer::Projection& p, const float* w, const float* b, std::size_t heads,
                       std::size_t width, std::size_t in) {
  p.width = width;
  p.in = in;
  p.head_stride = packed_panel_floats(width, in);
  if (!p.packed.allocate(p.head_stride * heads) || !p.bias.allocate(heads * width)) return Status::out_of_memory;
  for (std::size_t h = 0; h < heads; ++h)
    pack_transposed(w + h * width * in, width, in, in, p.packed.get() + h * p.head_stride);
  for (std::size_t i = 0; i < heads * width; ++i) p.bias.get()[i] = b ? b[i] : 0.0f;
  return Status::ok;
}

// out[rows, width] = x[rows, in] · W_hᵀ + b_h for head h, split over the pool.
void project(const Layer::Projection& p, std::size_t h, const float* x, std::size_t rows, float* out,
             std::size_t ldo) {
  const float* packed = p.packed.get() + h * p.head_stride;
  const float* bias = p.bias.get() + h * p.width;
  parallel_rows(rows, kProjRows, [&](std::size_t r0, std::size_t r1) {
    gemm_packed(r1 - r0, p.width, p.in, x + r0 * p.in, p.in, packed, p.in, bias, out + r0 * ldo, ldo);
  });
}

bool is_masked(const Mask& m, std::size_t index) {
  return m.kind == MaskKind::boolean && static_cast<const std::uint8_t*>(m.data)[index] != 0;
}
float additive(const Mask& m, std::size_t index) {
  return m.kind == MaskKind::additive ? static_cast<const float*>(m.data)[index] : 0.0f;
}

// Scores of query row i against keys [0, n) → scaled and masked, in place.
void scale_and_mask(float* row, std::size_t n, float scale, const Mask& attn, std::size_t attn_offset,
                    const Mask& padding, std::size_t padding_offset) {
  if (scale != 1.0f)
    for (std::size_t j = 0; j < n; ++j) row[j] *= scale;
  if (attn.kind != MaskKind::none)
    for (std::size_t j = 0; j < n; ++j)
      row[j] = is_masked(attn, attn_offset + j) ? -INFINITY : row[j] + additive(attn, attn_offset + j);
  if (padding.kind != MaskKind::none)
    for (std::size_t j = 0; j < n; ++j)
      row[j] = is_masked(padding, padding_offset + j) ? -INFINITY : row[j] + additive(padding, padding_offset + j);
}

struct HeadScratch {
  FloatBuffer q, k, v, packed_k, packed_v;
};

}  // namespace

Status Layer::init(const LayerConfig& c, const LayerWeights& w) {
  if (c.q_in == 0 || c.k_in == 0 || c.v_in == 0 || c.num_heads == 0 || c.head_dim_qk == 0 ||
      c.head_dim_v == 0 || !w.wq || !w.wk || !w.wv || (c.out_projection && !w.wo))
    return Status::invalid_argument;
  config_ = c;
  const std::size_t h = c.num_heads;
  Status s = pack_projection(q_, w.wq, w.bq, h, c.head_dim_qk, c.q_in);
  if (s == Status::ok) s = pack_projection(k_, w.wk, w.bk, h, c.head_dim_qk, c.k_in);
  if (s == Status::ok) s = pack_projection(v_, w.wv, w.bv, h, c.head_dim_v, c.v_in);
  if (s == Status::ok && c.out_projection) s = pack_projection(o_, w.wo, w.bo, 1, h * c.head_dim_v, h * c.head_dim_v);
  return s;
}

Status Layer::forward(const ForwardArgs& a) const {
  const LayerConfig& c = config_;
  const std::size_t L = a.tgt_len, S = a.src_len, H = c.num_heads, dk = c.head_dim_qk, dv = c.head_dim_v;
  const std::size_t width_v = H * dv;
  if (L == 0 || S == 0 || a.batch == 0 || !a.query || !a.key || !a.value || !a.output || c.q_in == 0)
    return Status::invalid_argument;

  HeadScratch hs;
  const int threads = thread_count();
  const std::size_t blocks = ceil_div(L, kRowBlock);
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads), blocks);
  FloatBuffer scores;
  FloatBuffer out_rows;
  if (!hs.q.allocate(L * dk) || !hs.k.allocate(S * dk) || !hs.v.allocate(S * dv) ||
      !hs.packed_k.allocate(packed_panel_floats(S, dk)) || !hs.packed_v.allocate(packed_panel_floats(dv, S)) ||
      !scores.allocate(workers * kRowBlock * S) ||
      (c.out_projection && !out_rows.allocate(std::min<std::size_t>(threads, ceil_div(L, kProjRows)) * kProjRows * width_v)))
    return Status::out_of_memory;

  for (std::size_t b = 0; b < a.batch; ++b) {
    const float* query = a.query + b * L * c.q_in;
    const float* key = a.key + b * S * c.k_in;
    const float* value = a.value + b * S * c.v_in;
    // With an out projection, the heads' results are gathered in `output` and projected in place.
    float* attn_out = a.output + b * L * width_v;

    for (std::size_t h = 0; h < H; ++h) {
      // 1. Project this head's Q, K, V; pack K and V as GEMM panels.
      project(q_, h, query, L, hs.q.get(), dk);
      // Scaling Q (L·dk products) instead of the scores (L·S) saves a pass over every score row,
      // as PyTorch does. The teaching copy wants raw Q·Kᵀ, so it scales the scores instead.
      const float score_scale = a.intermediates ? a.scale : 1.0f;
      if (!a.intermediates)
        for (std::size_t k = 0; k < L * dk; ++k) hs.q.get()[k] *= a.scale;
      project(k_, h, key, S, hs.k.get(), dk);
      project(v_, h, value, S, hs.v.get(), dv);
      parallel_rows(S, 256, [&](std::size_t r0, std::size_t r1) {
        pack_transposed(hs.k.get() + r0 * dk, r1 - r0, dk, dk, hs.packed_k.get() + r0 * dk);
      });
      pack_rows(hs.v.get(), S, dv, dv, hs.packed_v.get());
      if (Intermediates* in = a.intermediates) {
        for (std::size_t i = 0; i < L && in->q; ++i)
          std::memcpy(in->q + (b * L + i) * H * dk + h * dk, hs.q.get() + i * dk, dk * sizeof(float));
        for (std::size_t j = 0; j < S && in->k; ++j)
          std::memcpy(in->k + (b * S + j) * H * dk + h * dk, hs.k.get() + j * dk, dk * sizeof(float));
        for (std::size_t j = 0; j < S && in->v; ++j)
          std::memcpy(in->v + (b * S + j) * width_v + h * dv, hs.v.get() + j * dv, dv * sizeof(float));
      }

      // 2. Per block of query rows: scores → scale, mask → softmax → weights → P·V.
      parallel_for(workers, [&](std::size_t worker) {
        float* block_scores = scores.get() + worker * kRowBlock * S;
        for (std::size_t blk = worker; blk < blocks; blk += workers) {
          const std::size_t i0 = blk * kRowBlock, i1 = std::min(L, i0 + kRowBlock), rows = i1 - i0;
          // Keys past the block's last query are all masked under causality: skip them.
          const std::size_t keys = a.is_causal ? std::min(S, i1) : S;
          gemm_packed(rows, keys, dk, hs.q.get() + i0 * dk, dk, hs.packed_k.get(), dk, nullptr, block_scores, S);
          for (std::size_t r = 0; r < rows; ++r) {
            const std::size_t i = i0 + r;
            float* row = block_scores + r * S;
            const std::size_t head_row = (b * H + h) * L + i;
            if (a.intermediates && a.intermediates->scores) {
              float* dst = a.intermediates->scores + head_row * S;
              std::memcpy(dst, row, keys * sizeof(float));
              // Skipped causal keys were never multiplied; the teaching copy shows their product.
              for (std::size_t j = keys; j < S; ++j) {
                float dot = 0.0f;
                for (std::size_t d = 0; d < dk; ++d) dot += hs.q.get()[i * dk + d] * hs.k.get()[j * dk + d];
                dst[j] = dot;
              }
            }
            const std::size_t attn_offset = (a.attn_mask.per_head ? (b * H + h) * L + i : i) * S;
            scale_and_mask(row, keys, score_scale, a.attn_mask, attn_offset, a.key_padding_mask, b * S);
            if (a.is_causal)
              for (std::size_t j = i + 1; j < keys; ++j) row[j] = -INFINITY;
            if (a.intermediates && a.intermediates->scaled_scores) {
              float* dst = a.intermediates->scaled_scores + head_row * S;
              std::memcpy(dst, row, keys * sizeof(float));
              for (std::size_t j = keys; j < S; ++j) dst[j] = -INFINITY;
            }
            softmax_row(row, keys);
            if (a.weights) {
              const bool average = a.average_weights && H > 1;
              float* dst = a.weights + (average ? b * L + i : head_row) * S;
              if (!average || h == 0) {
                std::memcpy(dst, row, keys * sizeof(float));
                std::fill(dst + keys, dst + S, 0.0f);
              } else {
                for (std::size_t j = 0; j < keys; ++j) dst[j] += row[j];
              }
              if (average && h == H - 1)
                for (std::size_t j = 0; j < S; ++j) dst[j] /= static_cast<float>(H);
            }
          }
          gemm_packed(rows, dv, keys, block_scores, S, hs.packed_v.get(), S, nullptr,
                      attn_out + i0 * width_v + h * dv, width_v);
        }
      });
    }

    if (a.intermediates && a.intermediates->attn_output)
      std::memcpy(a.intermediates->attn_output + b * L * width_v, attn_out, L * width_v * sizeof(float));

    // 3. Output projection, in place: each row block is read before it is overwritten.
    if (c.out_projection) {
      const std::size_t tasks = ceil_div(L, kProjRows);
      const std::size_t proj_workers = std::min<std::size_t>(static_cast<std::size_t>(threads), tasks);
      parallel_for(proj_workers, [&](std::size_t worker) {
        float* tmp = out_rows.get() + worker * kProjRows * width_v;
        for (std::size_t t = worker; t < tasks; t += proj_workers) {
          const std::size_t r0 = t * kProjRows, rows = std::min(L, r0 + kProjRows) - r0;
          gemm_packed(rows, width_v, width_v, attn_out + r0 * width_v, width_v, o_.packed.get(), width_v,
                      o_.bias.get(), tmp, width_v);
          std::memcpy(attn_out + r0 * width_v, tmp, rows * width_v * sizeof(float));
        }
      });
    }
  }
  return Status::ok;
}

std::size_t heap_in_use() {
#if defined(__GLIBC__) || defined(__EMSCRIPTEN__)
  return static_cast<std::size_t>(mallinfo().uordblks);
#else
  return 0;
#endif
}

}  // namespace wa
