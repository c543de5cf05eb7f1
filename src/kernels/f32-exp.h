// exp(x) for x ≤ 0 on a SIMD batch: what softmax needs after subtracting the row max.
//
// The XNNPACK "rr2-p5" scheme (src/f32-raddstoreexpminusmax): n = round(x / ln2) by the magic-bias
// trick, s = 2^n built in the exponent bits, t = x − n·ln2 in two steps (hi + lo) for accuracy,
// exp(t) by a degree-5 polynomial, result s + s·t·p(t). About 1 ulp on [-87.3, 0]; below that the
// result is 0 (as exp underflows); NaN stays NaN. xsimd::exp is more general and about twice as slow
// through the SSE-to-SIMD128 mapping.
//
// Its eight multiply-adds are simd::madd: fused (one rounding) in the relaxed builds, and the same
// mul then add as before in the others, bit for bit. Fused, with the constants read once (below),
// the relaxed build's softmax takes a third less time in V8 (1.35 → 0.9 ns per score).
#pragma once

#include "simd.h"

namespace wa {

// The scheme's constants, as batches. A loop reads them once (exp_constants() before it) and passes
// them to every exp_nonpositive: V8 builds each v128.const anew where it is used, several
// instructions a time, and a compiler that sees the values puts them back into the loop as such
// constants. Read through a pointer it cannot see through, they stay in registers.
struct ExpConstants {
  simd::batch<float> magic_bias, log2e, minus_ln2_hi, minus_ln2_lo, c5, c4, c3, c2, c1, denormal_cutoff;
};

inline ExpConstants exp_constants() {
  alignas(16) static const float kValues[10] = {
      0x1.8000FEp23f,    // magic bias: 1.5·2^23 + 127, rounds and adds the exponent bias
      0x1.715476p+0f,    // log2(e)
      -0x1.62E400p-1f,   // −ln2, high part
      -0x1.7F7D1Cp-20f,  // −ln2, low part
      0x1.0F9F9Cp-7f,   0x1.573A1Ap-5f, 0x1.555A80p-3f, 0x1.FFFDC6p-2f, 0x1.FFFFF6p-1f,  // c5 … c1
      -0x1.5D589Ep6f,  // below this, exp underflows to 0
  };
  const float* v = kValues;
  __asm__("" : "+r"(v));  // hides the values from the optimizer (see ExpConstants)
  using Batch = simd::batch<float>;
  return {Batch(v[0]), Batch(v[1]), Batch(v[2]), Batch(v[3]), Batch(v[4]),
          Batch(v[5]), Batch(v[6]), Batch(v[7]), Batch(v[8]), Batch(v[9])};
}

inline simd::batch<float> exp_nonpositive(const simd::batch<float>& x, const ExpConstants& k) {
  using Batch = simd::batch<float>;
  using Ints = simd::batch<int32_t>;
  Batch n = simd::madd(x, k.log2e, k.magic_bias);
  const Batch s = simd::bitwise_cast<Batch>(simd::bitwise_cast<Ints>(n) << 23);
  n -= k.magic_bias;
  Batch t = simd::madd(n, k.minus_ln2_hi, x);
  t = simd::madd(n, k.minus_ln2_lo, t);
  Batch p = simd::madd(k.c5, t, k.c4);
  p = simd::madd(p, t, k.c3);
  p = simd::madd(p, t, k.c2);
  p = simd::madd(p, t, k.c1);
  t *= s;
  const Batch e = simd::madd(t, p, s);
  // Zero below the cutoff (and for -inf: a masked key); andnot keeps a NaN, which compares false.
  const Batch underflow((x < k.denormal_cutoff).data);
  return simd::bitwise_andnot(underflow, e);  // ~underflow & e
}

}  // namespace wa
