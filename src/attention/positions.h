// Position encodings of decoder models (docs/API.md, "Decoder-grade attention"): rotary
// embeddings (RoPE) of Q and K, and the ALiBi slopes added to the scores.
//
// Layouts:
//   cos_sin  [count, dim]: row r holds (cos φ, sin φ) for k = 0 … dim/2−1 at [2k], [2k+1], with
//            φ = (pos0 + r) · base^(−2k/dim) computed in double precision
//   x        rows of a head's vectors, row stride ld; the first dim entries rotate in pairs
//            (x_k, x_{k+dim/2}) (half-split, LLaMA / GPT-NeoX) or (x_{2k}, x_{2k+1}) (interleaved, GPT-J)
#pragma once

#include <cstddef>

namespace wa {

void rope_table(std::size_t pos0, std::size_t count, std::size_t dim, double base, float* cos_sin);
// The same with φ = (pos0 + r) · inverse_frequencies[k] (dim/2 of them), or the above when they are null.
void rope_table(std::size_t pos0, std::size_t count, std::size_t dim, double base, const double* inverse_frequencies,
                float* cos_sin);

// (a, b) → (a·cos φ − b·sin φ, b·cos φ + a·sin φ) for each pair of the first dim entries of each row.
void apply_rope(float* x, std::size_t rows, std::size_t ld, const float* cos_sin, std::size_t dim, bool interleaved);

// The ALiBi paper's slopes for n heads: 2^(−8k/n), k = 1 … n, when n is a power of two; otherwise
// the slopes of the largest power of two m < n, then those of 2m at odd k, n in all.
void alibi_slopes(std::size_t heads, float* slopes);

}  // namespace wa
