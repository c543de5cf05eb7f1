// exp(x) for x ≤ 0 on a SIMD batch: what softmax needs after subtracting the row max.
//
// The XNNPACK "rr2-p5" scheme (src/f32-raddstoreexpminusmax): n = round(x / ln2) by the magic-bias
// trick, s = 2^n built in the exponent bits, t = x − n·ln2 in two steps (hi + lo) for accuracy,
// exp(t) by a degree-5 polynomial, result s + s·t·p(t). About 1 ulp on [-87.3, 0]; below that the
// result is 0 (as exp underflows); NaN stays NaN. xsimd::exp is more general and about twice as slow
// through the SSE-to-SIMD128 mapping.
#pragma once

#include "simd.h"

namespace wa {

inline simd::batch<float> exp_nonpositive(const simd::batch<float>& x) {
  using Batch = simd::batch<float>;
  using Ints = simd::batch<int32_t>;
  const Batch magic_bias(0x1.8000FEp23f);  // 1.5·2^23 + 127: rounds and adds the exponent bias
  const Batch log2e(0x1.715476p+0f);
  const Batch minus_ln2_hi(-0x1.62E400p-1f);
  const Batch minus_ln2_lo(-0x1.7F7D1Cp-20f);
  const Batch c5(0x1.0F9F9Cp-7f), c4(0x1.573A1Ap-5f), c3(0x1.555A80p-3f), c2(0x1.FFFDC6p-2f), c1(0x1.FFFFF6p-1f);
  const Batch denormal_cutoff(-0x1.5D589Ep6f);  // below: exp underflows to 0

  Batch n = simd::fma(x, log2e, magic_bias);
  const Batch s = simd::bitwise_cast<Batch>(simd::bitwise_cast<Ints>(n) << 23);
  n -= magic_bias;
  Batch t = simd::fma(n, minus_ln2_hi, x);
  t = simd::fma(n, minus_ln2_lo, t);
  Batch p = simd::fma(c5, t, c4);
  p = simd::fma(p, t, c3);
  p = simd::fma(p, t, c2);
  p = simd::fma(p, t, c1);
  t *= s;
  const Batch e = simd::fma(t, p, s);
  // Zero below the cutoff (and for -inf: a masked key); andnot keeps a NaN, which compares false.
  const Batch underflow((x < denormal_cutoff).data);
  return simd::bitwise_andnot(underflow, e);  // ~underflow & e
}

}  // namespace wa
