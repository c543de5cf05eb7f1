'use strict';
// Seeded random cases for the differential fuzz: the package against the float64 reference.
// Used by tests/js/fuzz.test.js (a quick run in npm test) and scripts/fuzz.mjs (npm run fuzz N).
//
// A case is small (so the reference stays fast) but covers: selfAttention and multiHeadAttention,
// one-shot and prepared, 1 and 2 threads, batch, 1 token, odd sizes, tgtLen ≠ srcLen, kdim/vdim,
// every mask kind (bool/float, 2-D/3-D attnMask, bool/float keyPaddingMask, causal), weights
// averaged or per head or none (the fused path), a custom scale, and now and then a NaN or ±Inf in
// one input element (which must propagate as IEEE arithmetic says) or a case big enough to run on
// both threads. Multi-head cases also draw the decoder arguments now and then (grouped-query heads,
// headDim, separate biases, RoPE, ALiBi, a sliding window, a position offset), from a generator of
// their own, so the v1 arguments of every case stay what they were; a prepared self-attention case
// may run through a KV cache in two chunks (`cached`: the tokens before it), each chunk checked
// against the reference of its queries over the keys so far.
const ref = require('./reference');
const { saArgs, mhaArgs, saDims, mhaDims, caseName } = require('./cases');
const { MHA_LAYER_ARGS, SA_LAYER_ARGS, splitArgs } = require('./contract-args');

const pickFrom = (rng, list) => list[Math.floor(rng() * list.length)];
const int = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
const chance = (rng, p) => rng() < p;

/** Case number `index` of the run seeded `seed`: { kind, o, prepared, threads, poison }. */
function randomCase(seed, index) {
  const rng = ref.mulberry32((seed * 1000003 + index * 7919) >>> 0);
  const big = index % 97 === 50; // now and then enough work to be split over threads
  const threads = chance(rng, 0.5) ? 2 : 1;
  const prepared = chance(rng, 0.4);
  const batch = chance(rng, 0.6) ? 1 : int(rng, 2, 3);
  const poison = chance(rng, 0.08)
    ? { where: pickFrom(rng, ['query', 'key', 'value']), what: pickFrom(rng, [NaN, Infinity, -Infinity]), at: rng() }
    : null;
  const common = {
    seed: int(rng, 1, 1e9),
    isCausal: chance(rng, 0.3),
    needWeights: chance(rng, 0.7),
  };
  if (chance(rng, 0.2)) common.scale = (rng() * 2 - 0.5) * 1.5;
  if (batch > 1 || chance(rng, 0.3)) common.batch = batch;
  if (chance(rng, 0.35)) {
    const seqLen = big ? 64 : pickFrom(rng, [1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 17, 33]);
    const o = {
      ...common,
      seqLen,
      dModel: big ? 64 : int(rng, 1, 9),
      dK: int(rng, 1, 9),
      dV: int(rng, 1, 9),
      bias: chance(rng, 0.5),
    };
    if (chance(rng, 0.4)) o.mask = pickFrom(rng, ['bool', 'float']);
    return { kind: 'selfAttention', o, prepared, threads, poison };
  }
  const numHeads = big ? 4 : int(rng, 1, 4);
  const tgtLen = big ? 64 : pickFrom(rng, [1, 1, 2, 3, 4, 5, 6, 7, 9, 12, 17, 33]);
  const o = {
    ...common,
    tgtLen,
    srcLen: chance(rng, 0.6) ? tgtLen : pickFrom(rng, [1, 2, 3, 5, 8, 11, 19]),
    numHeads,
    embedDim: numHeads * (big ? 16 : int(rng, 1, 5)),
    bias: chance(rng, 0.5),
    outBias: chance(rng, 0.5),
    averageAttnWeights: chance(rng, 0.7),
  };
  if (chance(rng, 0.2)) o.kdim = int(rng, 1, 7);
  if (chance(rng, 0.2)) o.vdim = int(rng, 1, 7);
  if (chance(rng, 0.2)) o.separate = true;
  if (chance(rng, 0.2)) o.cross = true;
  if (chance(rng, 0.2)) o.passLens = true;
  if (chance(rng, 0.4)) o.attnMask = pickFrom(rng, ['bool2d', 'float2d', 'bool3d', 'float3d']);
  if (chance(rng, 0.35)) o.keyPaddingMask = pickFrom(rng, ['bool', 'float']);
  const drng = ref.mulberry32((seed * 7919 + index * 1000003) >>> 0);
  decoderArgs(drng, o);
  const c = { kind: 'multiHeadAttention', o, prepared, threads, poison };
  const selfAttention = !o.cross && o.kdim === undefined && o.vdim === undefined && o.srcLen === tgtLen;
  if (prepared && selfAttention && !o.attnMask && o.positionOffset === undefined && tgtLen >= 2 && chance(drng, 0.8)) {
    c.cached = 1 + Math.floor(drng() * (tgtLen - 1));
    delete o.passLens;
  }
  return c;
}

/** Adds decoder arguments to a multi-head case o (about half the cases get some). */
function decoderArgs(rng, o) {
  if (chance(rng, 0.5)) return;
  const H = o.numHeads;
  if (chance(rng, 0.4))
    o.numKvHeads = pickFrom(
      rng,
      [...Array(H).keys()].map((k) => k + 1).filter((k) => H % k === 0),
    );
  if (chance(rng, 0.3)) o.headDim = int(rng, 1, 6);
  if (!o.bias && chance(rng, 0.3)) o.separateBias = true;
  const hd = o.headDim ?? o.embedDim / H;
  if (chance(rng, 0.3) && hd >= 2) {
    o.rope =
      chance(rng, 0.4) && hd % 2 === 0
        ? true
        : {
            dim: 2 * int(rng, 1, Math.floor(hd / 2)),
            interleaved: chance(rng, 0.5),
            base: pickFrom(rng, [10000, 500, 1e6]),
          };
  }
  if (chance(rng, 0.3)) o.alibi = true;
  if (chance(rng, 0.3)) o.slidingWindow = int(rng, 1, 8);
  if (chance(rng, 0.3)) o.positionOffset = int(rng, 0, 20);
}

/** The arguments of a case (the poison, if any, written into one element of one input). */
function caseArgs(c) {
  const args = c.kind === 'selfAttention' ? saArgs(c.o) : mhaArgs(c.o);
  if (c.poison) {
    const name = c.kind === 'selfAttention' ? 'x' : args[c.poison.where] ? c.poison.where : 'query';
    const t = Float32Array.from(args[name]);
    t[Math.floor(c.poison.at * t.length)] = c.poison.what;
    args[name] = t;
  }
  return args;
}

function checkOne(got, want, dims, label) {
  if (!(got.output instanceof Float32Array)) throw new Error(`${label}: output is not a Float32Array`);
  ref.expectClose(got.output, want.output, `${label} output`, dims.output);
  if (want.weights === null) {
    if (got.weights !== null) throw new Error(`${label}: weights should be null`);
  } else {
    ref.expectClose(got.weights, want.weights, `${label} weights`, dims.weights);
  }
}

/** Tokens [t0, t0 + n) of every batch element of a [batch, T, width] tensor. */
function tokens(t, batch, T, width, t0, n) {
  const out = new t.constructor(batch * n * width);
  for (let b = 0; b < batch; b++) out.set(t.subarray((b * T + t0) * width, (b * T + t0 + n) * width), b * n * width);
  return out;
}

/**
 * A prepared self-attention case through a KV cache: tokens [0, t0) then [t0, T). Chunk k's result
 * is the reference's for its queries (at positions from where it starts) over every key so far.
 */
function runCached(attn, c, args, name) {
  const { layer, inputs } = splitArgs(args, MHA_LAYER_ARGS);
  const batch = args.batch ?? 1,
    E = args.embedDim,
    T = args.query.length / (batch * E),
    t0 = c.cached;
  const l = attn.createMultiHeadAttention(layer);
  const outputs = [];
  let cache = null;
  try {
    cache = l.createKvCache({ maxLength: T, batch });
    for (const [start, n] of [
      [0, t0],
      [t0, T - t0],
    ]) {
      const query = tokens(args.query, batch, T, E, start, n);
      const keys = tokens(args.query, batch, T, E, 0, start + n);
      const kpm = args.keyPaddingMask ? tokens(args.keyPaddingMask, batch, T, 1, 0, start + n) : undefined;
      const got = l.forward({ ...inputs, query, cache, keyPaddingMask: kpm });
      const stepArgs = { ...args, query, key: keys, value: keys, keyPaddingMask: kpm, positionOffset: start };
      checkOne(got, ref.multiHeadAttention(stepArgs), mhaDims(stepArgs), `${name} chunk at ${start}`);
      outputs.push(got);
    }
  } finally {
    cache?.dispose();
    l.dispose();
  }
  return outputs[1];
}

/** Runs case c on engines { 1: attn, 2: attn } and checks it against the reference; throws on a mismatch. */
function runCase(engines, c, label) {
  const attn = engines[c.threads];
  const args = caseArgs(c);
  const name =
    `${label}: ${c.kind} ${c.prepared ? 'prepared' : 'one-shot'} threads=${c.threads}` +
    `${c.poison ? ` poison=${c.poison.what} in ${c.poison.where}` : ''}${c.cached ? ` cached=${c.cached}` : ''} ${caseName(c.o)}`;
  if (c.cached) return runCached(attn, c, args, name);
  let got;
  if (c.prepared) {
    const { layer, inputs } = splitArgs(args, c.kind === 'selfAttention' ? SA_LAYER_ARGS : MHA_LAYER_ARGS);
    const l = c.kind === 'selfAttention' ? attn.createSelfAttention(layer) : attn.createMultiHeadAttention(layer);
    try {
      got = l.forward(inputs);
    } finally {
      l.dispose();
    }
  } else {
    got = attn[c.kind](args);
  }
  const want = ref[c.kind](args);
  checkOne(got, want, c.kind === 'selfAttention' ? saDims(args) : mhaDims(args), name);
  return got;
}

module.exports = { randomCase, runCase, caseArgs };
