// Shared helpers for the kernel tests: seeded inputs and the contract's tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

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
      return ::testing::AssertionFailure() << label << ": first bad index " << i << " got " << got[i]
                                           << " expected " << ref[i];
  }
  return ::testing::AssertionSuccess();
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace wa_test
