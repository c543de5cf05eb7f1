'use strict';
// Seeded argument builders and result checks shared by the JS tests.
const ref = require('./reference');

/** Sizes around the SIMD width (4) and the kernels' tiles (8, 16, 32). */
const SIZES = [1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33];

/** A Uint8Array bool mask: each element 1 (masked) with probability p. */
function boolMask(rng, n, p = 0.25) {
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) m[i] = rng() < p ? 1 : 0;
  return m;
}

/** A Float32Array additive mask: uniform in [-2, 2), and −∞ with probability pInf. */
function floatMask(rng, n, pInf = 0.15) {
  const m = new Float32Array(n);
  const negInf = -Infinity;
  for (let i = 0; i < n; i++) m[i] = rng() < pInf ? negInf : rng() * 4 - 2;
  return m;
}

function makeMask(rng, kind, n) {
  if (kind === 'bool') return boolMask(rng, n);
  if (kind === 'float') return floatMask(rng, n);
  throw new Error(`unknown mask kind ${kind}`);
}

/** Weights of a layer with `inDim` inputs: uniform in ±1/sqrt(inDim) (keeps scores O(1)). */
function weight(rng, rows, inDim) {
  return ref.randomArray(rng, rows * inDim, 1 / Math.sqrt(inDim));
}

/**
 * selfAttention arguments. o: { seed, batch, seqLen, dModel, dK, dV, bias, isCausal,
 * mask: 'bool' | 'float', scale, needWeights, maskedRows: [rows fully masked by attnMask] }.
 */
function saArgs(o) {
  const rng = ref.mulberry32(o.seed ?? 1);
  const batch = o.batch ?? 1;
  const L = o.seqLen,
    D = o.dModel,
    dK = o.dK,
    dV = o.dV ?? o.dK;
  const a = {
    x: ref.randomArray(rng, batch * L * D),
    seqLen: L,
    dModel: D,
    wq: weight(rng, dK, D),
    wk: weight(rng, dK, D),
    wv: weight(rng, dV, D),
  };
  if (o.batch !== undefined) a.batch = batch;
  if (o.bias) {
    a.bq = ref.randomArray(rng, dK, 0.5);
    a.bk = ref.randomArray(rng, dK, 0.5);
    a.bv = ref.randomArray(rng, dV, 0.5);
  }
  if (o.isCausal !== undefined) a.isCausal = o.isCausal;
  if (o.mask) a.attnMask = makeMask(rng, o.mask, L * L);
  if (o.maskedRows) {
    if (!a.attnMask) a.attnMask = new Uint8Array(L * L);
    const full = a.attnMask instanceof Uint8Array ? 1 : -Infinity;
    for (const r of o.maskedRows) a.attnMask.fill(full, r * L, (r + 1) * L);
  }
  if (o.scale !== undefined) a.scale = o.scale;
  if (o.needWeights !== undefined) a.needWeights = o.needWeights;
  return a;
}

/**
 * multiHeadAttention arguments. o: { seed, batch, tgtLen, srcLen, embedDim, numHeads,
 * kdim, vdim, separate (q/k/v weights instead of inProjWeight), bias (inProjBias),
 * outBias, cross (distinct key/value tensors; implied by srcLen ≠ tgtLen or kdim/vdim),
 * attnMask: 'bool2d' | 'float2d' | 'bool3d' | 'float3d', keyPaddingMask: 'bool' | 'float',
 * isCausal, scale, needWeights, averageAttnWeights, passLens (pass tgtLen/srcLen),
 * maskedRows: [[b, h, i], …] rows fully masked through a (3-D) attnMask,
 * paddedBatches: [b, …] batch elements whose every key is padded;
 * decoder: numKvHeads, headDim (either implies separate weights of those widths), separateBias
 * (qProjBias / kProjBias / vProjBias instead of inProjBias), rope, alibi, slidingWindow,
 * positionOffset — passed as given }.
 */
function mhaArgs(o) {
  const rng = ref.mulberry32(o.seed ?? 1);
  const batch = o.batch ?? 1;
  const E = o.embedDim,
    H = o.numHeads;
  const L = o.tgtLen,
    S = o.srcLen ?? o.tgtLen;
  const kdim = o.kdim ?? E,
    vdim = o.vdim ?? E;
  const decoder = o.numKvHeads !== undefined || o.headDim !== undefined;
  const hd = o.headDim ?? E / H,
    qw = H * hd,
    kvw = (o.numKvHeads ?? H) * hd;
  const separate = o.separate || kdim !== E || vdim !== E || decoder;
  const cross = o.cross || S !== L || kdim !== E || vdim !== E;
  const a = { query: ref.randomArray(rng, batch * L * E), embedDim: E, numHeads: H };
  if (cross) {
    a.key = ref.randomArray(rng, batch * S * kdim);
    a.value = ref.randomArray(rng, batch * S * vdim);
  }
  if (o.batch !== undefined) a.batch = batch;
  if (o.kdim !== undefined) a.kdim = kdim;
  if (o.vdim !== undefined) a.vdim = vdim;
  if (o.passLens) {
    a.tgtLen = L;
    a.srcLen = S;
  }
  for (const name of ['numKvHeads', 'headDim', 'rope', 'alibi', 'slidingWindow', 'positionOffset']) {
    if (o[name] !== undefined) a[name] = o[name];
  }
  if (separate) {
    a.qProjWeight = weight(rng, qw, E);
    a.kProjWeight = weight(rng, kvw, kdim);
    a.vProjWeight = weight(rng, kvw, vdim);
  } else {
    a.inProjWeight = weight(rng, 3 * E, E);
  }
  if (o.bias) a.inProjBias = ref.randomArray(rng, qw + 2 * kvw, 0.5);
  if (o.separateBias) {
    a.qProjBias = ref.randomArray(rng, qw, 0.5);
    a.kProjBias = ref.randomArray(rng, kvw, 0.5);
    a.vProjBias = ref.randomArray(rng, kvw, 0.5);
  }
  a.outProjWeight = weight(rng, E, qw);
  if (o.outBias) a.outProjBias = ref.randomArray(rng, E, 0.5);
  if (o.attnMask) {
    const kind = o.attnMask.startsWith('bool') ? 'bool' : 'float';
    const n = o.attnMask.endsWith('3d') ? batch * H * L * S : L * S;
    a.attnMask = makeMask(rng, kind, n);
  }
  if (o.maskedRows) {
    if (!a.attnMask) a.attnMask = new Uint8Array(batch * H * L * S);
    const is3d = a.attnMask.length === batch * H * L * S;
    const full = a.attnMask instanceof Uint8Array ? 1 : -Infinity;
    for (const [b, h, i] of o.maskedRows) {
      const start = is3d ? ((b * H + h) * L + i) * S : i * S;
      a.attnMask.fill(full, start, start + S);
    }
  }
  if (o.keyPaddingMask) {
    a.keyPaddingMask = makeMask(rng, o.keyPaddingMask, batch * S);
  }
  if (o.paddedBatches) {
    if (!a.keyPaddingMask) a.keyPaddingMask = new Uint8Array(batch * S);
    const full = a.keyPaddingMask instanceof Uint8Array ? 1 : -Infinity;
    for (const b of o.paddedBatches) a.keyPaddingMask.fill(full, b * S, (b + 1) * S);
  }
  if (o.isCausal !== undefined) a.isCausal = o.isCausal;
  if (o.scale !== undefined) a.scale = o.scale;
  if (o.needWeights !== undefined) a.needWeights = o.needWeights;
  if (o.averageAttnWeights !== undefined) a.averageAttnWeights = o.averageAttnWeights;
  return a;
}

/** A readable name for a case's options. */
function caseName(o) {
  return Object.entries(o)
    .filter(([k]) => k !== 'seed')
    .map(([k, v]) => `${k}=${Array.isArray(v) || (v && v.constructor === Object) ? JSON.stringify(v) : v}`)
    .join(' ');
}

/** Dims of selfAttention's results. */
function saDims(args) {
  const batch = args.batch ?? 1,
    L = args.seqLen;
  return { output: [batch, L, args.wv.length / args.dModel], weights: [batch, L, L] };
}

/** Dims of multiHeadAttention's results. */
function mhaDims(args) {
  const E = args.embedDim,
    H = args.numHeads,
    batch = args.batch ?? 1;
  const kdim = args.kdim ?? E;
  const key = args.key ?? args.query;
  const L = args.tgtLen ?? args.query.length / (batch * E);
  const S = args.srcLen ?? key.length / (batch * kdim);
  const average = args.averageAttnWeights ?? true;
  return { output: [batch, L, E], weights: average ? [batch, L, S] : [batch, H, L, S] };
}

const prod = (dims) => dims.reduce((x, y) => x * y, 1);

/**
 * Checks a { output, weights } result against the reference: types, lengths, values within
 * the contract's tolerance; every weights row sums to 1, or is exactly zero when the
 * reference says the row is fully masked (then the attention result must be zero too).
 */
function checkResult(got, want, dims, label) {
  expect(got).toBeTruthy();
  if (!(got.output instanceof Float32Array)) {
    throw new Error(`${label}: output is ${Object.prototype.toString.call(got.output)}, expected Float32Array`);
  }
  if (got.output.length !== prod(dims.output)) {
    throw new Error(`${label}: output length ${got.output.length}, expected ${prod(dims.output)}`);
  }
  ref.expectClose(got.output, want.output, `${label} output`, dims.output);
  if (want.weights === null) {
    if (got.weights !== null) throw new Error(`${label}: weights should be null, got ${got.weights}`);
    return;
  }
  if (!(got.weights instanceof Float32Array)) {
    throw new Error(`${label}: weights is ${Object.prototype.toString.call(got.weights)}, expected Float32Array`);
  }
  if (got.weights.length !== prod(dims.weights)) {
    throw new Error(`${label}: weights length ${got.weights.length}, expected ${prod(dims.weights)}`);
  }
  ref.expectClose(got.weights, want.weights, `${label} weights`, dims.weights);
  checkRowSums(got.weights, want.weights, dims.weights, label);
}

/** Rows of the weights sum to 1 (within 1e-3) unless the reference row is all zeros; then all zeros. */
function checkRowSums(got, want, dims, label) {
  const S = dims[dims.length - 1];
  for (let r = 0; r < got.length / S; r++) {
    let gs = 0,
      ws = 0;
    for (let j = 0; j < S; j++) {
      gs += got[r * S + j];
      ws += want[r * S + j];
    }
    if (ws === 0) {
      for (let j = 0; j < S; j++) {
        if (got[r * S + j] !== 0) {
          throw new Error(
            `${label}: fully masked weights row ${ref.formatIndex(r * S + j, dims)} is ${got[r * S + j]}, expected 0`,
          );
        }
      }
    } else if (Math.abs(gs - ws) > 1e-3) {
      // ws is 1, or (averaged heads with some fully masked) a multiple of 1/numHeads
      throw new Error(`${label}: weights row ${r} (of [${dims.slice(0, -1)}]) sums to ${gs}, expected ${ws}`);
    }
  }
}

/** Every element is 0 (or -0): a fully masked row's weights and attention result. */
function expectZeros(a, label) {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== 0) throw new Error(`${label}: index ${i} is ${a[i]}, expected 0`);
  }
}

module.exports = {
  SIZES,
  expectZeros,
  boolMask,
  floatMask,
  saArgs,
  mhaArgs,
  caseName,
  saDims,
  mhaDims,
  checkResult,
  checkRowSums,
  prod,
};
