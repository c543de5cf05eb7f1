// LayerNorm over rows (GPT-2, BERT): y = (x − mean) / sqrt(var + eps) ⊙ weight + bias, with the
// biased variance (divided by n), as torch.nn.functional.layer_norm. Two passes over each row (mean,
// then the squared deviations), so a large mean does not cancel the variance away.
// Pointers and sizes only: never allocates, never throws.
#pragma once

#include <cstddef>

namespace wa {

// x and y are [rows, n], contiguous; weight is [n]; bias is [n] or nullptr (none). y may be x.
void layernorm(const float* x, const float* weight, const float* bias, std::size_t rows, std::size_t n, float eps,
               float* y);

}  // namespace wa
