'use strict';
// The bit-identity cases: a fixed set of seeded calls that reach every path of the core (both
// attention paths, both plans, the borrowed one-shot path, teaching copies, decoder features, KV
// caches, non-finite values, parallel shapes), and the sha256 of every array each returns. The
// hashes of every build at 1 and 2 threads are recorded in tests/fixtures/bits/hashes.json by
// scripts/record-bits.js; bits.test.js recomputes them, so a refactor that changes one bit anywhere
// is named by case and build.
//
// Run as a script (in a Node with --experimental-wasm-relaxed-simd, for the relaxed builds):
//   node tests/js/bits-cases.js <build> <threads>   prints { case: { array: sha256 } } as JSON
const crypto = require('crypto');
const path = require('path');
const { mhaArgs, saArgs } = require('./cases');
const { MHA_LAYER_ARGS, SA_LAYER_ARGS, splitArgs } = require('./contract-args');

// Every build by its file name: the createAttention options that choose it, and the thread counts
// it runs at (a threaded build at one thread too, through its setThreads).
const BUILDS = {
  'wasm-attention-simd': { options: { relaxedSimd: false }, threads: [1] },
  'wasm-attention-simd-mt': { options: { relaxedSimd: false }, threads: [1, 2] },
  'wasm-attention-relaxed': { options: { relaxedSimd: true }, threads: [1] },
  'wasm-attention-relaxed-mt': { options: { relaxedSimd: true }, threads: [1, 2] },
  'wasm-attention-scalar': { options: { simd: false }, threads: [1] },
  'wasm-attention-scalar-mt': { options: { simd: false }, threads: [1, 2] },
};
const NODE_FLAGS = ['--experimental-wasm-relaxed-simd'];

// A call's arrays by name: output, weights (when any) and every intermediate.
function arrays(result, prefix = '') {
  const out = { [`${prefix}output`]: result.output };
  if (result.weights) out[`${prefix}weights`] = result.weights;
  for (const [name, a] of Object.entries(result.intermediates ?? {})) out[`${prefix}intermediates.${name}`] = a;
  return out;
}

function prepared(attn, args, calls, layerKeys = MHA_LAYER_ARGS, create = 'createMultiHeadAttention') {
  const { layer: layerArgs, inputs } = splitArgs(args, layerKeys);
  const layer = attn[create](layerArgs);
  try {
    const out = {};
    calls.forEach((extra, i) => Object.assign(out, arrays(layer.forward({ ...inputs, ...extra }), `call${i}.`)));
    return out;
  } finally {
    layer.dispose();
  }
}

const poisoned = (t, index, value) => {
  const c = Float32Array.from(t);
  c[index] = value;
  return c;
};

const mha = (o) => (attn) => arrays(attn.multiHeadAttention(mhaArgs(o)));
const sa = (o) => (attn) => arrays(attn.selfAttention(saArgs(o)));

// Prefill then decode steps on one cache: rows [t0, t0 + n) of every batch element per call.
function kvCache(o, steps, needWeightsAt) {
  return (attn) => {
    const batch = o.batch ?? 1,
      T = steps.reduce((a, b) => a + b, 0),
      E = o.embedDim;
    const full = mhaArgs({ ...o, tgtLen: T });
    const { layer: layerArgs } = splitArgs(full, MHA_LAYER_ARGS);
    const layer = attn.createMultiHeadAttention(layerArgs);
    const cache = layer.createKvCache({ maxLength: T + 3, batch });
    const out = {};
    let t0 = 0;
    try {
      steps.forEach((n, s) => {
        const query = new Float32Array(batch * n * E);
        for (let b = 0; b < batch; b++)
          query.set(full.query.subarray((b * T + t0) * E, (b * T + t0 + n) * E), b * n * E);
        const r = layer.forward({ query, cache, isCausal: true, needWeights: needWeightsAt.includes(s) });
        Object.assign(out, arrays(r, `step${s}.`));
        t0 += n;
      });
    } finally {
      cache.dispose();
      layer.dispose();
    }
    return out;
  };
}

// Grouped-query heads with RoPE, ALiBi and a window, with and without weights.
// prettier-ignore
const GQA_WINDOW = { seed: 113, batch: 2, tgtLen: 21, embedDim: 24, numHeads: 6, numKvHeads: 2, rope: true, alibi: true,
  slidingWindow: 4, isCausal: true, positionOffset: 3 };

const CASES = {
  // selfAttention and multiHeadAttention one-shot, weights averaged, per head and none, masks
  'sa weights causal bias': sa({
    seed: 101,
    batch: 2,
    seqLen: 9,
    dModel: 12,
    dK: 5,
    dV: 7,
    bias: true,
    isCausal: true,
  }),
  'sa bool mask no weights': sa({ seed: 102, seqLen: 13, dModel: 8, dK: 8, mask: 'bool', needWeights: false }),
  'sa float mask scale masked rows': sa({
    seed: 103,
    seqLen: 11,
    dModel: 6,
    dK: 4,
    mask: 'float',
    scale: 0.3,
    maskedRows: [2, 5],
  }),
  'mha averaged float2d + kpm bool': mha({
    seed: 104,
    batch: 2,
    tgtLen: 7,
    srcLen: 9,
    embedDim: 16,
    numHeads: 4,
    bias: true,
    outBias: true,
    attnMask: 'float2d',
    keyPaddingMask: 'bool',
  }),
  'mha per-head bool3d + kpm float': mha({
    seed: 105,
    batch: 2,
    tgtLen: 6,
    embedDim: 12,
    numHeads: 3,
    averageAttnWeights: false,
    attnMask: 'bool3d',
    keyPaddingMask: 'float',
    maskedRows: [[1, 2, 3]],
  }),
  'mha no weights causal cross kdim vdim': mha({
    seed: 106,
    batch: 2,
    tgtLen: 10,
    srcLen: 13,
    embedDim: 8,
    numHeads: 2,
    kdim: 5,
    vdim: 6,
    isCausal: true,
    needWeights: false,
  }),
  'mha causal float3d padded batch': mha({
    seed: 107,
    batch: 3,
    tgtLen: 5,
    embedDim: 8,
    numHeads: 2,
    isCausal: true,
    attnMask: 'float3d',
    paddedBatches: [1],
  }),
  // the teaching copies
  'mha returnIntermediates': (attn) =>
    arrays(
      attn.multiHeadAttention({
        ...mhaArgs({
          seed: 108,
          batch: 2,
          tgtLen: 6,
          srcLen: 40,
          embedDim: 12,
          numHeads: 3,
          bias: true,
          attnMask: 'bool2d',
          isCausal: true,
        }),
        returnIntermediates: true,
      }),
    ),
  'mha returnIntermediates gqa window alibi': (attn) =>
    arrays(
      attn.multiHeadAttention({
        ...mhaArgs({
          seed: 109,
          tgtLen: 40,
          embedDim: 16,
          numHeads: 4,
          numKvHeads: 2,
          slidingWindow: 5,
          alibi: true,
          rope: true,
          isCausal: true,
          averageAttnWeights: false,
        }),
        returnIntermediates: true,
      }),
    ),
  'sa returnIntermediates no weights': (attn) =>
    arrays(
      attn.selfAttention({
        ...saArgs({ seed: 110, seqLen: 8, dModel: 6, dK: 4, dV: 3, isCausal: true, needWeights: false }),
        returnIntermediates: true,
      }),
    ),
  // prepared layers: several forwards of one layer
  'prepared mha': (attn) =>
    prepared(
      attn,
      mhaArgs({ seed: 111, batch: 2, tgtLen: 9, srcLen: 11, embedDim: 16, numHeads: 4, bias: true, outBias: true }),
      [{}, { isCausal: true, needWeights: false }, { averageAttnWeights: false }, { returnIntermediates: true }],
    ),
  'prepared sa': (attn) =>
    prepared(
      attn,
      saArgs({ seed: 112, seqLen: 10, dModel: 8, dK: 6, bias: true }),
      [{}, { isCausal: true }, { needWeights: false }],
      SA_LAYER_ARGS,
      'createSelfAttention',
    ),
  // decoder features
  'gqa rope half-split alibi window': mha({ ...GQA_WINDOW, separateBias: true, outBias: true }),
  'gqa rope half-split alibi window fused': mha({ ...GQA_WINDOW, needWeights: false }),
  'mqa rope interleaved partial alibi slopes': mha({
    seed: 114,
    tgtLen: 9,
    srcLen: 14,
    embedDim: 16,
    numHeads: 4,
    numKvHeads: 1,
    headDim: 6,
    rope: { dim: 4, interleaved: true, base: 500 },
    positionOffset: 5,
    isCausal: true,
    alibi: new Float32Array([0.5, -0.25, 0, 1]),
    averageAttnWeights: false,
  }),
  'rope partial half-split window not causal': mha({
    seed: 115,
    tgtLen: 30,
    embedDim: 16,
    numHeads: 2,
    headDim: 10,
    rope: { dim: 6 },
    slidingWindow: 7,
    attnMask: 'bool2d',
    needWeights: false,
  }),
  // a KV cache: prefill, then decode steps (grouped heads stacked in one block), some with weights
  'kv cache prefill decode gqa': kvCache(
    { seed: 116, batch: 2, embedDim: 32, numHeads: 8, numKvHeads: 2, rope: true, alibi: true, slidingWindow: 9 },
    [13, 1, 1, 4, 1],
    [0, 2],
  ),
  'kv cache prefill decode mha': kvCache(
    { seed: 117, embedDim: 16, numHeads: 4, bias: true, outBias: true },
    [20, 1, 3, 1],
    [1],
  ),
  // the fused path over two key tiles, with and without a window; the one-head-at-a-time plan
  'fused 600 keys': mha({
    seed: 118,
    tgtLen: 40,
    srcLen: 600,
    embedDim: 8,
    numHeads: 2,
    needWeights: false,
    keyPaddingMask: 'bool',
  }),
  'fused 300 causal window alibi': mha({
    seed: 119,
    tgtLen: 300,
    embedDim: 16,
    numHeads: 2,
    numKvHeads: 1,
    slidingWindow: 40,
    isCausal: true,
    rope: true,
    alibi: true,
    needWeights: false,
  }),
  'weights 300 keys': mha({ seed: 120, tgtLen: 33, srcLen: 300, embedDim: 8, numHeads: 2, attnMask: 'float2d' }),
  'one head at a time fused': mha({
    seed: 121,
    tgtLen: 40,
    srcLen: 2100,
    embedDim: 64,
    numHeads: 2,
    headDim: 256,
    needWeights: false,
    isCausal: true,
    positionOffset: 2060,
  }),
  'one head at a time weights': mha({
    seed: 122,
    tgtLen: 40,
    srcLen: 2100,
    embedDim: 64,
    numHeads: 2,
    headDim: 256,
    averageAttnWeights: false,
    slidingWindow: 600,
    positionOffset: 2060,
  }),
  // one-shot calls of 3 and 4 tokens read their weights in place (embedDim ≥ 512)
  'borrowed 4 tokens': mha({
    seed: 123,
    tgtLen: 4,
    embedDim: 512,
    numHeads: 8,
    bias: true,
    outBias: true,
    isCausal: true,
  }),
  'borrowed 3 tokens no weights': mha({ seed: 124, tgtLen: 3, embedDim: 512, numHeads: 4, needWeights: false }),
  'borrowed sa 4 tokens': sa({ seed: 125, seqLen: 4, dModel: 512, dK: 64, bias: true }),
  // NaN and ±Inf: in values (both paths, one and two key tiles), in a query
  'nan inf values weights': (attn) => {
    const a = mhaArgs({ seed: 126, tgtLen: 64, embedDim: 8, numHeads: 2, cross: true, isCausal: true });
    a.value = poisoned(poisoned(a.value, 5 * 8 + 4, NaN), 40 * 8, Infinity);
    return arrays(attn.multiHeadAttention(a));
  },
  'nan inf values fused 300 keys': (attn) => {
    const a = mhaArgs({
      seed: 127,
      tgtLen: 40,
      srcLen: 300,
      embedDim: 4,
      numHeads: 2,
      needWeights: false,
      attnMask: 'bool2d',
    });
    a.value = poisoned(poisoned(a.value, 280 * 4, NaN), 17 * 4 + 1, -Infinity);
    return arrays(attn.multiHeadAttention(a));
  },
  'nan query': (attn) => {
    const a = mhaArgs({ seed: 128, batch: 2, tgtLen: 5, srcLen: 6, embedDim: 8, numHeads: 2, bias: true });
    a.query = poisoned(a.query, (5 + 3) * 8 + 2, NaN);
    return {
      ...arrays(attn.multiHeadAttention(a), 'weights.'),
      ...arrays(attn.multiHeadAttention({ ...a, needWeights: false }), 'fused.'),
    };
  },
  // large enough to run on every thread: row blocks, head rows kept apart, column-split projections
  'parallel batch 2 x 128': mha({
    seed: 129,
    batch: 2,
    tgtLen: 128,
    embedDim: 64,
    numHeads: 4,
    bias: true,
    outBias: true,
    isCausal: true,
  }),
  'parallel fused 200': mha({
    seed: 130,
    tgtLen: 200,
    embedDim: 64,
    numHeads: 4,
    numKvHeads: 2,
    needWeights: false,
    rope: true,
  }),
  'parallel averaged head rows': mha({ seed: 131, tgtLen: 8, srcLen: 512, embedDim: 128, numHeads: 8 }),
  'parallel prepared decode step': (attn) =>
    prepared(
      attn,
      mhaArgs({ seed: 132, tgtLen: 2, srcLen: 700, embedDim: 256, numHeads: 8, numKvHeads: 4, outBias: true }),
      [{}, { needWeights: false }],
    ),
};

function sha256(a) {
  return crypto
    .createHash('sha256')
    .update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength))
    .digest('hex');
}

/** { case: { array: sha256 } } of every case on one build at one thread count. */
async function hashBuild(createAttention, build, threads) {
  const spec = BUILDS[build];
  const attn = await createAttention({ ...spec.options, threads: build.endsWith('-mt') ? 2 : 1 });
  try {
    const file = attn[Symbol.for('wasm-attention.module')].setThreads(threads);
    const info = attn.info;
    const isa = build.includes('relaxed') ? 'relaxed' : build.includes('scalar') ? 'scalar' : 'simd';
    if (file !== threads || info.relaxedSimd !== (isa === 'relaxed') || info.simd !== (isa !== 'scalar')) {
      throw new Error(
        `${build} at ${threads} threads: the engine started is ${JSON.stringify(info)} (threads ${file})`,
      );
    }
    const hashes = {};
    for (const [name, run] of Object.entries(CASES)) {
      hashes[name] = {};
      for (const [array, a] of Object.entries(run(attn))) hashes[name][array] = sha256(a);
    }
    return hashes;
  } finally {
    attn.dispose();
  }
}

module.exports = { BUILDS, NODE_FLAGS, CASES, hashBuild };

if (require.main === module) {
  const { createAttention } = require(path.join(__dirname, '..', '..', 'dist', 'index.cjs'));
  const [build, threads] = process.argv.slice(2);
  hashBuild(createAttention, build, Number(threads)).then(
    (hashes) => console.log(JSON.stringify(hashes)),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
