// The teaching copies of a forward (see recorder.h).
#include "recorder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace wa {
namespace {

// Rows of one head (`dim` wide) into their place among `heads` heads: [.., heads·dim] from row `row0`.
void copy_head_rows(float* dst, std::size_t row0, std::size_t heads, std::size_t h, std::size_t dim, const float* src,
                    std::size_t rows) {
  for (std::size_t i = 0; i < rows; ++i)
    std::memcpy(dst + (row0 + i) * heads * dim + h * dim, src + i * dim, dim * sizeof(float));
}

}  // namespace

void Recorder::query(std::size_t b, std::size_t h, std::size_t r0, std::size_t rows, const float* q) const {
  if (in_ && in_->q) copy_head_rows(in_->q, b * a_.tgt_len + r0, c_.num_heads, h, c_.head_dim_qk, q, rows);
}

void Recorder::key(std::size_t b, std::size_t g, std::size_t r0, std::size_t rows, const float* k) const {
  if (in_ && in_->k) copy_head_rows(in_->k, b * a_.src_len + r0, c_.num_kv_heads, g, c_.head_dim_qk, k, rows);
}

void Recorder::value(std::size_t b, std::size_t g, std::size_t r0, std::size_t rows, const float* v) const {
  if (in_ && in_->v) copy_head_rows(in_->v, b * a_.src_len + r0, c_.num_kv_heads, g, c_.head_dim_v, v, rows);
}

void Recorder::scores(std::size_t b, std::size_t h, std::size_t i, const float* row, KeyRange keys,
                      const HeadView& view) const {
  if (!in_ || !in_->scores) return;
  const std::size_t S = a_.src_len, dk = c_.head_dim_qk;
  float* dst = in_->scores + ((b * c_.num_heads + h) * a_.tgt_len + i) * S;
  std::memcpy(dst + keys.first, row + keys.first, (keys.end - keys.first) * sizeof(float));
  // Skipped keys were never multiplied; the teaching copy shows their product.
  for (std::size_t j = 0; j < S; ++j) {
    if (j == keys.first) j = keys.end;
    if (j >= S) break;
    float dot = 0.0f;
    for (std::size_t d = 0; d < dk; ++d) dot += view.q[i * dk + d] * view.k[j * dk + d];
    dst[j] = dot;
  }
}

void Recorder::scaled_scores(std::size_t b, std::size_t h, std::size_t i, const float* row, KeyRange keys) const {
  if (!in_ || !in_->scaled_scores) return;
  const std::size_t S = a_.src_len;
  float* dst = in_->scaled_scores + ((b * c_.num_heads + h) * a_.tgt_len + i) * S;
  std::fill(dst, dst + S, -INFINITY);
  std::memcpy(dst + keys.first, row + keys.first, (keys.end - keys.first) * sizeof(float));
}

void Recorder::attn_output(std::size_t b, const float* attn_out) const {
  const std::size_t floats = a_.tgt_len * c_.attn_width();
  if (in_ && in_->attn_output) std::memcpy(in_->attn_output + b * floats, attn_out, floats * sizeof(float));
}

}  // namespace wa
