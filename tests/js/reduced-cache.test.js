'use strict';
// KV caches stored as 'f16' or 'bf16' (docs/API.md, "Reduced precision"): K after RoPE and V rounded
// to nearest-even in the cache's format, every key and value read from the cache (the call's own
// tokens too). A prompt fed whole, in chunks or token by token agrees with a float64 evaluation over
// the rounded K and V; 1 and 2 threads give the same bits; the cache takes half the bytes; bad
// dtypes are named errors.
//
// The reference rounds the engine's own float32 K (after RoPE) and V, read from a forward without a
// cache with returnIntermediates (the same projection, row by row, as the cached forward's): a
// reference that projected in float64 would round a value near a midpoint of the format the other
// way now and then, which moves an output by more than the tolerance.
const ref = require('./reference');
const { mhaArgs } = require('./cases');
const { useEngines } = require('./engines');
const { MHA_LAYER_ARGS, splitArgs } = require('./contract-args');
const { ROUNDERS, roundF16, roundBf16 } = require('./reduced-cache-rounding');

const engines = useEngines();
const layerOf = (a) => splitArgs(a, MHA_LAYER_ARGS).layer;

/** Rows [t0, t0 + n) of every batch element of a [batch, T, width] tensor. */
function rows(t, batch, T, width, t0, n) {
  const out = new Float64Array(batch * n * width);
  for (let b = 0; b < batch; b++) out.set(t.subarray((b * T + t0) * width, (b * T + t0 + n) * width), b * n * width);
  return out;
}

/** Head `h` (width d) of rows [b·T, (b + 1)·T) of a [batch, T, heads·d] tensor, as float64 [T, d]. */
function headRows(t, b, T, heads, h, d, round = (x) => x) {
  const out = new Float64Array(T * d);
  for (let i = 0; i < T; i++)
    for (let c = 0; c < d; c++) out[i * d + c] = round(t[(b * T + i) * heads * d + h * d + c]);
  return out;
}

/**
 * The causal forward of `full` (positions 0 … T − 1) in float64 over the engine's Q and its K and V
 * rounded as `dtype` stores them: { output [batch, T, E], weights [batch, T, T] (head average) }.
 */
function reference(full, inter, dtype, T) {
  const E = full.embedDim,
    H = full.numHeads,
    Hkv = full.numKvHeads ?? H,
    hd = full.headDim ?? E / H,
    batch = full.batch ?? 1,
    window = full.slidingWindow ?? 0;
  const round = ROUNDERS[dtype];
  const concat = new Float64Array(batch * T * H * hd);
  const weights = new Float64Array(batch * T * T);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor((h * Hkv) / H);
      const add = new Float64Array(T * T);
      ref.addCausal(add, T, T, 0);
      if (window) for (let i = 0; i < T; i++) for (let j = 0; i - j >= window; j++) add[i * T + j] = -Infinity;
      const q = headRows(inter.q, b, T, H, h, hd);
      const k = headRows(inter.k, b, T, Hkv, g, hd, round);
      const v = headRows(inter.v, b, T, Hkv, g, hd, round);
      const { P, A } = ref.attendOneHead(q, k, v, T, T, hd, hd, 1 / Math.sqrt(hd), add);
      for (let i = 0; i < T; i++)
        for (let c = 0; c < hd; c++) concat[(b * T + i) * H * hd + h * hd + c] = A[i * hd + c];
      for (let t = 0; t < T * T; t++) weights[b * T * T + t] += P[t] / H;
    }
  }
  return { output: ref.linear(concat, batch * T, H * hd, full.outProjWeight, E, full.outProjBias), weights };
}

/** Rows [t0, t0 + n), first `cols` columns, of [batch, T, T] weights. */
function weightRows(w, batch, T, t0, n, cols) {
  const out = new Float64Array(batch * n * cols);
  for (let b = 0; b < batch; b++)
    for (let i = 0; i < n; i++)
      out.set(w.subarray((b * T + t0 + i) * T, (b * T + t0 + i) * T + cols), (b * n + i) * cols);
  return out;
}

// Grouped-query layers with RoPE, a window and causality; the last is long enough for several key
// tiles (256 keys each) and stacks its grouped heads in a decode step.
const LAYERS = [
  {
    seed: 60,
    embedDim: 32,
    numHeads: 4,
    numKvHeads: 2,
    rope: true,
    slidingWindow: 9,
    separateBias: true,
    outBias: true,
  },
  { seed: 61, embedDim: 32, numHeads: 4, numKvHeads: 1, headDim: 12, rope: { dim: 8, interleaved: true } },
  { seed: 62, embedDim: 64, numHeads: 8, numKvHeads: 2, headDim: 16, rope: true, slidingWindow: 300, T: 300 },
];
const splitsOf = (T) => ({
  whole: [T],
  chunks: [5, 1, 16, T - 22],
  tokens: Array(T).fill(1),
});

const cases = [];
for (const o of LAYERS)
  for (const dtype of ['f16', 'bf16']) for (const split of ['whole', 'chunks', 'tokens']) cases.push([o, dtype, split]);

describe.each(cases)('%j, a %s cache fed %s', (o, dtype, split) => {
  const T = o.T ?? 37,
    batch = 2,
    E = o.embedDim;
  const full = mhaArgs({ ...o, batch, tgtLen: T, isCausal: true });
  const outputs = {}; // thread count → every chunk's output, in order

  test.each([1, 2])('%i thread(s): every chunk within tolerance of float64 over the rounded K and V', (threads) => {
    const attn = engines[threads];
    const layer = attn.createMultiHeadAttention(layerOf(full));
    const inter = layer.forward({ query: full.query, batch, isCausal: true, returnIntermediates: true }).intermediates;
    const want = reference(full, inter, dtype, T);
    const cache = layer.createKvCache({ maxLength: T + 3, batch, dtype });
    expect(cache.dtype).toBe(dtype);
    const got = [];
    let t0 = 0;
    for (const n of splitsOf(T)[split]) {
      const query = Float32Array.from(rows(full.query, batch, T, E, t0, n));
      const needWeights = n > 1 && n % 2 === 1; // the path with whole score rows, sometimes
      const r = layer.forward({ query, cache, isCausal: true, needWeights });
      expect(cache.length).toBe(t0 + n);
      const label = `${dtype} tokens ${t0}…${t0 + n - 1}`;
      ref.expectClose(r.output, rows(want.output, batch, T, E, t0, n), `${label} output`);
      if (needWeights)
        ref.expectClose(r.weights, weightRows(want.weights, batch, T, t0, n, t0 + n), `${label} weights`);
      got.push(r.output);
      t0 += n;
    }
    outputs[threads] = got;
    cache.dispose();
    layer.dispose();
  });

  test('1 and 2 threads give the same bits', () => {
    expect(outputs[1].length).toBeGreaterThan(0);
    expect(outputs[2].map((x) => Buffer.from(x.buffer))).toEqual(outputs[1].map((x) => Buffer.from(x.buffer)));
  });
});

test('the rounding of K and V is what moves the output: a reduced cache differs from an f32 one', () => {
  const o = LAYERS[0];
  const full = mhaArgs({ ...o, tgtLen: 20, isCausal: true });
  const layer = engines[1].createMultiHeadAttention(layerOf(full));
  const run = (dtype) =>
    layer.forward({ query: full.query, cache: layer.createKvCache({ maxLength: 20, dtype }), isCausal: true }).output;
  const f32 = run('f32'),
    f16 = run('f16'),
    bf16 = run('bf16');
  const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
  // bfloat16 keeps 8 significant bits, binary16 11: each moves the output, bf16 more.
  expect(maxDiff(f16, f32)).toBeGreaterThan(1e-5);
  expect(maxDiff(bf16, f32)).toBeGreaterThan(maxDiff(f16, f32));
  layer.dispose();
});

test('a value past the largest f16 (65504) is Inf in an f16 cache, as in float64 over the rounded values', () => {
  // One head of width 2, V = 70000·x: f16 stores ±Inf where bf16 (float32's range) stores it finite.
  const attn = engines[1];
  const layer = attn.createMultiHeadAttention({
    embedDim: 2,
    numHeads: 1,
    qProjWeight: new Float32Array([1, 0, 0, 1]),
    kProjWeight: new Float32Array([1, 0, 0, 1]),
    vProjWeight: new Float32Array([70000, 0, 0, 1]),
    outProjWeight: new Float32Array([1, 0, 0, 1]),
  });
  const query = new Float32Array([1, 0.5, 0.25, 1]);
  for (const dtype of ['f16', 'bf16']) {
    const cache = layer.createKvCache({ maxLength: 2, dtype });
    const out = layer.forward({ query, cache, isCausal: true, needWeights: false }).output;
    if (dtype === 'f16') {
      // 70000 → Inf (17500 → 17504): the attention's first column is Inf, and the out projection's
      // 0 · Inf makes the second NaN, as float64 has it.
      expect(Array.from(out)).toEqual([Infinity, NaN, Infinity, NaN]);
    } else {
      expect(Math.abs(out[0] - roundBf16(70000))).toBeLessThanOrEqual(1e-4 * 70000);
      expect(Math.abs(out[1] - 0.5)).toBeLessThanOrEqual(1e-4);
      expect(Array.from(out).every(Number.isFinite)).toBe(true);
    }
    cache.dispose();
  }
  layer.dispose();
});

test('tiny values (f16 subnormals) and their widening: an out projection of 1e5 shows every bit', () => {
  // V ≈ 1e-5·x: binary16 stores it subnormal (below 2^-14); the out projection scales it back to ≈ 1.
  const r = ref.mulberry32(9);
  const full = {
    embedDim: 4,
    numHeads: 1,
    query: ref.randomArray(r, 6 * 4),
    qProjWeight: ref.randomArray(r, 16),
    kProjWeight: ref.randomArray(r, 16),
    vProjWeight: ref.randomArray(r, 16, 2e-5),
    outProjWeight: ref.randomArray(r, 16, 1e5),
  };
  const layer = engines[2].createMultiHeadAttention(layerOf(full));
  const inter = layer.forward({ query: full.query, isCausal: true, returnIntermediates: true }).intermediates;
  for (const dtype of ['f16', 'bf16']) {
    const want = reference(full, inter, dtype, 6);
    const cache = layer.createKvCache({ maxLength: 6, dtype });
    ref.expectClose(layer.forward({ query: full.query, cache, isCausal: true }).output, want.output, dtype);
    cache.dispose();
  }
  layer.dispose();
});

test('the test rounding: known values of both formats', () => {
  expect([
    roundF16(1 + 2 ** -11),
    roundF16(1 + 3 * 2 ** -11),
    roundF16(65504),
    roundF16(65519.9),
    roundF16(65520),
  ]).toEqual([1, 1 + 2 ** -9, 65504, 65504, Infinity]);
  expect([roundF16(2 ** -24), roundF16(2 ** -25), roundF16(3 * 2 ** -25), roundF16(-0.1)]).toEqual([
    2 ** -24,
    0,
    2 ** -23,
    -0.0999755859375,
  ]);
  expect([roundBf16(1 + 2 ** -8), roundBf16(1 + 3 * 2 ** -8), roundBf16(70000), roundBf16(-0.1)]).toEqual([
    1,
    1 + 2 ** -6,
    70144,
    -0.10009765625,
  ]);
});

describe('bytes and errors', () => {
  const o = LAYERS[0];
  const full = mhaArgs({ ...o, tgtLen: 4, isCausal: true });

  test('a reduced cache takes half the heap of an f32 one (within 1 %)', () => {
    const attn = engines[1];
    const layer = attn.createMultiHeadAttention(layerOf(full));
    const grown = (dtype) => {
      const before = attn.memoryStats().heapInUse;
      const cache = layer.createKvCache({ maxLength: 4096, batch: 2, dtype });
      const bytes = attn.memoryStats().heapInUse - before;
      cache.dispose();
      return bytes;
    };
    const f32 = grown('f32');
    expect(f32).toBeGreaterThan(2 * 4096 * 2 * 3 * 8 * 4); // batch·KV heads·3 copies·headDim·4 bytes per token
    for (const dtype of ['f16', 'bf16']) expect(Math.abs(grown(dtype) / f32 - 0.5)).toBeLessThan(0.01);
    expect(grown(undefined)).toBe(f32);
    layer.dispose();
  });

  test('dtype: not a string → TypeError; another string → RangeError naming it and the allowed values', () => {
    const layer = engines[1].createMultiHeadAttention(layerOf(full));
    expect(() => layer.createKvCache({ maxLength: 4, dtype: 16 })).toThrow(TypeError);
    expect(() => layer.createKvCache({ maxLength: 4, dtype: null })).toThrow(
      /dtype must be one of 'f32', 'f16', 'bf16', got null/,
    );
    expect(() => layer.createKvCache({ maxLength: 4, dtype: 'int8' })).toThrow(RangeError);
    expect(() => layer.createKvCache({ maxLength: 4, dtype: 'F16' })).toThrow(
      /createKvCache: dtype must be one of 'f32', 'f16', 'bf16', got "F16"/,
    );
    layer.dispose();
  });
});
