#include "norm.h"

#include <cstring>

#include "../kernels/f32-layernorm.h"
#include "../kernels/f32-rmsnorm.h"
#include "tasks.h"

namespace wa {

Status Norm::init(NormKind kind, float eps, std::size_t n, const NormWeights& w) {
  if (!w.weight || n == 0 || (kind == NormKind::rms && w.bias)) return Status::invalid_argument;
  kind_ = kind;
  eps_ = eps;
  n_ = n;
  has_bias_ = w.bias != nullptr;
  if (!weight_.allocate(n) || (has_bias_ && !bias_.allocate(n))) return Status::out_of_memory;
  std::memcpy(weight_.get(), w.weight, n * sizeof(float));
  if (has_bias_) std::memcpy(bias_.get(), w.bias, n * sizeof(float));
  return Status::ok;
}

void Norm::apply(const float* x, std::size_t r0, std::size_t r1, float* y) const {
  if (r1 <= r0) return;
  if (kind_ == NormKind::rms)
    rmsnorm(x + r0 * n_, weight_.get(), r1 - r0, n_, eps_, y + r0 * n_);
  else
    layernorm(x + r0 * n_, weight_.get(), has_bias_ ? bias_.get() : nullptr, r1 - r0, n_, eps_, y + r0 * n_);
}

void Norm::forward(const float* x, std::size_t rows, float* y) const {
  for_rows(rows, 4 * n_, [&](std::size_t r0, std::size_t r1) { apply(x, r0, r1, y); });
}

void Norm::add_forward(float* x, const float* a, std::size_t rows, float* y) const {
  for_rows(rows, 5 * n_, [&](std::size_t r0, std::size_t r1) {
    add_rows(x, a, r0, r1, n_);
    apply(x, r0, r1, y);
  });
}

void add_rows(float* x, const float* a, std::size_t r0, std::size_t r1, std::size_t n) {
  for (std::size_t i = r0 * n, end = r1 * n; i < end; ++i) x[i] += a[i];
}

}  // namespace wa
