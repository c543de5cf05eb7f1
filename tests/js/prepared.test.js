'use strict';
// Prepared layers (weights loaded once): forward gives the one-shot functions' results, the layer
// keeps its own copy of the weights, and dispose frees its memory.
const { createEngine } = require('./engines');
const ref = require('./reference');
const { SIZES, saArgs, mhaArgs, caseName, saDims, mhaDims, checkResult } = require('./cases');
const { MHA_V1_LAYER_ARGS, SA_LAYER_ARGS } = require('./contract-args');

let attn;
beforeAll(async () => {
  attn = await createEngine(1);
});

const heap = () => attn.memoryStats().heapInUse;

const pickKeys = (a, keys, include) =>
  Object.fromEntries(Object.entries(a).filter(([k]) => keys.includes(k) === include));
const mhaParams = (a) => pickKeys(a, MHA_V1_LAYER_ARGS, true);
const mhaInputs = (a) => pickKeys(a, MHA_V1_LAYER_ARGS, false);
const saParams = (a) => pickKeys(a, SA_LAYER_ARGS, true);
const saInputs = (a) => pickKeys(a, SA_LAYER_ARGS, false);

/** got ≈ oneShot within the contract tolerance (both are float32 results of the same formula). */
function sameAsOneShot(got, oneShot, dims, label) {
  ref.expectClose(got.output, oneShot.output, `${label} output vs one-shot`, dims.output);
  if (oneShot.weights === null) expect(got.weights).toBeNull();
  else ref.expectClose(got.weights, oneShot.weights, `${label} weights vs one-shot`, dims.weights);
}

const pick = (i, k) => SIZES[(i + k) % SIZES.length];

const MHA_CASES = [];
SIZES.forEach((s, i) => {
  const numHeads = [1, 2, 3, 4, 8][i % 5];
  MHA_CASES.push({
    seed: 500 + i,
    batch: 1 + (i % 3),
    tgtLen: s,
    srcLen: pick(i, 5),
    embedDim: pick(i, 2) * numHeads,
    numHeads,
    bias: i % 2 === 0,
    outBias: i % 3 !== 0,
    cross: i % 4 === 0,
  });
});
MHA_CASES.push(
  {
    seed: 520,
    batch: 2,
    tgtLen: 5,
    srcLen: 7,
    embedDim: 12,
    numHeads: 3,
    kdim: 5,
    vdim: 9,
    bias: true,
    outBias: true,
    attnMask: 'bool3d',
    keyPaddingMask: 'float',
    isCausal: true,
    averageAttnWeights: false,
  },
  {
    seed: 521,
    tgtLen: 9,
    embedDim: 16,
    numHeads: 4,
    separate: true,
    attnMask: 'float2d',
    scale: 0.4,
    needWeights: false,
  },
  {
    seed: 522,
    batch: 3,
    tgtLen: 6,
    embedDim: 8,
    numHeads: 2,
    keyPaddingMask: 'bool',
    paddedBatches: [1],
    outBias: true,
  },
  { seed: 523, tgtLen: 64, embedDim: 512, numHeads: 8, bias: true, outBias: true, isCausal: true },
);

const SA_CASES = [];
SIZES.forEach((s, i) => {
  SA_CASES.push({
    seed: 600 + i,
    batch: 1 + (i % 3),
    seqLen: s,
    dModel: pick(i, 3),
    dK: pick(i, 6),
    dV: pick(i, 9),
    bias: i % 2 === 1,
  });
});
SA_CASES.push(
  { seed: 620, batch: 2, seqLen: 7, dModel: 9, dK: 5, dV: 4, mask: 'float', isCausal: true, scale: 0.8, bias: true },
  { seed: 621, seqLen: 6, dModel: 8, dK: 4, dV: 4, mask: 'bool', maskedRows: [2], needWeights: false },
  { seed: 622, seqLen: 64, dModel: 512, dK: 64, dV: 64, bias: true, isCausal: true },
);

describe('createMultiHeadAttention().forward equals multiHeadAttention', () => {
  test.each(MHA_CASES.map((o) => [caseName(o), o]))('%s', (_, o) => {
    const args = mhaArgs(o);
    const dims = mhaDims(args);
    const oneShot = attn.multiHeadAttention(args);
    const before = heap();
    const layer = attn.createMultiHeadAttention(mhaParams(args));
    const got = layer.forward(mhaInputs(args));
    sameAsOneShot(got, oneShot, dims, caseName(o));
    checkResult(got, ref.multiHeadAttention(args), dims, `layer ${caseName(o)} vs reference`);
    // a second forward on other inputs of another batch size / length, same weights
    const other = mhaArgs({ ...o, seed: o.seed + 1000, batch: 2, tgtLen: 3, srcLen: 4 });
    const merged = { ...args, ...mhaInputs(other) };
    if (merged.attnMask) delete merged.attnMask;
    if (merged.keyPaddingMask) delete merged.keyPaddingMask;
    const got2 = layer.forward(mhaInputs(merged));
    sameAsOneShot(got2, attn.multiHeadAttention(merged), mhaDims(merged), `${caseName(o)} second forward`);
    layer.dispose();
    expect([caseName(o), heap()]).toEqual([caseName(o), before]);
  });
});

describe('createSelfAttention().forward equals selfAttention', () => {
  test.each(SA_CASES.map((o) => [caseName(o), o]))('%s', (_, o) => {
    const args = saArgs(o);
    const dims = saDims(args);
    const oneShot = attn.selfAttention(args);
    const before = heap();
    const layer = attn.createSelfAttention(saParams(args));
    const got = layer.forward(saInputs(args));
    sameAsOneShot(got, oneShot, dims, caseName(o));
    checkResult(got, ref.selfAttention(args), dims, `layer ${caseName(o)} vs reference`);
    const other = saArgs({ ...o, seed: o.seed + 1000, batch: 3, seqLen: 5 });
    const merged = { ...args, ...saInputs(other) };
    delete merged.attnMask;
    delete merged.maskedRows;
    const got2 = layer.forward(saInputs(merged));
    sameAsOneShot(got2, attn.selfAttention(merged), saDims(merged), `${caseName(o)} second forward`);
    layer.dispose();
    expect([caseName(o), heap()]).toEqual([caseName(o), before]);
  });
});

// A one-shot call of 3 or 4 tokens with wide inputs reads its weights where the call copied them
// instead of packing them: it must still give a prepared layer's numbers exactly.
describe('one-shot calls of a few tokens give a prepared layer the same bits', () => {
  const sameBits = (a, b, label) => {
    expect({ label, length: a.length }).toEqual({ label, length: b.length });
    const x = new Uint32Array(a.buffer, a.byteOffset, a.length),
      y = new Uint32Array(b.buffer, b.byteOffset, b.length);
    const first = x.findIndex((v, i) => v !== y[i]);
    expect({ label, firstDifference: first }).toEqual({ label, firstDifference: -1 });
  };
  const random = (rng, n, scale = 0.05) => Float32Array.from({ length: n }, () => (rng() * 2 - 1) * scale);
  test.each([
    ['4 tokens × 512, 8 heads, biases', 4, 4, { embedDim: 512, numHeads: 8 }, {}],
    [
      '3 tokens, kdim 640, vdim 768, masks, per-head weights',
      3,
      4,
      { embedDim: 512, numHeads: 4, kdim: 640, vdim: 768 },
      { averageAttnWeights: false, isCausal: true },
    ],
    [
      '4 tokens, grouped-query with RoPE and ALiBi, no weights',
      4,
      4,
      { embedDim: 768, numHeads: 12, numKvHeads: 4, rope: true, alibi: true },
      { needWeights: false },
    ],
  ])('%s', (_, tgtLen, srcLen, dims, forwardArgs) => {
    const rng = ref.mulberry32(tgtLen * 31 + dims.embedDim);
    const E = dims.embedDim,
      kdim = dims.kdim ?? E,
      vdim = dims.vdim ?? E;
    const kvWidth = ((dims.numKvHeads ?? dims.numHeads) * E) / dims.numHeads;
    const layerArgs = {
      ...dims,
      qProjWeight: random(rng, E * E),
      kProjWeight: random(rng, kvWidth * kdim),
      vProjWeight: random(rng, kvWidth * vdim),
      inProjBias: random(rng, E + 2 * kvWidth),
      outProjWeight: random(rng, E * E),
      outProjBias: random(rng, E),
    };
    const args = {
      query: random(rng, tgtLen * E, 1),
      key: random(rng, srcLen * kdim, 1),
      value: random(rng, srcLen * vdim, 1),
      ...forwardArgs,
    };
    const layer = attn.createMultiHeadAttention(layerArgs);
    const prepared = layer.forward(args);
    layer.dispose();
    const oneShot = attn.multiHeadAttention({ ...layerArgs, ...args });
    sameBits(oneShot.output, prepared.output, 'output');
    if (prepared.weights) sameBits(oneShot.weights, prepared.weights, 'weights');
    else expect(oneShot.weights).toBeNull();
  });

  test('selfAttention of 4 tokens × 512', () => {
    const rng = ref.mulberry32(77);
    const d = 512;
    const args = {
      x: random(rng, 4 * d, 1),
      seqLen: 4,
      dModel: d,
      wq: random(rng, 64 * d),
      wk: random(rng, 64 * d),
      wv: random(rng, 64 * d),
      bq: random(rng, 64),
    };
    const layer = attn.createSelfAttention(args);
    const prepared = layer.forward(args);
    layer.dispose();
    const oneShot = attn.selfAttention(args);
    sameBits(oneShot.output, prepared.output, 'output');
    sameBits(oneShot.weights, prepared.weights, 'weights');
  });
});

describe('weights and memory', () => {
  test('the layer keeps its own copy of the weights', () => {
    const args = mhaArgs({ seed: 700, batch: 2, tgtLen: 5, embedDim: 8, numHeads: 2, bias: true, outBias: true });
    const want = ref.multiHeadAttention(args);
    const params = mhaParams(args);
    const saved = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v && v.slice ? v.slice() : v]));
    const layer = attn.createMultiHeadAttention(params);
    params.inProjWeight.fill(0);
    params.outProjWeight.fill(7);
    params.inProjBias.fill(1);
    checkResult(layer.forward(mhaInputs(args)), want, mhaDims(args), 'forward after the caller changed its arrays');
    layer.dispose();
    Object.assign(params, saved);

    const sArgs = saArgs({ seed: 701, seqLen: 4, dModel: 8, dK: 4, dV: 4, bias: true });
    const sWant = ref.selfAttention(sArgs);
    const sParams = { ...saParams(sArgs), wq: sArgs.wq.slice(), wv: sArgs.wv.slice() };
    const sa = attn.createSelfAttention(sParams);
    sParams.wq.fill(3);
    sParams.wv.fill(-1);
    checkResult(sa.forward(saInputs(sArgs)), sWant, saDims(sArgs), 'SA forward after the caller changed its arrays');
    sa.dispose();
  });

  test('dispose frees the memory: heapInUse back to before create', () => {
    const args = mhaArgs({ seed: 702, tgtLen: 16, embedDim: 256, numHeads: 4, bias: true, outBias: true });
    const before = heap();
    const layers = [];
    for (let i = 0; i < 5; i++) layers.push(attn.createMultiHeadAttention(mhaParams(args)));
    const held = heap();
    // five copies of 4·256² floats of weights are held
    expect(held - before).toBeGreaterThanOrEqual(5 * 4 * 256 * 256 * 4);
    for (const l of layers) l.forward(mhaInputs(args));
    expect(heap()).toBe(held);
    for (const l of layers) l.dispose();
    expect(heap()).toBe(before);

    const sArgs = saArgs({ seed: 703, seqLen: 8, dModel: 128, dK: 64, dV: 32, bias: true });
    const sa = attn.createSelfAttention(saParams(sArgs));
    expect(heap() - before).toBeGreaterThanOrEqual((64 + 64 + 32) * 128 * 4);
    sa.forward(saInputs(sArgs));
    sa.dispose();
    expect(heap()).toBe(before);
  });

  test('many forwards on one layer do not leak', () => {
    const args = mhaArgs({
      seed: 704,
      batch: 2,
      tgtLen: 7,
      srcLen: 9,
      embedDim: 12,
      numHeads: 3,
      kdim: 5,
      vdim: 6,
      attnMask: 'float3d',
      keyPaddingMask: 'bool',
      isCausal: true,
    });
    const layer = attn.createMultiHeadAttention(mhaParams(args));
    layer.forward(mhaInputs(args));
    const held = heap();
    for (let i = 0; i < 20; i++) {
      layer.forward(mhaInputs(args));
      layer.forward({ ...mhaInputs(args), needWeights: false });
      expect([i, heap()]).toEqual([i, held]);
    }
    layer.dispose();
  });
});
