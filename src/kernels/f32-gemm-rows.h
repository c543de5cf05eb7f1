// C[m×n] = A[m×k] · Wᵀ (+ bias[n]) with W read in place as n rows of k (nn.Linear's [out, in]).
//
// For weights used by a few rows only: a one-shot call with a few tokens would spend as long packing
// its weights into panels (f32-gemm.h) as multiplying by them. The rows of A go into the lanes, and
// each output is summed in k order from zero, then the bias added: exactly gemm_packed's order, so a
// product here has gemm_packed's bits (a one-shot call gives a prepared layer's numbers).
#pragma once

#include <cstddef>

namespace wa {

// Most k gemm_rows takes: A's rows are transposed into a buffer of 4·kMaxRowsK floats on the stack.
constexpr std::size_t kMaxRowsK = 4096;

void gemm_rows(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* w,
               std::size_t ldw, const float* bias, float* c, std::size_t ldc);

}  // namespace wa
