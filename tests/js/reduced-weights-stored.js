'use strict';
// The values a reduced weight stores, computed here independently of the engine (plain double
// arithmetic, no bit tricks): f16 and bf16 rounding to nearest-even, int8's per-output-row
// quantization (the contract's "Reduced precision (v3)"). The tests' float64 references use them.

/** x rounded half to even to an integer (x exact in double). */
function roundHalfEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * A float32 value x rounded to nearest-even in a binary format with `mant` mantissa bits, smallest
 * normal exponent `emin` and largest finite value `max`; past max's halfway to the next power: ±Inf.
 */
function roundBinary(x, mant, emin, max, overflow) {
  if (Number.isNaN(x) || x === 0 || !Number.isFinite(x)) return x;
  const a = Math.abs(x);
  if (a >= overflow) return Math.sign(x) * Infinity;
  let e = Math.max(Math.floor(Math.log2(a)), emin);
  while (e > emin && 2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** (e - mant);
  const r = roundHalfEven(a / ulp) * ulp;
  return Math.sign(x) * r; // ≤ max: larger values were sent to Inf above
}

// f16: 10 mantissa bits, normals from 2^-14, max 65504; 65520 (halfway to 2^16) and up round to Inf.
const f16 = (x) => roundBinary(x, 10, -14, 65504, 65520);
// bf16: float32's exponent range with 7 mantissa bits; halfway past its max rounds to Inf.
const BF16_MAX = (2 - 2 ** -7) * 2 ** 127;
const bf16 = (x) => roundBinary(x, 7, -126, BF16_MAX, BF16_MAX + 2 ** (127 - 8));

/**
 * int8 of a matrix whose output o has weights at(o, i), i < inF: per output s = fround(max|w| / 127)
 * (1 for a zero row), q = roundHalfEven(w / s) clamped to ±127 → { q: Int8Array [out·in], s: Float64Array }.
 */
function quantizeInt8(outF, inF, at) {
  const q = new Int8Array(outF * inF);
  const s = new Float64Array(outF);
  for (let o = 0; o < outF; o++) {
    let max = 0;
    for (let i = 0; i < inF; i++) max = Math.max(max, Math.abs(at(o, i)));
    s[o] = max > 0 ? Math.fround(max / 127) : 1;
    for (let i = 0; i < inF; i++) q[o * inF + i] = Math.max(-127, Math.min(127, roundHalfEven(at(o, i) / s[o])));
  }
  return { q, s };
}

/**
 * A weight as stored by `dtype`, back in its own layout: f16/bf16 values, or int8's q·s_r — exact in
 * float64 (`exact`: for a float64 reference), or rounded to float32 as the engine computes it
 * (fround(q·s_r), for a float32 twin that must give the engine's bits). layout 'out,in' (nn.Linear) or
 * 'in,out' (GPT-2's Conv1D, quantized by output column).
 */
function storedWeight(data, outF, inF, dtype, layout = 'out,in', exact = false) {
  if (dtype === 'f32') return Float64Array.from(data);
  if (dtype === 'f16' || dtype === 'bf16') return Float64Array.from(data, dtype === 'f16' ? f16 : bf16);
  const index = layout === 'in,out' ? (o, i) => i * outF + o : (o, i) => o * inF + i;
  const { q, s } = quantizeInt8(outF, inF, (o, i) => data[index(o, i)]);
  const out = new Float64Array(data.length);
  for (let o = 0; o < outF; o++)
    for (let i = 0; i < inF; i++) {
      const v = q[o * inF + i] * s[o];
      out[index(o, i)] = exact ? v : Math.fround(v);
    }
  return out;
}

module.exports = { roundHalfEven, f16, bf16, quantizeInt8, storedWeight };
