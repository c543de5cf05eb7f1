'use strict';
/*
 * A float64 JavaScript reference of the wasm-attention contract (docs/API.md): the oracle
 * of the JS tests. Plain loops, written to be read, not to be fast.
 *
 * Layouts (flat, row-major, outermost axis first; batch first as PyTorch batch_first=True):
 *
 *   selfAttention
 *     x          [batch, seqLen, dModel]
 *     wq, wk     [dK, dModel]       wv [dV, dModel]        nn.Linear: y = x·Wᵀ + b
 *     bq, bk     [dK]               bv [dV]
 *     attnMask   [seqLen, seqLen]   Uint8Array: 1 = masked out; Float32Array: added to scores
 *     output     [batch, seqLen, dV]            weights [batch, seqLen, seqLen]
 *
 *   multiHeadAttention  (E = embedDim, H = numHeads, headDim = E / H, L = tgtLen, S = srcLen)
 *     query      [batch, L, E]      key [batch, S, kdim]    value [batch, S, vdim]
 *     inProjWeight [3E, E]: rows 0..E-1 = Wq, E..2E-1 = Wk, 2E..3E-1 = Wv
 *       or qProjWeight [E, E], kProjWeight [E, kdim], vProjWeight [E, vdim]
 *     inProjBias [3E] (bq, bk, bv)   outProjWeight [E, E]   outProjBias [E]
 *     attnMask   [L, S]  or  [batch·H, L, S]  (slice b·H + h, as PyTorch)
 *     keyPaddingMask [batch, S]       (per key: every head, every query of batch b)
 *     head h uses columns h·headDim … (h+1)·headDim − 1 of the projected Q, K, V
 *     output     [batch, L, E]
 *     weights    [batch, L, S] (mean over heads)  or  [batch, H, L, S]
 *
 * The passes, for one batch element b (and one head h):
 *   1. project      Q = query·Wqᵀ + bq,  K = key·Wkᵀ + bk,  V = value·Wvᵀ + bv
 *   2. score        s[i][j] = scale · Σ_d Q[i][d]·K[j][d]  + every float mask
 *                   key j is masked for query i by a bool mask, causality (j > i) or −∞ in a float
 *                   mask: then s[i][j] = −∞ whatever the product was (even NaN)
 *   3. softmax      m = max_j s[i][j] (NaN if any s is NaN);  e = exp(s − m);  p = e / Σ_j e
 *                   a row whose every s is −∞ attends to nothing: p = 0 (not NaN)
 *   4. attend       A[i] = Σ_{j not masked} p[i][j] · V[j]   (IEEE: 0 · NaN is NaN, so a NaN in
 *                   the value of a key a query sees reaches that query even when p is 0)
 *   5. (MHA only)   concatenate the heads' A, out = A·Woᵀ + bo; weights = mean_h p
 *
 * Decoder-grade arguments (multiHeadAttention; Hkv = numKvHeads, hd = headDim):
 *   Q [batch, L, H·hd], K and V [batch, S, Hkv·hd]; query head h reads K/V head ⌊h·Hkv/H⌋
 *   qProjWeight [H·hd, E], kProjWeight [Hkv·hd, kdim], vProjWeight [Hkv·hd, vdim], outProjWeight [E, H·hd]
 *   inProjBias [(H + 2·Hkv)·hd] or qProjBias [H·hd], kProjBias / vProjBias [Hkv·hd]
 *   positions   query i at pos(i) = positionOffset + i, key j at j
 *   after 1.    RoPE: in each head vector, pair k (x_k, x_{k+dim/2}), or (x_{2k}, x_{2k+1}) when
 *               interleaved, rotates by φ = p·base^(−2k/dim): (a, b) → (a·cos φ − b·sin φ, b·cos φ + a·sin φ)
 *   in 2.       causal masks j > pos(i); slidingWindow w masks pos(i) − j ≥ w;
 *               ALiBi adds slope_h·(j − pos(i)) to the scaled score
 */

// ---------------------------------------------------------------- helpers

// Locals for the hot loops: under Jest's vm sandbox every global lookup (Math, Number, Infinity…)
// goes through an interceptor and costs ~100× a local one.
const { exp, sqrt, abs, floor, imul } = Math;
const NEG_INF = -Infinity;
const isNaNNumber = Number.isNaN;
const F64 = Float64Array;
const U8 = Uint8Array;

/** A float64 copy of a tensor (Float32Array, Float64Array or number[]), or null. */
function f64(t) {
  return t == null ? null : F64.from(t);
}

/** y[r] = x[r]·Wᵀ + b for rows r of x ([rows, inDim]); W is [outDim, inDim]. */
function linear(x, rows, inDim, W, outDim, b) {
  const xd = f64(x),
    Wd = f64(W),
    bd = f64(b);
  const y = new F64(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outDim; o++) {
      let acc = bd ? bd[o] : 0;
      for (let c = 0; c < inDim; c++) acc += xd[r * inDim + c] * Wd[o * inDim + c];
      y[r * outDim + o] = acc;
    }
  }
  return y;
}

/** Columns [col, col + width) of rows [row0, row0 + rows) of a [*, stride] matrix, as a dense copy. */
function slice(m, row0, rows, stride, col, width) {
  const out = new F64(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < width; c++) out[r * width + c] = m[(row0 + r) * stride + col + c];
  }
  return out;
}

/**
 * Adds a mask to add [L, S]: the [L, S] block at `offset`, or with perKeyOnly the S elements at
 * `offset` (padding) for every row. A key it masks (bool 1, or −∞ in a float mask) gets −∞, which
 * stays −∞ whatever else is added (the key is masked); other float values are added.
 */
function addMask(add, mask, offset, L, S, perKeyOnly) {
  const isBool = mask instanceof U8;
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < S; j++) {
      const m = mask[perKeyOnly ? offset + j : offset + i * S + j];
      const t = i * S + j;
      if (add[t] === NEG_INF) continue;
      if (isBool ? m : m === NEG_INF) add[t] = NEG_INF;
      else if (!isBool) add[t] += m;
    }
  }
}

/** The causal mask: key j > pos(i) = offset + i gets −∞ (top-left aligned for offset 0). */
function addCausal(add, L, S, offset = 0) {
  for (let i = 0; i < L; i++) for (let j = offset + i + 1; j < S; j++) add[i * S + j] = NEG_INF;
}

/** The sliding window: key j with pos(i) − j ≥ w gets −∞. */
function addWindow(add, L, S, offset, w) {
  for (let i = 0; i < L; i++) for (let j = 0; j < S && offset + i - j >= w; j++) add[i * S + j] = NEG_INF;
}

/** ALiBi: slope·(j − pos(i)) added to every score not masked. */
function addAlibi(add, L, S, offset, slope) {
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < S; j++) if (add[i * S + j] !== NEG_INF) add[i * S + j] += slope * (j - (offset + i));
  }
}

/**
 * The ALiBi paper's slopes for n heads: 2^(−8k/n), k = 1 … n, for n a power of two; otherwise
 * those of the largest power of two m < n, then every other slope of 2m (k odd), n in all.
 */
function alibiSlopes(n) {
  const powerOfTwo = (m) => Array.from({ length: m }, (_, i) => 2 ** ((-8 * (i + 1)) / m));
  const m = 2 ** floor(Math.log2(n));
  if (m === n) return powerOfTwo(n);
  return [
    ...powerOfTwo(m),
    ...powerOfTwo(2 * m)
      .filter((_, i) => i % 2 === 0)
      .slice(0, n - m),
  ];
}

/**
 * RoPE in place on rows of x ([rows, heads·hd]); row r sits at position posOf(r).
 * rope: { dim = hd, base = 10000, interleaved = false }.
 */
function rotate(x, rows, heads, hd, posOf, rope) {
  const dim = rope.dim ?? hd,
    base = rope.base ?? 10000,
    half = dim / 2;
  for (let r = 0; r < rows; r++) {
    const p = posOf(r);
    for (let h = 0; h < heads; h++) {
      const o = (r * heads + h) * hd;
      for (let k = 0; k < half; k++) {
        const phi = p * base ** ((-2 * k) / dim);
        const ia = o + (rope.interleaved ? 2 * k : k),
          ib = o + (rope.interleaved ? 2 * k + 1 : k + half);
        const a = x[ia],
          b = x[ib];
        x[ia] = a * Math.cos(phi) - b * Math.sin(phi);
        x[ib] = b * Math.cos(phi) + a * Math.sin(phi);
      }
    }
  }
}

/**
 * Passes 2–4 for one (batch, head): q [L, d], k [S, d], v [S, dv] dense; add [L, S] the sum of
 * every additive mask (0 where nothing masks a score).
 * Returns P [L, S] (the softmax weights) and A [L, dv] (the attention result).
 */
function attendOneHead(q, k, v, L, S, d, dv, scale, add) {
  const P = new F64(L * S);
  const A = new F64(L * dv);
  const s = new F64(S);
  for (let i = 0; i < L; i++) {
    // 2. scores of query i against every key, scaled, plus masks
    for (let j = 0; j < S; j++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[i * d + c] * k[j * d + c];
      const a = add[i * S + j];
      s[j] = a === NEG_INF ? NEG_INF : dot * scale + a; // a masked key is out, even if dot is NaN
    }
    // 3a. row maximum (start at −∞; NaN if any score is NaN). A row that stays at −∞ is fully masked
    // (P and A rows stay zero) when a mask took out every key; when a key is left, its −∞ score came
    // from arithmetic, and exp(−∞ − (−∞)) makes the row NaN, as float64 (and PyTorch) have it.
    let m = NEG_INF;
    for (let j = 0; j < S; j++) if (s[j] > m || isNaNNumber(s[j])) m = isNaNNumber(m) ? m : s[j];
    let masked = true;
    for (let j = 0; j < S && masked; j++) masked = add[i * S + j] === NEG_INF;
    if (m === NEG_INF && masked) continue;
    // 3b. exponentials and their sum, 3c. normalise
    let sum = 0;
    for (let j = 0; j < S; j++) {
      const e = exp(s[j] - m);
      P[i * S + j] = e;
      sum += e;
    }
    for (let j = 0; j < S; j++) P[i * S + j] /= sum;
    // 4. weighted sum of the value rows of the keys not masked (p = 0 included: 0 · NaN is NaN)
    for (let j = 0; j < S; j++) {
      if (add[i * S + j] === NEG_INF) continue;
      const p = P[i * S + j];
      for (let c = 0; c < dv; c++) A[i * dv + c] += p * v[j * dv + c];
    }
  }
  return { P, A };
}

// ---------------------------------------------------------------- selfAttention

function selfAttention(args) {
  const batch = args.batch ?? 1;
  const L = args.seqLen;
  const D = args.dModel;
  const dK = args.wq.length / D;
  const dV = args.wv.length / D;
  const scale = args.scale ?? 1 / sqrt(dK);
  const needWeights = args.needWeights ?? true;
  const isCausal = args.isCausal ?? false;
  const mask = args.attnMask ?? null;

  // 1. project every token of every batch element
  const Q = linear(args.x, batch * L, D, args.wq, dK, args.bq);
  const K = linear(args.x, batch * L, D, args.wk, dK, args.bk);
  const V = linear(args.x, batch * L, D, args.wv, dV, args.bv);

  // the additive mask, shared by every batch element
  const add = new F64(L * L);
  if (isCausal) addCausal(add, L, L);
  if (mask) addMask(add, mask, 0, L, L, false);

  const output = new F64(batch * L * dV);
  const weights = needWeights ? new F64(batch * L * L) : null;
  for (let b = 0; b < batch; b++) {
    const q = slice(Q, b * L, L, dK, 0, dK);
    const k = slice(K, b * L, L, dK, 0, dK);
    const v = slice(V, b * L, L, dV, 0, dV);
    // 2–4. scores, softmax, weighted sum
    const { P, A } = attendOneHead(q, k, v, L, L, dK, dV, scale, add);
    output.set(A, b * L * dV);
    if (weights) weights.set(P, b * L * L);
  }
  return { output, weights };
}

// ---------------------------------------------------------------- multiHeadAttention

function multiHeadAttention(args) {
  const E = args.embedDim;
  const H = args.numHeads;
  const Hkv = args.numKvHeads ?? H;
  const hd = args.headDim ?? E / H;
  const qw = H * hd,
    kvw = Hkv * hd; // widths of Q and of K, V
  const batch = args.batch ?? 1;
  const kdim = args.kdim ?? E;
  const vdim = args.vdim ?? E;
  const query = args.query;
  const key = args.key ?? query;
  const value = args.value ?? key;
  const L = args.tgtLen ?? query.length / (batch * E);
  const S = args.srcLen ?? key.length / (batch * kdim);
  const scale = args.scale ?? 1 / sqrt(hd);
  const needWeights = args.needWeights ?? true;
  const average = args.averageAttnWeights ?? true;
  const isCausal = args.isCausal ?? false;
  const attnMask = args.attnMask ?? null;
  const kpm = args.keyPaddingMask ?? null;
  const offset = args.positionOffset ?? 0;
  const window = args.slidingWindow ?? 0;
  const rope = args.rope === true ? {} : args.rope || null;
  const slopes = args.alibi === true ? alibiSlopes(H) : args.alibi || null;

  // the in-projection: packed [3E, E] or three separate matrices
  let Wq, Wk, Wv;
  if (args.inProjWeight) {
    const W = args.inProjWeight;
    Wq = W.slice(0, E * E);
    Wk = W.slice(E * E, 2 * E * E);
    Wv = W.slice(2 * E * E, 3 * E * E);
  } else {
    Wq = args.qProjWeight;
    Wk = args.kProjWeight;
    Wv = args.vProjWeight;
  }
  let bq = args.qProjBias ?? null,
    bk = args.kProjBias ?? null,
    bv = args.vProjBias ?? null;
  if (args.inProjBias) {
    bq = args.inProjBias.slice(0, qw);
    bk = args.inProjBias.slice(qw, qw + kvw);
    bv = args.inProjBias.slice(qw + kvw, qw + 2 * kvw);
  }

  // 1. project (then rotate Q and K: query i of each batch element at offset + i, key j at j)
  const Q = linear(query, batch * L, E, Wq, qw, bq);
  const K = linear(key, batch * S, kdim, Wk, kvw, bk);
  const V = linear(value, batch * S, vdim, Wv, kvw, bv);
  if (rope) {
    rotate(Q, batch * L, H, hd, (r) => offset + (r % L), rope);
    rotate(K, batch * S, Hkv, hd, (r) => r % S, rope);
  }

  // a 3-D attnMask holds one [L, S] slice per (b, h), at b·H + h
  const mask3d = attnMask && attnMask.length === batch * H * L * S && batch * H > 1;

  const concat = new F64(batch * L * qw); // heads' results side by side
  const weights = needWeights ? new F64(average ? batch * L * S : batch * H * L * S) : null;

  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      const g = floor((h * Hkv) / H); // the K/V head of query head h
      // every additive mask of this (b, h): causal, window, attnMask, padding, then ALiBi
      const add = new F64(L * S);
      if (isCausal) addCausal(add, L, S, offset);
      if (window) addWindow(add, L, S, offset, window);
      if (attnMask) addMask(add, attnMask, mask3d ? (b * H + h) * L * S : 0, L, S, false);
      if (kpm) addMask(add, kpm, b * S, L, S, true);
      if (slopes) addAlibi(add, L, S, offset, slopes[h]);
      const q = slice(Q, b * L, L, qw, h * hd, hd);
      const k = slice(K, b * S, S, kvw, g * hd, hd);
      const v = slice(V, b * S, S, kvw, g * hd, hd);
      // 2–4. scores, softmax, weighted sum for this head
      const { P, A } = attendOneHead(q, k, v, L, S, hd, hd, scale, add);
      for (let i = 0; i < L; i++) {
        for (let c = 0; c < hd; c++) concat[(b * L + i) * qw + h * hd + c] = A[i * hd + c];
      }
      if (!weights) continue;
      if (average) {
        for (let t = 0; t < L * S; t++) weights[b * L * S + t] += P[t] / H;
      } else {
        weights.set(P, (b * H + h) * L * S);
      }
    }
  }

  // 5. output projection
  const output = linear(concat, batch * L, qw, args.outProjWeight, E, args.outProjBias);
  return { output, weights };
}

// ---------------------------------------------------------------- test utilities

/** mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Float32Array of n values uniform in [-scale, scale). */
function randomArray(rng, n, scale = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (rng() * 2 - 1) * scale;
  return a;
}

/** Flat index → "[i0, i1, …]" for the given dims (outermost first). */
function formatIndex(index, dims) {
  if (!dims) return String(index);
  const parts = [];
  let rest = index;
  for (let d = dims.length - 1; d >= 0; d--) {
    parts.unshift(rest % dims[d]);
    rest = floor(rest / dims[d]);
  }
  return `${index} = [${parts.join(', ')}] of [${dims.join(', ')}]`;
}

/**
 * Asserts |got − ref| ≤ atol + rtol·|ref| for every element (the contract's 1e-4 + 1e-4·|ref|).
 * A NaN in ref needs a NaN in got; equal infinities match. On failure throws an Error naming
 * the case label, the first bad index (as a multi-index when dims are given) and the values.
 */
function expectClose(got, ref, label, dims = null, atol = 1e-4, rtol = 1e-4) {
  if (got == null || typeof got.length !== 'number') {
    throw new Error(`${label}: expected an array of ${ref.length} values, got ${got}`);
  }
  if (got.length !== ref.length) {
    throw new Error(`${label}: length ${got.length}, expected ${ref.length}`);
  }
  let bad = 0,
    first = -1,
    worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const g = got[i],
      r = ref[i];
    let ok;
    if (isNaNNumber(r)) ok = isNaNNumber(g);
    else if (g === r) ok = true;
    else ok = abs(g - r) <= atol + rtol * abs(r);
    if (!ok) {
      if (first < 0) first = i;
      bad++;
      const err = abs(g - r);
      if (!(err <= worst)) worst = err;
    }
  }
  if (bad > 0) {
    throw new Error(
      `${label}: ${bad} of ${ref.length} elements out of tolerance (${atol} + ${rtol}·|ref|); ` +
        `first bad index ${formatIndex(first, dims)}: got ${got[first]}, expected ${ref[first]}; ` +
        `max |err| ${worst}`,
    );
  }
}

module.exports = {
  selfAttention,
  multiHeadAttention,
  linear,
  attendOneHead,
  addMask,
  addCausal,
  alibiSlopes,
  mulberry32,
  randomArray,
  expectClose,
  formatIndex,
};
