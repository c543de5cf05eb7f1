// RMSNorm over rows (Llama, Mistral, Qwen2): y = weight ⊙ x / sqrt(mean(x²) + eps), as
// transformers' LlamaRMSNorm computes it (no mean subtracted, no bias, the weight applied last).
// Pointers and sizes only: never allocates, never throws. Out of line, as the other kernels.
#pragma once

#include <cstddef>

namespace wa {

// x and y are [rows, n], contiguous; weight is [n]. y may be x (in place).
void rmsnorm(const float* x, const float* weight, std::size_t rows, std::size_t n, float eps, float* y);

}  // namespace wa
