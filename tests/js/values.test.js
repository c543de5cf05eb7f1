'use strict';
// The package's numbers against the float64 reference (tests/js/reference.js), at sizes around
// the SIMD width and the kernel tiles, with every argument of the contract and their combinations.
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { SIZES, saArgs, mhaArgs, caseName, saDims, mhaDims, checkResult, expectZeros } = require('./cases');

let attn;
beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
});

function runSA(o) {
  const args = saArgs(o);
  const label = `selfAttention ${caseName(o)}`;
  checkResult(attn.selfAttention(args), ref.selfAttention(args), saDims(args), label);
}

function runMHA(o) {
  const args = mhaArgs(o);
  const label = `multiHeadAttention ${caseName(o)}`;
  checkResult(attn.multiHeadAttention(args), ref.multiHeadAttention(args), mhaDims(args), label);
}

const pick = (i, k) => SIZES[(i + k) % SIZES.length];
const HEADS = [1, 2, 3, 4, 8];

// ------------------------------------------------------------------ info

test('attn.info reports version, simd and threads', () => {
  expect(typeof attn.info.version).toBe('string');
  expect(attn.info.version).toMatch(/^\d+\.\d+\.\d+/);
  expect(attn.info.simd).toBe(true);
  expect(attn.info.threads).toBe(1);
});

// ------------------------------------------------------------------ selfAttention

describe('selfAttention sizes', () => {
  const cases = [];
  SIZES.forEach((s, i) => {
    const base = { batch: 1 + (i % 3), bias: i % 2 === 0 };
    cases.push({ seed: 100 + i, ...base, seqLen: s, dModel: pick(i, 4), dK: pick(i, 7), dV: pick(i, 2) });
    cases.push({ seed: 200 + i, ...base, seqLen: pick(i, 5), dModel: s, dK: pick(i, 3), dV: pick(i, 9) });
    cases.push({ seed: 300 + i, ...base, seqLen: pick(i, 8), dModel: pick(i, 1), dK: s, dV: pick(i, 6) });
    cases.push({ seed: 400 + i, ...base, seqLen: pick(i, 10), dModel: pick(i, 11), dK: pick(i, 4), dV: s });
  });
  test.each(cases.map((o) => [caseName(o), o]))('%s', (_, o) => runSA(o));
});

describe('selfAttention arguments', () => {
  const shapes = [
    { seqLen: 5, dModel: 8, dK: 4, dV: 7 },
    { seqLen: 17, dModel: 9, dK: 16, dV: 3, batch: 2 },
    { seqLen: 33, dModel: 31, dK: 8, dV: 8, batch: 3 },
  ];
  const variants = [
    { bias: true },
    { batch: 1 },
    { isCausal: true },
    { isCausal: false },
    { mask: 'bool' },
    { mask: 'float' },
    { scale: 0.3 },
    { scale: 2.5 },
    { needWeights: false },
    { needWeights: true },
    { bias: true, isCausal: true, mask: 'bool' },
    { bias: true, isCausal: true, mask: 'float', scale: 0.7 },
    { isCausal: true, mask: 'bool', needWeights: false },
    { maskedRows: [0] },
    { mask: 'float', maskedRows: [1, 2] },
    { mask: 'bool', isCausal: true, maskedRows: [0, 3], bias: true },
    { mask: 'float', maskedRows: [2], needWeights: false, bias: true },
  ];
  const cases = [];
  shapes.forEach((shape, si) =>
    variants.forEach((v, vi) => cases.push({ seed: 1000 + si * 100 + vi, ...shape, ...v })),
  );
  test.each(cases.map((o) => [caseName(o), o]))('%s', (_, o) => runSA(o));

  test('fully masked rows give zero weights and a zero output row', () => {
    const o = { seed: 7, seqLen: 6, dModel: 8, dK: 4, dV: 5, batch: 2, bias: true, mask: 'bool', maskedRows: [0, 4] };
    const args = saArgs(o);
    const got = attn.selfAttention(args);
    for (let b = 0; b < 2; b++) {
      for (const r of [0, 4]) {
        expectZeros(got.weights.subarray((b * 6 + r) * 6, (b * 6 + r + 1) * 6), `weights[${b},${r},:]`);
        expectZeros(got.output.subarray((b * 6 + r) * 5, (b * 6 + r + 1) * 5), `output[${b},${r},:]`);
      }
    }
    runSA(o);
  });
});

// ------------------------------------------------------------------ multiHeadAttention

describe('multiHeadAttention sizes', () => {
  const cases = [];
  SIZES.forEach((s, i) => {
    const numHeads = HEADS[i % HEADS.length];
    const common = { batch: 1 + (i % 3), bias: i % 2 === 0, outBias: i % 3 !== 1 };
    // self-attention, seqLen sweep
    cases.push({ seed: 2000 + i, ...common, tgtLen: s, embedDim: pick(i, 3) * numHeads, numHeads });
    // cross-attention, tgtLen ≠ srcLen sweep
    cases.push({ seed: 2100 + i, ...common, tgtLen: pick(i, 6), srcLen: s, embedDim: pick(i, 2) * numHeads, numHeads });
    // headDim sweep
    cases.push({ seed: 2200 + i, ...common, tgtLen: pick(i, 9), embedDim: s * numHeads, numHeads });
    // kdim / vdim sweep (separate projections)
    cases.push({
      seed: 2300 + i,
      ...common,
      tgtLen: pick(i, 1),
      srcLen: pick(i, 4),
      embedDim: pick(i, 7) * numHeads,
      numHeads,
      kdim: s,
      vdim: pick(i, 5),
    });
  });
  [1, 2, 3, 4, 5, 6, 8, 16].forEach((numHeads, i) => {
    cases.push({
      seed: 2400 + i,
      batch: 2,
      bias: true,
      outBias: true,
      tgtLen: 9,
      srcLen: 7,
      embedDim: 8 * numHeads,
      numHeads,
    });
  });
  test.each(cases.map((o) => [caseName(o), o]))('%s', (_, o) => runMHA(o));
});

describe('multiHeadAttention arguments', () => {
  const shapes = [
    { tgtLen: 5, embedDim: 8, numHeads: 2 },
    { tgtLen: 7, srcLen: 9, embedDim: 12, numHeads: 3, batch: 2 },
    { tgtLen: 16, srcLen: 5, embedDim: 20, numHeads: 4, batch: 3, kdim: 7, vdim: 17 },
    { tgtLen: 3, srcLen: 17, embedDim: 33, numHeads: 1, batch: 2 },
  ];
  const variants = [
    { bias: true },
    { outBias: true },
    { bias: true, outBias: true },
    { separate: true, bias: true },
    { cross: true },
    { passLens: true },
    { batch: 1 },
    { attnMask: 'bool2d' },
    { attnMask: 'float2d' },
    { attnMask: 'bool3d' },
    { attnMask: 'float3d' },
    { keyPaddingMask: 'bool' },
    { keyPaddingMask: 'float' },
    { isCausal: true },
    { isCausal: false },
    { scale: 0.3 },
    { scale: 2 },
    { needWeights: false },
    { needWeights: true, averageAttnWeights: true },
    { averageAttnWeights: false },
    { needWeights: false, averageAttnWeights: false },
    // combinations
    { attnMask: 'bool3d', isCausal: true, keyPaddingMask: 'bool', bias: true, outBias: true },
    { attnMask: 'float2d', isCausal: true, keyPaddingMask: 'float', outBias: true },
    { attnMask: 'bool2d', keyPaddingMask: 'float', averageAttnWeights: false },
    {
      attnMask: 'float3d',
      keyPaddingMask: 'bool',
      isCausal: true,
      averageAttnWeights: false,
      separate: true,
      scale: 0.5,
    },
    { attnMask: 'float2d', keyPaddingMask: 'bool', isCausal: true, needWeights: false, bias: true, outBias: true },
    // fully masked rows: by a 3-D mask, a 2-D mask, whole padded batch elements
    {
      maskedRows: [
        [0, 0, 0],
        [0, 0, 2],
      ],
      outBias: true,
    },
    { attnMask: 'float3d', maskedRows: [[0, 0, 1]], bias: true, outBias: true, averageAttnWeights: false },
    { attnMask: 'float2d', maskedRows: [[0, 0, 1]], outBias: true },
    { paddedBatches: [0], bias: true, outBias: true },
    { paddedBatches: [0], keyPaddingMask: 'float', isCausal: true, averageAttnWeights: false },
    { maskedRows: [[0, 0, 2]], keyPaddingMask: 'bool', isCausal: true, needWeights: false, outBias: true },
  ];
  const cases = [];
  shapes.forEach((shape, si) =>
    variants.forEach((v, vi) => cases.push({ seed: 3000 + si * 100 + vi, ...shape, ...v })),
  );
  test.each(cases.map((o) => [caseName(o), o]))('%s', (_, o) => runMHA(o));

  test('causal with the first key padded: row 0 fully masked, output = outProjBias there', () => {
    const o = {
      seed: 11,
      batch: 2,
      tgtLen: 5,
      srcLen: 6,
      embedDim: 8,
      numHeads: 2,
      bias: true,
      outBias: true,
      isCausal: true,
    };
    const args = mhaArgs(o);
    args.keyPaddingMask = new Uint8Array(2 * 6);
    args.keyPaddingMask[0] = 1; // batch 0, key 0: query 0 sees only key 0 under the causal mask
    const got = attn.multiHeadAttention(args);
    expectZeros(got.weights.subarray(0, 6), 'weights[0,0,:]');
    ref.expectClose(got.output.subarray(0, 8), args.outProjBias, 'output[0,0,:] vs outProjBias');
    checkResult(got, ref.multiHeadAttention(args), mhaDims(args), `causal+padding ${caseName(o)}`);
  });

  test('fully masked rows without outProjBias give a zero output row', () => {
    const o = { seed: 12, tgtLen: 4, srcLen: 4, embedDim: 8, numHeads: 2, bias: true };
    const args = mhaArgs(o);
    args.keyPaddingMask = new Uint8Array([1, 1, 1, 1]);
    const got = attn.multiHeadAttention(args);
    expectZeros(got.output, 'output');
    expectZeros(got.weights, 'weights');
  });

  test('key defaults to query and value to key', () => {
    const o = { seed: 13, batch: 2, tgtLen: 6, embedDim: 12, numHeads: 3, bias: true, outBias: true };
    const args = mhaArgs(o);
    const explicit = attn.multiHeadAttention({ ...args, key: args.query, value: args.query });
    const implicit = attn.multiHeadAttention(args);
    const valueDefault = attn.multiHeadAttention({ ...args, key: args.query });
    const want = ref.multiHeadAttention(args);
    for (const [name, r] of [
      ['explicit', explicit],
      ['implicit', implicit],
      ['value default', valueDefault],
    ]) {
      checkResult(r, want, mhaDims(args), `key/value defaults (${name})`);
    }
    const cross = mhaArgs({ seed: 14, batch: 2, tgtLen: 4, srcLen: 7, embedDim: 12, numHeads: 3, bias: true });
    const noValue = { ...cross };
    delete noValue.value;
    checkResult(
      attn.multiHeadAttention(noValue),
      ref.multiHeadAttention({ ...cross, value: cross.key }),
      mhaDims(cross),
      'value defaults to key',
    );
  });
});

// ------------------------------------------------------------------ realistic sizes

describe('realistic sizes', () => {
  test.each([
    [
      '我愛AI: 4 tokens × 512, 8 heads, biases',
      { seed: 50, tgtLen: 4, embedDim: 512, numHeads: 8, bias: true, outBias: true },
    ],
    [
      '64 tokens × 512, 8 heads, causal + padding',
      {
        seed: 51,
        tgtLen: 64,
        embedDim: 512,
        numHeads: 8,
        bias: true,
        outBias: true,
        isCausal: true,
        keyPaddingMask: 'bool',
      },
    ],
    [
      '2 × 64 tokens × 512, 8 heads, per-head weights',
      {
        seed: 52,
        batch: 2,
        tgtLen: 64,
        embedDim: 512,
        numHeads: 8,
        bias: true,
        outBias: true,
        averageAttnWeights: false,
      },
    ],
    [
      'cross 4 → 64 tokens, 512, 8 heads',
      { seed: 53, tgtLen: 4, srcLen: 64, embedDim: 512, numHeads: 8, outBias: true },
    ],
    [
      'long: 130 → 257 tokens, 64, 2 heads, masks',
      {
        seed: 56,
        tgtLen: 130,
        srcLen: 257,
        embedDim: 64,
        numHeads: 2,
        bias: true,
        outBias: true,
        attnMask: 'float2d',
        keyPaddingMask: 'bool',
        isCausal: true,
      },
    ],
    [
      'long: 2 × 300 tokens, 96, 3 heads, per-head weights',
      {
        seed: 57,
        batch: 2,
        tgtLen: 300,
        embedDim: 96,
        numHeads: 3,
        outBias: true,
        averageAttnWeights: false,
      },
    ],
  ])('multiHeadAttention %s', (_, o) => runMHA(o));

  test.each([
    ['我愛AI: 4 tokens × 512 → 64', { seed: 54, seqLen: 4, dModel: 512, dK: 64, dV: 64, bias: true }],
    ['64 tokens × 512 → 64, causal', { seed: 55, seqLen: 64, dModel: 512, dK: 64, dV: 64, isCausal: true }],
    [
      'long: 257 tokens × 32 → 16 / 24, bool mask',
      { seed: 58, seqLen: 257, dModel: 32, dK: 16, dV: 24, mask: 'bool', bias: true },
    ],
  ])('selfAttention %s', (_, o) => runSA(o));
});

// ------------------------------------------------------------------ random combinations

describe('random combinations of every argument (fixed seeds)', () => {
  const choose = (rng, xs) => xs[Math.floor(rng() * xs.length)];
  const maybe = (rng, p = 0.5) => rng() < p;

  const mhaCases = [];
  for (let n = 0; n < 120; n++) {
    const rng = ref.mulberry32(5000 + n);
    const numHeads = choose(rng, [1, 2, 3, 4, 8]);
    const o = {
      seed: 6000 + n,
      batch: choose(rng, [1, 2, 3]),
      tgtLen: choose(rng, SIZES),
      embedDim: choose(rng, [1, 3, 4, 5, 8, 9, 16, 17]) * numHeads,
      numHeads,
    };
    if (maybe(rng)) o.srcLen = choose(rng, SIZES);
    if (maybe(rng, 0.3)) o.kdim = choose(rng, SIZES);
    if (maybe(rng, 0.3)) o.vdim = choose(rng, SIZES);
    if (maybe(rng, 0.2)) o.separate = true;
    if (maybe(rng)) o.bias = true;
    if (maybe(rng)) o.outBias = true;
    if (maybe(rng, 0.6)) o.attnMask = choose(rng, ['bool2d', 'float2d', 'bool3d', 'float3d']);
    if (maybe(rng)) o.keyPaddingMask = choose(rng, ['bool', 'float']);
    if (maybe(rng, 0.4)) o.isCausal = true;
    if (maybe(rng, 0.2)) o.scale = Math.round(rng() * 300) / 100;
    if (maybe(rng, 0.2)) o.needWeights = false;
    if (maybe(rng, 0.3)) o.averageAttnWeights = false;
    if (maybe(rng, 0.1)) o.passLens = true;
    if (maybe(rng, 0.15)) o.paddedBatches = [0];
    mhaCases.push(o);
  }
  test.each(mhaCases.map((o) => [caseName(o), o]))('multiHeadAttention %s', (_, o) => runMHA(o));

  const saCases = [];
  for (let n = 0; n < 60; n++) {
    const rng = ref.mulberry32(7000 + n);
    const o = {
      seed: 8000 + n,
      batch: choose(rng, [1, 2, 3]),
      seqLen: choose(rng, SIZES),
      dModel: choose(rng, SIZES),
      dK: choose(rng, SIZES),
      dV: choose(rng, SIZES),
    };
    if (maybe(rng)) o.bias = true;
    if (maybe(rng, 0.6)) o.mask = choose(rng, ['bool', 'float']);
    if (maybe(rng, 0.4)) o.isCausal = true;
    if (maybe(rng, 0.2)) o.scale = Math.round(rng() * 300) / 100;
    if (maybe(rng, 0.2)) o.needWeights = false;
    if (maybe(rng, 0.15)) o.maskedRows = [0];
    saCases.push(o);
  }
  test.each(saCases.map((o) => [caseName(o), o]))('selfAttention %s', (_, o) => runSA(o));
});

// ------------------------------------------------------------------ input and output types

describe('input and output types', () => {
  const toArray = (a) => (a && a.constructor === Float32Array ? Array.from(a) : a);
  const toF64 = (a) => (a && a.constructor === Float32Array ? Float64Array.from(a) : a);
  // tensors only: masks stay Uint8Array / Float32Array as the contract says
  const MASKS = ['attnMask', 'keyPaddingMask'];
  const convert = (args, f) =>
    Object.fromEntries(Object.entries(args).map(([k, v]) => [k, MASKS.includes(k) ? v : f(v)]));
  const sameBits = (a, b, label) => {
    expect([label, a.length]).toEqual([label, b.length]);
    for (let i = 0; i < a.length; i++) {
      if (!Object.is(a[i], b[i])) throw new Error(`${label}: index ${i} got ${a[i]}, expected ${b[i]} (bit-identical)`);
    }
  };

  test.each([
    ['number[]', toArray],
    ['Float64Array', toF64],
  ])('selfAttention accepts %s tensors (same result as Float32Array)', (kind, f) => {
    const args = saArgs({ seed: 60, batch: 2, seqLen: 9, dModel: 8, dK: 5, dV: 4, bias: true, mask: 'float' });
    const base = attn.selfAttention(args);
    const got = attn.selfAttention(convert(args, f));
    sameBits(got.output, base.output, `${kind} output`);
    sameBits(got.weights, base.weights, `${kind} weights`);
    expect(got.output).toBeInstanceOf(Float32Array);
  });

  test.each([
    ['number[]', toArray],
    ['Float64Array', toF64],
  ])('multiHeadAttention accepts %s tensors (same result as Float32Array)', (kind, f) => {
    const args = mhaArgs({
      seed: 61,
      batch: 2,
      tgtLen: 5,
      srcLen: 6,
      embedDim: 12,
      numHeads: 3,
      kdim: 5,
      vdim: 7,
      bias: true,
      outBias: true,
      keyPaddingMask: 'bool',
      attnMask: 'float3d',
    });
    const base = attn.multiHeadAttention(args);
    const got = attn.multiHeadAttention(convert(args, f));
    sameBits(got.output, base.output, `${kind} output`);
    sameBits(got.weights, base.weights, `${kind} weights`);
    expect(got.weights).toBeInstanceOf(Float32Array);
  });

  test('number[] values that are not float32 are converted (rounded) and computed', () => {
    const rng = ref.mulberry32(62);
    const n = (k) => Array.from({ length: k }, () => Math.round((rng() * 2 - 1) * 1000) / 1000);
    const args = {
      x: n(3 * 6),
      seqLen: 3,
      dModel: 6,
      wq: n(4 * 6),
      wk: n(4 * 6),
      wv: n(2 * 6),
      bq: n(4),
      bk: n(4),
      bv: n(2),
    };
    const f32 = Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, Array.isArray(v) ? new Float32Array(v) : v]),
    );
    checkResult(attn.selfAttention(args), ref.selfAttention(f32), saDims(args), 'number[] with 0.001 steps');
  });

  test('outputs are fresh Float32Arrays, not views of WebAssembly memory', () => {
    const args = mhaArgs({ seed: 63, tgtLen: 4, embedDim: 8, numHeads: 2 });
    const r1 = attn.multiHeadAttention(args);
    const r2 = attn.multiHeadAttention(args);
    for (const [name, a] of [
      ['output', r1.output],
      ['weights', r1.weights],
    ]) {
      expect([name, a.byteOffset, a.buffer.byteLength]).toEqual([name, 0, a.length * 4]);
    }
    expect(r1.output.buffer).not.toBe(r2.output.buffer);
    expect(r1.output.buffer).not.toBe(r1.weights.buffer);
    const before = Float32Array.from(r1.output);
    attn.multiHeadAttention(mhaArgs({ seed: 64, tgtLen: 40, embedDim: 64, numHeads: 4 })); // may grow memory
    expect(Array.from(r1.output)).toEqual(Array.from(before));
  });

  test('needWeights:false gives weights null; averageAttnWeights:false gives [batch, numHeads, L, S]', () => {
    const sa = attn.selfAttention(saArgs({ seed: 65, seqLen: 4, dModel: 4, dK: 4, needWeights: false }));
    expect(sa.weights).toBeNull();
    expect(sa.output).toHaveLength(16);
    const base = { seed: 66, batch: 2, tgtLen: 3, srcLen: 5, embedDim: 12, numHeads: 3 };
    expect(attn.multiHeadAttention(mhaArgs({ ...base, needWeights: false })).weights).toBeNull();
    expect(
      attn.multiHeadAttention(mhaArgs({ ...base, needWeights: false, averageAttnWeights: false })).weights,
    ).toBeNull();
    const per = attn.multiHeadAttention(mhaArgs({ ...base, averageAttnWeights: false }));
    expect(per.weights).toHaveLength(2 * 3 * 3 * 5);
    expect(per.output).toHaveLength(2 * 3 * 12);
    const avg = attn.multiHeadAttention(mhaArgs(base));
    expect(avg.weights).toHaveLength(2 * 3 * 5);
    // the averaged weights are the mean of the per-head ones
    const mean = new Float64Array(2 * 3 * 5);
    for (let b = 0; b < 2; b++)
      for (let h = 0; h < 3; h++)
        for (let t = 0; t < 15; t++) {
          mean[b * 15 + t] += per.weights[(b * 3 + h) * 15 + t] / 3;
        }
    ref.expectClose(avg.weights, mean, 'averaged weights vs mean of per-head weights', [2, 3, 5]);
  });
});

// ------------------------------------------------------------------ NaN and infinities

describe('non-finite inputs', () => {
  test('NaN in x / query does not crash and propagates', () => {
    const sa = saArgs({ seed: 70, seqLen: 6, dModel: 8, dK: 4, dV: 4 });
    sa.x[9] = NaN;
    const r1 = attn.selfAttention(sa);
    expect(r1.output).toBeInstanceOf(Float32Array);
    expect(r1.output).toHaveLength(24);
    expect(Array.from(r1.output).some(Number.isNaN)).toBe(true);

    const mha = mhaArgs({ seed: 71, batch: 2, tgtLen: 5, embedDim: 8, numHeads: 2, bias: true, outBias: true });
    mha.query[3] = NaN;
    const r2 = attn.multiHeadAttention(mha);
    expect(r2.output).toHaveLength(80);
    expect(Array.from(r2.output).some(Number.isNaN)).toBe(true);
    // the other batch element never sees the NaN
    const clean = { ...mha, query: mha.query.slice(40), batch: 1 };
    const want = ref.multiHeadAttention(clean);
    ref.expectClose(r2.output.subarray(40), want.output, 'batch 1 next to a NaN in batch 0', [5, 8]);
  });

  test('NaN and ±Infinity in weights and masks do not crash', () => {
    const mha = mhaArgs({ seed: 72, tgtLen: 4, srcLen: 5, embedDim: 8, numHeads: 2, attnMask: 'float2d', bias: true });
    mha.attnMask[3] = NaN;
    mha.inProjWeight[5] = Infinity;
    mha.inProjBias[20] = -Infinity;
    const r = attn.multiHeadAttention(mha);
    expect(r.output).toHaveLength(32);
    expect(r.weights).toHaveLength(20);
    const sa = saArgs({ seed: 73, seqLen: 4, dModel: 4, dK: 4 });
    sa.wq[0] = Infinity;
    sa.x[1] = -Infinity;
    expect(attn.selfAttention(sa).output).toHaveLength(16);
    runMHA({ seed: 74, tgtLen: 5, embedDim: 8, numHeads: 2, bias: true }); // still correct afterwards
  });
});

// ------------------------------------------------------------------ threads

describe('threads', () => {
  let attnAuto;
  beforeAll(async () => {
    attnAuto = await createAttention({ threads: 'auto' });
  });

  test("threads:'auto' reports a positive thread count", () => {
    expect(Number.isInteger(attnAuto.info.threads)).toBe(true);
    expect(attnAuto.info.threads).toBeGreaterThanOrEqual(1);
  });

  const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const sameBytes = (a, b, label) => {
    if (!bytes(a).equals(bytes(b))) {
      const i = a.findIndex((v, k) => !Object.is(v, b[k]));
      throw new Error(`${label}: threads 1 vs auto differ first at index ${i}: ${b[i]} vs ${a[i]}`);
    }
  };

  test.each([
    ['mha 4×512×8', { seed: 80, tgtLen: 4, embedDim: 512, numHeads: 8, bias: true, outBias: true }],
    [
      'mha 2×64×512×8 causal+padding',
      {
        seed: 81,
        batch: 2,
        tgtLen: 64,
        embedDim: 512,
        numHeads: 8,
        bias: true,
        outBias: true,
        isCausal: true,
        keyPaddingMask: 'bool',
        averageAttnWeights: false,
      },
    ],
    [
      'mha 3×33→17, 5 heads, kdim/vdim',
      { seed: 82, batch: 3, tgtLen: 33, srcLen: 17, embedDim: 40, numHeads: 5, kdim: 9, vdim: 31 },
    ],
    [
      'mha 96×256×4 no weights',
      { seed: 83, batch: 2, tgtLen: 96, embedDim: 256, numHeads: 4, needWeights: false, outBias: true },
    ],
  ])('multiHeadAttention %s: threads 1 and auto bit-identical', (label, o) => {
    const args = mhaArgs(o);
    const a = attn.multiHeadAttention(args);
    const b = attnAuto.multiHeadAttention(args);
    sameBytes(b.output, a.output, `${label} output`);
    if (a.weights) sameBytes(b.weights, a.weights, `${label} weights`);
    else expect(b.weights).toBeNull();
    checkResult(b, ref.multiHeadAttention(args), mhaDims(args), `${label} (threads auto) vs reference`);
  });

  test.each([
    [
      'sa 3×64×512→64 causal',
      { seed: 84, batch: 3, seqLen: 64, dModel: 512, dK: 64, dV: 64, isCausal: true, bias: true },
    ],
    ['sa 2×33×17→9/15', { seed: 85, batch: 2, seqLen: 33, dModel: 17, dK: 9, dV: 15, mask: 'float' }],
  ])('selfAttention %s: threads 1 and auto bit-identical', (label, o) => {
    const args = saArgs(o);
    const a = attn.selfAttention(args);
    const b = attnAuto.selfAttention(args);
    sameBytes(b.output, a.output, `${label} output`);
    sameBytes(b.weights, a.weights, `${label} weights`);
    checkResult(b, ref.selfAttention(args), saDims(args), `${label} (threads auto) vs reference`);
  });
});
