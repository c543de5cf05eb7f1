'use strict';
// Round-to-nearest-even into binary16 and bfloat16, written apart from the engine's bit tricks
// (src/kernels/kv-half.h): in float64 arithmetic, from each format's precision and exponent range.
// The tests' float64 references round cached K and V with these.

/** Round half to even of a non-negative number. */
function roundHalfEven(y) {
  const f = Math.floor(y);
  const d = y - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** The exponent e with 2^e ≤ a < 2^(e+1), for a > 0 (log2 may round near a power of two). */
function exponentOf(a) {
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  return e;
}

/**
 * A binary format of `bits` significand bits (the leading one included), smallest normal exponent
 * `minExp`, overflowing to ±Infinity from `overflow` (the midpoint past the largest finite value).
 */
function rounder(bits, minExp, overflow) {
  return (x) => {
    if (Number.isNaN(x) || x === 0 || !Number.isFinite(x)) return x;
    const a = Math.abs(x);
    if (a >= overflow) return Math.sign(x) * Infinity;
    const ulp = 2 ** (Math.max(exponentOf(a), minExp) - (bits - 1));
    const r = roundHalfEven(a / ulp) * ulp;
    if (r === 0) return x < 0 ? -0 : 0;
    return Math.sign(x) * r;
  };
}

// binary16: 11 significant bits, normal from 2^-14, largest 65504, midpoint to 2^16 at 65520.
const roundF16 = rounder(11, -14, 65520);
// bfloat16: 8 significant bits, float32's exponent range; largest (2 − 2^-7)·2^127.
const roundBf16 = rounder(8, -126, (2 - 2 ** -8) * 2 ** 127);

const ROUNDERS = { f32: (x) => Math.fround(x), f16: roundF16, bf16: roundBf16 };

module.exports = { roundF16, roundBf16, ROUNDERS };
