// A layer's position options read and checked: RoPE (rope) and ALiBi (alibi), at creation and again
// when a forward repeats them.
import { typedArrayName } from './checks.mjs';

// rope: true, or { dim = headDim, base = 10000, interleaved = false }; null when absent or false.
export function parseRope(c, headDim) {
  const v = c.args.rope;
  if (v === undefined || v === null || v === false) return null;
  if (v === true) {
    if (headDim % 2 !== 0)
      throw c.rangeError(
        'rope',
        `an object with an even dim (rope: true rotates all headDim = ${headDim} entries, which must be even)`,
        true,
      );
    return { dim: headDim, base: 10000, interleaved: false };
  }
  const expected = 'true or an object { dim, base, interleaved }';
  if (typeof v !== 'object' || Array.isArray(v) || typedArrayName(v)) throw c.typeError('rope', expected, v);
  const known = new Set(['dim', 'base', 'interleaved']);
  for (const key of Object.keys(v)) {
    if (!known.has(key)) throw new TypeError(`${c.fn}: unknown rope option ${key} (known: dim, base, interleaved)`);
  }
  const options = { dim: v.dim, base: v.base, interleaved: v.interleaved }; // each read once
  const rc = Object.assign(Object.create(c), {
    args: { 'rope.dim': options.dim, 'rope.base': options.base, 'rope.interleaved': options.interleaved },
  });
  const dim = rc.size('rope.dim', headDim);
  if (dim % 2 !== 0 || dim > headDim) throw c.rangeError('rope.dim', `an even integer ≤ headDim = ${headDim}`, dim);
  // Angles are computed in double precision, so the base travels as a float64 (1e39 is a base too).
  const base = rc.float64('rope.base', 10000);
  if (!(base > 0)) throw c.rangeError('rope.base', 'a positive number', base);
  return { dim, base, interleaved: rc.bool('rope.interleaved', false) };
}

// alibi: true (the paper's slopes), or numHeads slopes; null when absent or false.
export function parseAlibi(c, numHeads) {
  const v = c.args.alibi;
  if (v === undefined || v === null || v === false) return null;
  if (v === true) return true;
  if (typeof v !== 'object')
    throw c.typeError(
      'alibi',
      'true or a Float32Array (or Float16Array, Float64Array, number[]) of numHeads slopes',
      v,
    );
  const slopes = c.tensor('alibi');
  c.length('alibi', slopes, numHeads, () => `numHeads = ${numHeads}`);
  return slopes;
}
