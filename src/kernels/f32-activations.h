// The MLP activations of the model families, elementwise over n floats (y may be x):
//   silu       x · sigmoid(x)                                     Llama, Mistral, Qwen2 (SwiGLU)
//   silu_mul   silu(gate) · up                                    the SwiGLU product in one pass
//   gelu_tanh  x · sigmoid(2·√(2/π)·(x + 0.044715·x³))            GPT-2's gelu_new, gelu_pytorch_tanh
//              (= 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), the same function)
//   gelu_erf   0.5·x·(1 + erf(x/√2))                              BERT's gelu
// Every element, tail included, goes through the same vector code, so a value's result does not
// depend on where it sits. Pointers and sizes only: never allocates, never throws.
#pragma once

#include <cstddef>

namespace wa {

void silu(const float* x, std::size_t n, float* y);
void silu_mul(const float* gate, const float* up, std::size_t n, float* y);
void gelu_tanh(const float* x, std::size_t n, float* y);
void gelu_erf(const float* x, std::size_t n, float* y);

}  // namespace wa
