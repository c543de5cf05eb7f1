// The KV cache: the projected K and V of earlier tokens, per batch element and K/V head, packed as
// the attention reads them.
#include <algorithm>

#include "../attention.h"
#include "../kernels/f32-gemm.h"
#include "plan.h"

namespace wa {

std::size_t KvCache::key_floats() const { return packed_panel_floats(max_length_, dk_); }
std::size_t KvCache::value_floats() const { return packed_panel_floats(dv_, max_length_); }

double KvCache::bytes(const LayerConfig& c, std::size_t batch, std::size_t max_length, KvDtype dtype) {
  const double heads = static_cast<double>(batch) * static_cast<double>(c.num_kv_heads);
  const double rows = static_cast<double>(ceil_div(max_length, kPanelWidth) * kPanelWidth);
  const double dv_panels = static_cast<double>(ceil_div(c.head_dim_v, kPanelWidth) * kPanelWidth);
  const double stored = rows * static_cast<double>(c.head_dim_qk) + dv_panels * static_cast<double>(max_length) +
                        static_cast<double>(max_length) * static_cast<double>(c.head_dim_v);
  const double element = dtype == KvDtype::f32 ? sizeof(float) : sizeof(std::uint16_t);
  return heads * (stored * element + sizeof(float));  // + the non-finite flag
}

bool KvCache::fits(const LayerConfig& c) const {
  return num_kv_heads_ == c.num_kv_heads && dk_ == c.head_dim_qk && dv_ == c.head_dim_v;
}

Status KvCache::init(const LayerConfig& c, std::size_t batch, std::size_t max_length, KvDtype dtype) {
  if (batch == 0 || max_length == 0 || c.head_dim_qk == 0 || c.head_dim_v == 0) return Status::invalid_argument;
  if (dtype != KvDtype::f32 && dtype != KvDtype::f16 && dtype != KvDtype::bf16) return Status::invalid_argument;
  dtype_ = dtype;
  num_kv_heads_ = c.num_kv_heads;
  dk_ = c.head_dim_qk;
  dv_ = c.head_dim_v;
  batch_ = batch;
  max_length_ = max_length;
  length_ = 0;
  const std::size_t heads = batch * num_kv_heads_;
  if (dtype != KvDtype::f32) {
    if (!keys16_.allocate(heads * key_floats()) || !values16_.allocate(heads * value_floats()) ||
        !value_rows16_.allocate(heads * max_length * dv_) || !nonfinite_.allocate(heads))
      return Status::out_of_memory;
    std::fill_n(keys16_.get(), heads * key_floats(), std::uint16_t{0});  // +0 in both formats
    std::fill_n(nonfinite_.get(), heads, 0.0f);
    return Status::ok;
  }
  if (!keys_.allocate(heads * key_floats()) || !values_.allocate(heads * value_floats()) ||
      !value_rows_.allocate(heads * max_length * dv_) || !nonfinite_.allocate(heads))
    return Status::out_of_memory;
  // The key panels' unused lanes are read by the GEMM (and dropped): zeros, never garbage.
  std::fill_n(keys_.get(), heads * key_floats(), 0.0f);
  std::fill_n(nonfinite_.get(), heads, 0.0f);
  return Status::ok;
}

}  // namespace wa
