// Masking: which keys each query sees (see masking.h), and the masked, scaled score rows.
#include "masking.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../kernels/f32-gemm.h"
#include "../kernels/f32-softmax.h"

namespace wa {
namespace {

// A mask masks a key where it is true (bool) or −inf (float): the score is then −inf whatever it
// was (even NaN), so a masked key takes no part in the row. Elsewhere a float mask is added.
bool masks_out(const Mask& m, std::size_t index) {
  if (m.kind == MaskKind::boolean) return static_cast<const std::uint8_t*>(m.data)[index] != 0;
  return m.kind == MaskKind::additive && static_cast<const float*>(m.data)[index] == -INFINITY;
}

float masked_score(const Mask& m, std::size_t index, float score) {
  if (masks_out(m, index)) return -INFINITY;
  return m.kind == MaskKind::additive ? score + static_cast<const float*>(m.data)[index] : score;
}

std::size_t attn_mask_offset(const ForwardArgs& a, std::size_t heads, std::size_t b, std::size_t h, std::size_t i) {
  return (a.attn_mask.per_head ? (b * heads + h) * a.tgt_len + i : i) * a.src_len;
}

// row[j] = masked_score(m, offset + j, row[j]) for j in [0, n).
void apply_mask(const Mask& m, std::size_t offset, float* row, std::size_t n) {
  if (m.kind == MaskKind::none) return;
  for (std::size_t j = 0; j < n; ++j) row[j] = masked_score(m, offset + j, row[j]);
}

}  // namespace

KeyRange visible_keys(const ForwardArgs& a, const LayerConfig& c, std::size_t i) {
  const std::size_t pos = a.position_offset + i, window = c.sliding_window;
  // pos − j ≥ w masks key j: the first visible key is pos − w + 1, computed only when it is positive
  // (j + w would wrap for the widest windows).
  const std::size_t first = window && pos >= window ? pos - window + 1 : 0;
  return {first, a.is_causal ? std::min(a.src_len, pos + 1) : a.src_len};
}

bool keys_masked(const ForwardArgs& a, const LayerConfig& c, std::size_t b, std::size_t h, std::size_t i,
                 std::size_t j0, std::size_t n) {
  const KeyRange visible = visible_keys(a, c, i);
  const std::size_t attn = attn_mask_offset(a, c.num_heads, b, h, i), padding = b * a.src_len;
  for (std::size_t j = std::max(j0, visible.first); j < std::min(j0 + n, visible.end); ++j)
    if (!masks_out(a.attn_mask, attn + j) && !masks_out(a.key_padding_mask, padding + j)) return false;
  return true;
}

void mask_scores(const ForwardArgs& a, const LayerConfig& c, double slope, std::size_t b, std::size_t h, std::size_t i,
                 std::size_t j0, float* row, std::size_t n, float scale) {
  const std::size_t pos = a.position_offset + i;
  if (scale != 1.0f) scale_row(row, n, scale);
  if (slope != 0.0) {
    const double distance0 = static_cast<double>(j0) - static_cast<double>(pos);
    for (std::size_t j = 0; j < n; ++j) row[j] += static_cast<float>(slope * (distance0 + static_cast<double>(j)));
  }
  apply_mask(a.attn_mask, attn_mask_offset(a, c.num_heads, b, h, i) + j0, row, n);
  apply_mask(a.key_padding_mask, b * a.src_len + j0, row, n);
  const KeyRange visible = visible_keys(a, c, i);
  if (visible.end < j0 + n) std::fill(row + std::max(visible.end, j0) - j0, row + n, -INFINITY);
  if (visible.first > j0) std::fill(row, row + std::min(n, visible.first - j0), -INFINITY);
}

KeyRange attended_keys(const ForwardArgs& a, const LayerConfig& c, std::size_t i0, std::size_t i1) {
  const std::size_t first = visible_keys(a, c, i0).first, end = visible_keys(a, c, i1 - 1).end;
  return {std::min(first, end) / kPanelWidth * kPanelWidth, end};
}

}  // namespace wa
