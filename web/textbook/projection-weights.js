// The textbook's projection weights, in nn.Linear's layout [out, in] (y = x · Wᵀ).
//
// 'random'   — Xavier-uniform, as PyTorch initialises nn.MultiheadAttention's in_proj:
//              U(−a, a) with a = sqrt(6 / (fan_in + fan_out)). Every matrix has its own
//              stream (seed, label), so changing d_model or heads never reshuffles the others.
// 'identity' — Q and K are g·I: a query compares the raw embeddings, so a token scores
//              highest against itself and against every other copy of itself. The gain g
//              makes a token's match with itself worth about MATCH_LOGIT after the
//              1/sqrt(dK) scaling: g² · dK / sqrt(dK) = MATCH_LOGIT. V and the output
//              projection stay random.
import { rngFor } from '../shared/random.js';

export const PRESETS = ['random', 'identity'];
export const MATCH_LOGIT = 6;

/** A Xavier-uniform [rows, cols] matrix from the stream (seed, label). */
export function xavierUniform(rows, cols, seed, label) {
  const rng = rngFor(seed, label);
  const a = Math.sqrt(6 / (rows + cols));
  const w = new Float32Array(rows * cols);
  for (let i = 0; i < w.length; i++) w[i] = (2 * rng() - 1) * a;
  return w;
}

/** g·I of size n × n. */
export function scaledIdentity(n, gain) {
  const w = new Float32Array(n * n);
  for (let i = 0; i < n; i++) w[i * n + i] = gain;
  return w;
}

/** The gain for which a token's self-match scores about MATCH_LOGIT with keys of width dK. */
export function identityGain(dK) {
  return Math.sqrt(MATCH_LOGIT / Math.sqrt(dK));
}

function checkPreset(preset) {
  if (!PRESETS.includes(preset))
    throw new RangeError(`weights: preset must be one of ${PRESETS.join(', ')}, got ${preset}`);
}

/** Single-head self-attention weights: { wq, wk, wv }, each [dModel, dModel] (dK = dV = dModel). */
export function selfAttentionWeights({ dModel, seed, preset = 'random' }) {
  checkPreset(preset);
  const wv = xavierUniform(dModel, dModel, seed, 'self.wv');
  if (preset === 'identity') {
    const g = identityGain(dModel);
    return { wq: scaledIdentity(dModel, g), wk: scaledIdentity(dModel, g), wv };
  }
  return {
    wq: xavierUniform(dModel, dModel, seed, 'self.wq'),
    wk: xavierUniform(dModel, dModel, seed, 'self.wk'),
    wv,
  };
}

/**
 * nn.MultiheadAttention weights: { inProjWeight [3E, E] (rows Q, K, V), outProjWeight [E, E] }.
 * The Q and K blocks are Xavier-uniform over the whole [3E, E] matrix, as PyTorch does.
 */
export function multiHeadWeights({ embedDim, numHeads, seed, preset = 'random' }) {
  checkPreset(preset);
  const E = embedDim;
  const inProjWeight = xavierUniform(3 * E, E, seed, 'mha.in_proj');
  if (preset === 'identity') {
    const headDim = Number.isInteger(E / numHeads) && numHeads > 0 ? E / numHeads : E;
    const g = identityGain(headDim);
    inProjWeight.fill(0, 0, 2 * E * E);
    for (let i = 0; i < E; i++) {
      inProjWeight[i * E + i] = g; // Q block
      inProjWeight[(E + i) * E + i] = g; // K block
    }
  }
  const outProjWeight = xavierUniform(E, E, seed, 'mha.out_proj');
  return { inProjWeight, outProjWeight };
}
