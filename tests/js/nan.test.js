'use strict';
// Issue 8, item 4: a NaN or ±Infinity in the inputs propagates as IEEE arithmetic says. Every
// output element whose float64 formula involves the bad value is NaN (or ±Inf), every other one
// is what it would be without it; a key masked for a query (bool, −∞, causality) takes no part in
// that query's row. Checked on both attention paths (weights wanted: whole score rows; no weights:
// the fused, tiled path), one-shot and prepared, 1 and 2 threads.
const ref = require('./reference');
const { mhaArgs, saArgs, mhaDims, saDims } = require('./cases');
const { useEngines } = require('./engines');
const { MHA_LAYER_ARGS, splitArgs } = require('./contract-args');

const engines = useEngines();

const poisoned = (t, index, value) => {
  const c = Float32Array.from(t);
  c[index] = value;
  return c;
};

/** Rows (of `width` elements) of `a` that hold a NaN (or, with `test`, another kind of element). */
function nanRows(a, width, test = Number.isNaN) {
  const rows = [];
  for (let r = 0; r < a.length / width; r++) {
    if (a.subarray(r * width, (r + 1) * width).some(test)) rows.push(r);
  }
  return rows;
}
const notFinite = (x) => !Number.isFinite(x);
const range = (lo, hi) => Array.from({ length: hi - lo }, (_, i) => lo + i);

const PATHS = [];
for (const threads of [1, 2])
  for (const needWeights of [true, false])
    for (const prepared of [false, true]) PATHS.push([threads, needWeights, prepared]);
const pathName = (t, w, p) => `threads ${t}, ${w ? 'weights' : 'fused (no weights)'}, ${p ? 'prepared' : 'one-shot'}`;

function mha(threads, prepared, args) {
  const attn = engines[threads];
  if (!prepared) return attn.multiHeadAttention(args);
  const { layer: layerArgs, inputs } = splitArgs(args, MHA_LAYER_ARGS);
  const layer = attn.createMultiHeadAttention(layerArgs);
  try {
    return layer.forward(inputs);
  } finally {
    layer.dispose();
  }
}

function checkAgainstReference(got, args, label) {
  const want = ref.multiHeadAttention(args);
  const dims = mhaDims(args);
  ref.expectClose(got.output, want.output, `${label} output`, dims.output);
  if (want.weights) ref.expectClose(got.weights, want.weights, `${label} weights`, dims.weights);
  return want;
}

describe.each(PATHS.map((p) => [pathName(...p), ...p]))('%s', (label, threads, needWeights, prepared) => {
  const label0 = label;
  test.each([NaN, Infinity, -Infinity])(
    '%s in one query element: that token row is NaN, the others are unchanged',
    (bad) => {
      const E = 8;
      const base = mhaArgs({
        seed: 11,
        batch: 2,
        tgtLen: 5,
        srcLen: 6,
        embedDim: E,
        numHeads: 2,
        bias: true,
        outBias: true,
        needWeights,
      });
      const clean = mha(threads, prepared, base);
      const args = { ...base, query: poisoned(base.query, (1 * 5 + 3) * E + 2, bad) }; // batch 1, token 3
      const got = mha(threads, prepared, args);
      checkAgainstReference(got, args, `${label}, ${bad} in query`);
      // the poisoned token's row only (the old code returned outProjBias there)
      expect(nanRows(got.output, E, notFinite)).toEqual([1 * 5 + 3]);
      if (Number.isNaN(bad)) {
        expect(got.output.subarray(8 * E, 9 * E).every(Number.isNaN)).toBe(true);
        if (needWeights) expect(got.weights.subarray(8 * 6, 9 * 6).every(Number.isNaN)).toBe(true);
      }
      for (let r = 0; r < 10; r++) {
        if (r === 8) continue;
        expect([r, Array.from(got.output.subarray(r * E, (r + 1) * E))]).toEqual([
          r,
          Array.from(clean.output.subarray(r * E, (r + 1) * E)),
        ]);
      }
    },
  );

  test('a NaN in one key: the rows that see it are NaN, the rows that mask it are not', () => {
    const E = 8,
      L = 6,
      S = 6;
    const base = mhaArgs({ seed: 12, tgtLen: L, embedDim: E, numHeads: 2, cross: true, isCausal: true, needWeights });
    const args = { ...base, key: poisoned(base.key, 3 * E + 1, NaN) }; // key 3: queries 3, 4, 5 see it
    const got = mha(threads, prepared, args);
    checkAgainstReference(got, args, `${label}, NaN in key 3`);
    expect(nanRows(got.output, E)).toEqual([3, 4, 5]);
    // a padding mask on key 3 takes it out of every row
    const padded = mha(threads, prepared, {
      ...args,
      keyPaddingMask: Uint8Array.from({ length: S }, (_, j) => (j === 3 ? 1 : 0)),
    });
    expect(nanRows(padded.output, E)).toEqual([]);
  });

  test('a NaN in one value of a 64-token causal call: exactly the rows that see that key are NaN', () => {
    const E = 8,
      L = 64;
    for (const j of [5, 40]) {
      const base = mhaArgs({
        seed: 13 + j,
        tgtLen: L,
        embedDim: E,
        numHeads: 2,
        cross: true,
        isCausal: true,
        needWeights,
      });
      const args = { ...base, value: poisoned(base.value, j * E + 4, NaN) };
      const got = mha(threads, prepared, args);
      checkAgainstReference(got, args, `${label}, NaN in value ${j}`);
      // rows i ≥ j see key j; rows j-… of the same 32-row block that mask it stay finite
      expect([j, nanRows(got.output, E)]).toEqual([j, range(j, L)]);
      // an attnMask −∞ on key j for one row takes it out of that row only
      const mask = new Float32Array(L * L);
      mask[(L - 1) * L + j] = -Infinity;
      const masked = mha(threads, prepared, { ...args, attnMask: mask });
      checkAgainstReference(
        masked,
        { ...args, attnMask: mask },
        `${label}, NaN in value ${j}, masked for the last row`,
      );
      expect([j, nanRows(masked.output, E)]).toEqual([j, range(j, L - 1)]);
    }
  });

  test('±Infinity in one value: rows that weigh it get ±Infinity or NaN as IEEE says', () => {
    const E = 4,
      L = 9;
    const base = mhaArgs({ seed: 14, tgtLen: L, embedDim: E, numHeads: 1, cross: true, isCausal: true, needWeights });
    for (const bad of [Infinity, -Infinity]) {
      const args = { ...base, value: poisoned(base.value, 4 * E, bad) };
      checkAgainstReference(mha(threads, prepared, args), args, `${label}, ${bad} in value 4`);
    }
  });

  // embedDim 1 and weights of 1 (no 0·∞ on the way), positive queries and keys: a −∞ query, or every
  // key −∞, makes that row's every score −∞ through arithmetic (not through a mask).
  test.each(['query', 'key'])(
    'every score −∞ through a −∞ %s: the row is NaN as in float64, with ALiBi and over two key tiles too; a masked row stays zeros',
    (bad) => {
      const L = 3,
        one = new Float32Array([1]);
      for (const [S, alibi] of [
        [5, false],
        [5, true],
        [300, false],
        [300, true],
      ]) {
        const query = Float32Array.from({ length: L }, (_, i) => 0.5 + i / 10);
        const key = Float32Array.from({ length: S }, (_, j) => (bad === 'key' ? -Infinity : 0.3 + (j % 5) / 10));
        const value = Float32Array.from({ length: S }, (_, j) => Math.sin(j));
        if (bad === 'query') query[1] = -Infinity;
        const args = {
          query,
          key,
          value,
          embedDim: 1,
          numHeads: 1,
          inProjWeight: new Float32Array([1, 1, 1]),
          outProjWeight: one,
          needWeights,
          ...(alibi ? { alibi: true } : {}),
        };
        const label = `${label0}, −∞ ${bad}, ${S} keys${alibi ? ', ALiBi' : ''}`;
        const got = mha(threads, prepared, args);
        checkAgainstReference(got, args, label);
        expect([label, nanRows(got.output, 1)]).toEqual([label, bad === 'query' ? [1] : [0, 1, 2]]);
        const mask = new Uint8Array(L * S).fill(1, S, 2 * S); // row 1 masks every key
        const masked = mha(threads, prepared, { ...args, attnMask: mask });
        expect([label, masked.output[1]]).toEqual([label, 0]);
      }
    },
  );

  test('a NaN in a value with more keys than one fused tile (300 keys): only rows that see it', () => {
    const E = 4,
      L = 40,
      S = 300;
    const base = mhaArgs({ seed: 15, tgtLen: L, srcLen: S, embedDim: E, numHeads: 2, needWeights });
    const kpm = new Uint8Array(S);
    kpm[280] = 1;
    const args = { ...base, value: poisoned(base.value, 280 * E, NaN), attnMask: new Uint8Array(L * S) };
    for (let i = 0; i < L; i += 2) args.attnMask[i * S + 280] = 1; // even queries mask key 280
    const got = mha(threads, prepared, args);
    checkAgainstReference(got, args, `${label}, NaN in value 280 of 300`);
    expect(nanRows(got.output, E)).toEqual(range(0, L).filter((i) => i % 2 === 1));
    expect(nanRows(mha(threads, prepared, { ...args, keyPaddingMask: kpm }).output, E)).toEqual([]);
  });
});

test('selfAttention: a NaN in x poisons its own row through Q and every row through K and V', () => {
  for (const needWeights of [true, false]) {
    const args = saArgs({ seed: 16, seqLen: 7, dModel: 6, dK: 4, dV: 3, isCausal: true, needWeights });
    args.x = poisoned(args.x, 4 * 6 + 1, NaN); // token 4: its Q, K and V rows are NaN
    const got = engines[1].selfAttention(args);
    const want = ref.selfAttention(args);
    ref.expectClose(got.output, want.output, `needWeights ${needWeights} output`, saDims(args).output);
    if (needWeights) ref.expectClose(got.weights, want.weights, 'weights', saDims(args).weights);
    expect(nanRows(got.output, 3)).toEqual([4, 5, 6]); // rows that see key 4 (and row 4 itself)
  }
});

test('a fully masked row stays zeros (not NaN) even when its query is NaN', () => {
  const E = 4;
  const base = mhaArgs({ seed: 17, tgtLen: 3, embedDim: E, numHeads: 1, needWeights: true, outBias: false });
  const mask = new Uint8Array(9);
  mask.fill(1, 3, 6); // row 1 masks every key
  const args = { ...base, query: poisoned(base.query, 1 * E, NaN), attnMask: mask };
  const got = engines[1].multiHeadAttention(args);
  checkAgainstReference(got, args, 'NaN query in a fully masked row');
  expect(Array.from(got.output.subarray(E, 2 * E))).toEqual([0, 0, 0, 0]);
  expect(Array.from(got.weights.subarray(3, 6))).toEqual([0, 0, 0]);
});

test('slidingWindow: 2**32 − 1 masks no key: a NaN value reaches every row that sees its key (j + w must not wrap)', () => {
  for (const threads of [1, 2]) {
    for (const needWeights of [true, false]) {
      const base = mhaArgs({
        seed: 18,
        tgtLen: 2,
        embedDim: 4,
        numHeads: 1,
        cross: true,
        slidingWindow: 2 ** 32 - 1,
        needWeights,
      });
      const args = { ...base, value: poisoned(base.value, 1 * 4, NaN) }; // key 1's value
      const got = engines[threads].multiHeadAttention(args);
      checkAgainstReference(got, args, `threads ${threads}, needWeights ${needWeights}, window 2^32 − 1`);
      expect(nanRows(got.output, 4)).toEqual([0, 1]);
    }
  }
});
