'use strict';
// Decoder-grade attention (docs/API.md): grouped-query heads, headDim, separate biases, positions,
// sliding window, ALiBi and RoPE, against the float64 reference, in one-shot calls and prepared
// layers, on 1 and 2 threads; and the properties that tie them to v1.
const ref = require('./reference');
const { mhaArgs, mhaDims, caseName, checkResult } = require('./cases');
const { useEngines } = require('./engines');
const { MHA_LAYER_ARGS, splitArgs } = require('./contract-args');

const engines = useEngines();

const split = (a) => splitArgs(a, MHA_LAYER_ARGS);

const bitsEqual = (a, b, label) => {
  if (a === null || b === null) {
    expect(a).toBe(b);
    return;
  }
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length),
    y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  expect(x.length).toBe(y.length);
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) throw new Error(`${label}: first differing bits at index ${i}: ${a[i]} vs ${b[i]}`);
  }
};

// Each case runs with weights (whole score rows) and without (the fused, tiled path).
const CASES = [
  { seed: 1, tgtLen: 7, embedDim: 16, numHeads: 4, numKvHeads: 2, isCausal: true },
  {
    seed: 2,
    batch: 2,
    tgtLen: 9,
    srcLen: 5,
    embedDim: 12,
    numHeads: 6,
    numKvHeads: 3,
    separateBias: true,
    averageAttnWeights: false,
    keyPaddingMask: 'bool',
  },
  { seed: 3, tgtLen: 5, embedDim: 8, numHeads: 4, numKvHeads: 1, bias: true, outBias: true, attnMask: 'float2d' },
  { seed: 4, tgtLen: 6, embedDim: 12, numHeads: 4, headDim: 5, numKvHeads: 2, isCausal: true, separateBias: true },
  {
    seed: 5,
    batch: 2,
    tgtLen: 4,
    srcLen: 11,
    embedDim: 10,
    kdim: 6,
    vdim: 7,
    numHeads: 2,
    headDim: 8,
    cross: true,
    attnMask: 'bool3d',
  },
  { seed: 6, tgtLen: 5, srcLen: 12, embedDim: 8, numHeads: 2, positionOffset: 7, isCausal: true },
  { seed: 7, tgtLen: 20, embedDim: 8, numHeads: 2, slidingWindow: 4, isCausal: true },
  { seed: 8, tgtLen: 13, embedDim: 8, numHeads: 2, slidingWindow: 3 },
  { seed: 9, tgtLen: 9, embedDim: 12, numHeads: 3, alibi: true, isCausal: true },
  { seed: 10, tgtLen: 9, embedDim: 24, numHeads: 6, numKvHeads: 2, alibi: true, keyPaddingMask: 'float' },
  { seed: 11, tgtLen: 8, embedDim: 16, numHeads: 8, alibi: new Float32Array([0.5, 0.25, -0.1, 0, 1, 2, 0.125, 0.3]) },
  {
    seed: 12,
    tgtLen: 6,
    srcLen: 14,
    embedDim: 16,
    numHeads: 2,
    positionOffset: 8,
    slidingWindow: 5,
    isCausal: true,
    alibi: true,
    attnMask: 'bool2d',
  },
  { seed: 13, tgtLen: 7, embedDim: 16, numHeads: 2, rope: true, isCausal: true },
  { seed: 14, tgtLen: 7, embedDim: 16, numHeads: 2, rope: { interleaved: true }, bias: true },
  {
    seed: 15,
    tgtLen: 6,
    srcLen: 10,
    embedDim: 24,
    numHeads: 2,
    numKvHeads: 1,
    rope: { dim: 6, base: 500 },
    positionOffset: 4,
    isCausal: true,
    separateBias: true,
  },
  {
    seed: 16,
    batch: 2,
    tgtLen: 5,
    embedDim: 16,
    numHeads: 4,
    headDim: 6,
    numKvHeads: 2,
    rope: { dim: 4, interleaved: true, base: 10000.5 },
    positionOffset: 1000000,
    alibi: true,
    slidingWindow: 3,
  },
  // many rows and keys: row blocks of 32, key tiles of 256, window tiles skipped
  {
    seed: 17,
    tgtLen: 300,
    embedDim: 16,
    numHeads: 2,
    numKvHeads: 1,
    slidingWindow: 40,
    isCausal: true,
    rope: true,
    alibi: true,
  },
  { seed: 18, tgtLen: 70, srcLen: 600, embedDim: 8, numHeads: 2, positionOffset: 500, slidingWindow: 37 },
];

describe.each([1, 2])('decoder arguments against the reference, %i thread(s)', (threads) => {
  test.each(CASES.map((o) => [caseName(o), o]))('%s', (_, o) => {
    const attn = engines[threads];
    for (const needWeights of [true, false]) {
      const args = mhaArgs({ ...o, needWeights });
      const dims = mhaDims(args);
      const want = ref.multiHeadAttention(args);
      checkResult(attn.multiHeadAttention(args), want, dims, `${caseName(o)} needWeights=${needWeights}`);
      const { layer, inputs } = split(args);
      const prepared = attn.createMultiHeadAttention(layer);
      checkResult(prepared.forward(inputs), want, dims, `layer ${caseName(o)} needWeights=${needWeights}`);
      prepared.dispose();
    }
  });
});

describe('properties', () => {
  test('1 and 2 threads give bit-identical results', () => {
    for (const o of [CASES[16], { ...CASES[3], tgtLen: 96, embedDim: 64 }, CASES[17]]) {
      for (const needWeights of [true, false]) {
        const args = mhaArgs({ ...o, needWeights });
        const one = engines[1].multiHeadAttention(args),
          two = engines[2].multiHeadAttention(args);
        bitsEqual(one.output, two.output, `${caseName(o)} output`);
        bitsEqual(one.weights, two.weights, `${caseName(o)} weights`);
      }
    }
  });

  test('numKvHeads = numHeads (and headDim = embedDim / numHeads) equals v1 attention bit for bit', () => {
    const attn = engines[1];
    for (const needWeights of [true, false]) {
      const v1 = mhaArgs({
        seed: 30,
        batch: 2,
        tgtLen: 40,
        embedDim: 32,
        numHeads: 4,
        separate: true,
        bias: true,
        outBias: true,
        isCausal: true,
        needWeights,
      });
      const want = attn.multiHeadAttention(v1);
      for (const extra of [{ numKvHeads: 4 }, { headDim: 8 }, { numKvHeads: 4, headDim: 8 }]) {
        const got = attn.multiHeadAttention({ ...v1, ...extra });
        bitsEqual(got.output, want.output, `${JSON.stringify(extra)} output`);
        bitsEqual(got.weights, want.weights, `${JSON.stringify(extra)} weights`);
      }
    }
  });

  test('multi-query equals grouped-query attention with repeated K/V weights', () => {
    const attn = engines[1];
    const E = 16,
      H = 4,
      hd = 4;
    const mqa = mhaArgs({
      seed: 31,
      tgtLen: 21,
      embedDim: E,
      numHeads: H,
      numKvHeads: 1,
      separateBias: true,
      isCausal: true,
      rope: true,
    });
    const repeat = (t, times) => {
      const out = new Float32Array(t.length * times);
      for (let r = 0; r < times; r++) out.set(t, r * t.length);
      return out;
    };
    for (const kv of [2, 4]) {
      const gqa = {
        ...mqa,
        numKvHeads: kv,
        kProjWeight: repeat(mqa.kProjWeight, kv),
        vProjWeight: repeat(mqa.vProjWeight, kv),
        kProjBias: repeat(mqa.kProjBias, kv),
        vProjBias: repeat(mqa.vProjBias, kv),
      };
      expect(gqa.kProjWeight.length).toBe(kv * hd * E);
      const a = attn.multiHeadAttention(mqa),
        b = attn.multiHeadAttention(gqa);
      ref.expectClose(b.output, a.output, `numKvHeads ${kv} output`);
      ref.expectClose(b.weights, a.weights, `numKvHeads ${kv} weights`);
    }
  });

  test('a window at least as long as the sequence equals no window', () => {
    const attn = engines[1];
    for (const needWeights of [true, false]) {
      const base = mhaArgs({
        seed: 32,
        tgtLen: 45,
        embedDim: 16,
        numHeads: 2,
        isCausal: true,
        alibi: true,
        needWeights,
      });
      const want = attn.multiHeadAttention(base);
      for (const w of [45, 46, 1000]) {
        const got = attn.multiHeadAttention({ ...base, slidingWindow: w });
        ref.expectClose(got.output, want.output, `window ${w} output`);
        if (needWeights) ref.expectClose(got.weights, want.weights, `window ${w} weights`);
      }
    }
  });

  test('a window of 1 with causality attends to the token itself only', () => {
    const args = mhaArgs({ seed: 33, tgtLen: 10, embedDim: 8, numHeads: 2, slidingWindow: 1, isCausal: true });
    const { weights } = engines[1].multiHeadAttention(args);
    for (let i = 0; i < 10; i++) for (let j = 0; j < 10; j++) expect(weights[i * 10 + j]).toBe(i === j ? 1 : 0);
  });

  test('the paper ALiBi slopes (reference) for 8 and 6 heads', () => {
    expect(ref.alibiSlopes(8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((k) => 2 ** -k));
    expect(ref.alibiSlopes(6)).toEqual([2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]);
  });
});

describe('errors', () => {
  const base = mhaArgs({ seed: 50, tgtLen: 4, embedDim: 8, numHeads: 4, numKvHeads: 2 });
  const cases = [
    [{ numKvHeads: 3 }, RangeError, /numKvHeads must be a divisor of numHeads = 4, got 3/],
    [{ numKvHeads: 0 }, RangeError, /numKvHeads/],
    [{ numKvHeads: '2' }, TypeError, /numKvHeads/],
    [{ headDim: 2.5 }, RangeError, /headDim/],
    [
      { kProjWeight: new Float32Array(3) },
      RangeError,
      /kProjWeight must be of length numKvHeads·headDim·kdim = 2·2·8 = 32, got length 3/,
    ],
    [{ outProjWeight: new Float32Array(3) }, RangeError, /outProjWeight/],
    [{ qProjBias: new Float32Array(3) }, RangeError, /qProjBias must be of length numHeads·headDim/],
    [{ kProjBias: new Float32Array(8) }, RangeError, /kProjBias/],
    [{ qProjBias: new Float32Array(8), inProjBias: new Float32Array(16) }, TypeError, /either inProjBias/],
    [
      { qProjWeight: undefined, kProjWeight: undefined, vProjWeight: undefined, inProjWeight: new Float32Array(192) },
      TypeError,
      /qProjWeight/,
    ],
    [{ rope: { dim: 3 } }, RangeError, /rope.dim must be an even integer ≤ headDim = 2, got 3/],
    [{ rope: { dim: 4 } }, RangeError, /rope.dim/],
    [
      {
        rope: true,
        headDim: 3,
        qProjWeight: new Float32Array(96),
        kProjWeight: new Float32Array(48),
        vProjWeight: new Float32Array(48),
        outProjWeight: new Float32Array(96),
      },
      RangeError,
      /rope must be an object with an even dim/,
    ],
    [{ rope: { base: -1 } }, RangeError, /rope.base/],
    [{ rope: { interleaved: 1 } }, TypeError, /rope.interleaved/],
    [{ rope: { theta: 1 } }, TypeError, /unknown rope option theta/],
    [{ rope: 'yes' }, TypeError, /rope/],
    [{ alibi: new Float32Array(3) }, RangeError, /alibi must be of length numHeads = 4/],
    [{ alibi: 1 }, TypeError, /alibi/],
    [{ slidingWindow: 0 }, RangeError, /slidingWindow must be a positive integer, got 0/],
    [{ slidingWindow: true }, TypeError, /slidingWindow/],
    [{ positionOffset: -1 }, RangeError, /positionOffset/],
    [{ positionOffset: 2.5 }, RangeError, /positionOffset/],
    [{ positionOffset: 2 ** 31 }, RangeError, /positionOffset/],
    [{ positionOffset: null }, TypeError, /positionOffset/],
  ];
  test.each(cases.map(([extra, Type, message]) => [JSON.stringify(extra), extra, Type, message]))(
    '%s',
    (_, extra, Type, message) => {
      const attn = engines[1];
      const heap = attn.memoryStats().heapInUse;
      const args = { ...base, ...extra };
      expect(() => attn.multiHeadAttention(args)).toThrow(Type);
      expect(() => attn.multiHeadAttention(args)).toThrow(message);
      expect(attn.memoryStats().heapInUse).toBe(heap);
      expect(attn.multiHeadAttention(base).output.length).toBe(32);
    },
  );

  test("a prepared forward repeating the layer's sizes must agree with them", () => {
    const attn = engines[1];
    const layer = attn.createMultiHeadAttention({ ...base, query: undefined, slidingWindow: 2 });
    expect(() => layer.forward({ ...base, numKvHeads: 4 })).toThrow(RangeError);
    expect(() => layer.forward({ ...base, slidingWindow: 3 })).toThrow(RangeError);
    expect(layer.forward({ ...base, slidingWindow: 2 }).output.length).toBe(32);
    layer.dispose();
  });
});

describe('hostile arguments', () => {
  test('rope options are read once each', () => {
    const attn = engines[1];
    const args = mhaArgs({ seed: 60, tgtLen: 5, embedDim: 16, numHeads: 2, isCausal: true });
    let reads = 0;
    const rope = {
      get dim() {
        reads++;
        return reads === 1 ? 4 : 3; // a second read would see an odd dim
      },
    };
    const got = attn.multiHeadAttention({ ...args, rope });
    expect(reads).toBe(1);
    ref.expectClose(got.output, ref.multiHeadAttention({ ...args, rope: { dim: 4 } }).output, 'rope read once');
  });

  test('a Proxy of a cache, or an object posing as one, is not a cache', () => {
    const attn = engines[1];
    const args = mhaArgs({ seed: 61, tgtLen: 2, embedDim: 8, numHeads: 2 });
    const { layer, inputs } = split(args);
    const l = attn.createMultiHeadAttention(layer);
    const cache = l.createKvCache({ maxLength: 4 });
    for (const fake of [new Proxy(cache, {}), Object.create(cache), { length: 0, maxLength: 4, batch: 1 }]) {
      expect(() => l.forward({ ...inputs, cache: fake })).toThrow(TypeError);
    }
    expect(cache.length).toBe(0);
    l.forward({ ...inputs, cache });
    expect(cache.length).toBe(2);
    cache.dispose();
    l.dispose();
  });
});

test('the scalar build (engines without WebAssembly SIMD) computes the decoder arguments and caches too', async () => {
  const { createAttention } = require('wasm-attention');
  const scalar = await createAttention({ simd: false, threads: 2 });
  expect(scalar.info.simd).toBe(false);
  for (const o of [CASES[3], CASES[11], CASES[15], CASES[16]]) {
    for (const needWeights of [true, false]) {
      const args = mhaArgs({ ...o, needWeights });
      checkResult(
        scalar.multiHeadAttention(args),
        ref.multiHeadAttention(args),
        mhaDims(args),
        `scalar ${caseName(o)}`,
      );
    }
  }
  const full = mhaArgs({
    seed: 62,
    tgtLen: 9,
    embedDim: 16,
    numHeads: 4,
    numKvHeads: 2,
    rope: true,
    alibi: true,
    slidingWindow: 4,
    isCausal: true,
  });
  const { layer } = split(full);
  const l = scalar.createMultiHeadAttention(layer);
  const cache = l.createKvCache({ maxLength: 9 });
  const first = l.forward({ query: full.query.subarray(0, 16 * 5), cache, isCausal: true }).output;
  const rest = l.forward({ query: full.query.subarray(16 * 5), cache, isCausal: true, needWeights: false }).output;
  const got = new Float32Array(9 * 16);
  got.set(first);
  got.set(rest, first.length);
  ref.expectClose(got, ref.multiHeadAttention(full).output, 'scalar cache');
  scalar.dispose();
});
