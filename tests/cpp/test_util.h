// Shared helpers for the kernel tests: seeded inputs and the contract's tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attention.h"

namespace wa_test {

inline std::vector<float> random_vector(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// |got − ref| ≤ 1e-4 + 1e-4·|ref| for every element; names the case and the first bad index.
inline ::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref,
                                            const std::string& label) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << label << ": size " << got.size() << " != " << ref.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = 1e-4 + 1e-4 * std::fabs(ref[i]);
    if (!(std::fabs(got[i] - ref[i]) <= tol))
      return ::testing::AssertionFailure()
             << label << ": first bad index " << i << " got " << got[i] << " expected " << ref[i];
  }
  return ::testing::AssertionSuccess();
}

// A layer of the v1 fields (no decoder features): sizes, heads, head widths, out projection.
inline wa::LayerConfig layer_config(std::size_t q_in, std::size_t k_in, std::size_t v_in, std::size_t heads,
                                    std::size_t dk, std::size_t dv, bool out_projection) {
  wa::LayerConfig c;
  c.q_in = q_in;
  c.k_in = k_in;
  c.v_in = v_in;
  c.num_heads = heads;
  c.num_kv_heads = heads;
  c.head_dim_qk = dk;
  c.head_dim_v = dv;
  c.out_projection = out_projection;
  return c;
}

// A forward of query [L, ·] against key and value [S, ·] into output; no masks, no weights.
inline wa::ForwardArgs forward_args(std::size_t L, std::size_t S, const float* query, const float* key,
                                    const float* value, float scale, float* output) {
  wa::ForwardArgs a;
  a.tgt_len = L;
  a.src_len = S;
  std::tie(a.query, a.key, a.value) = std::make_tuple(query, key, value);
  a.scale = scale;
  a.output = output;
  return a;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The value of a binary16 from its fields, in double (no bit tricks): what the engine's f16 widening
// must give, for the tests of reduced weights and reduced KV caches.
inline double f16_value(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0x1f)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    v = std::ldexp(mant, -24);
  else
    v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

}  // namespace wa_test
