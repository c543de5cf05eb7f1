'use strict';
// A float64 evaluation, in plain loops, of the pieces of a checkpoint that model.forward's hidden
// states pass through: the embedding rows, one layer (pre-norm: llama, mistral, qwen2, gpt2;
// post-norm: bert) and the final norm, read from lib/model/checkpoint.mjs's plan (tensors as
// stored, F16/BF16 widened). Written from transformers' modeling code, as the fixtures' Python
// references are (scripts/model_references.py), so a hidden state can be checked one layer at a time.
const { modelModules } = require('./model-modules');

const { ropeInverseFrequencies } = modelModules();

/**
 * erf(x), which transformers' exact gelu needs and Math lacks: its Taylor series below |x| = 2.5,
 * above it 1 − erfc(x) from erfc's continued fraction (the series would cancel there); both to
 * about 1e-15.
 */
function erf(x) {
  const a = Math.abs(x);
  if (a > 2.5) {
    let f = a;
    for (let n = 80; n >= 1; n--) f = a + n / 2 / f;
    return Math.sign(x) * (1 - Math.exp(-a * a) / (Math.sqrt(Math.PI) * f));
  }
  let term = x;
  let sum = x;
  for (let n = 1; Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

const ACTIVATIONS = {
  silu: (x) => x / (1 + Math.exp(-x)),
  gelu_tanh: (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))),
  gelu_erf: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)),
};

/** y[rows, out] = x[rows, in]·Wᵀ + b, W stored [out, in] (nn.Linear) or [in, out] (Conv1D). */
function linear(t, x, rows) {
  const [a, b] = t.weight.shape;
  const [outF, inF] = t.layout === 'in,out' ? [b, a] : [a, b];
  const w = t.weight.data;
  const at = t.layout === 'in,out' ? (o, i) => w[i * outF + o] : (o, i) => w[o * inF + i];
  const y = new Float64Array(rows * outF);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outF; o++) {
      let s = t.bias ? t.bias.data[o] : 0;
      for (let i = 0; i < inF; i++) s += x[r * inF + i] * at(o, i);
      y[r * outF + o] = s;
    }
  }
  return y;
}

/** RMSNorm or LayerNorm of every row of x [rows, E], as config.norm says. */
function norm(config, n, x, rows) {
  const E = config.hiddenSize;
  const y = new Float64Array(rows * E);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * E, (r + 1) * E);
    const mean = config.norm.kind === 'layer' ? row.reduce((s, v) => s + v, 0) / E : 0;
    const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / E;
    const inv = 1 / Math.sqrt(variance + config.norm.eps);
    for (let i = 0; i < E; i++) y[r * E + i] = (row[i] - mean) * inv * n.weight.data[i] + (n.bias ? n.bias.data[i] : 0);
  }
  return y;
}

/** Rotates the pairs (i, i + dim/2) of each head's first rope.dim entries by position · invFreq[i]. */
function rope(config, m, rows, heads) {
  const D = config.headDim;
  const freq = ropeInverseFrequencies(config.rope);
  const half = config.rope.dim / 2;
  for (let t = 0; t < rows; t++) {
    for (let n = 0; n < heads; n++) {
      const base = (t * heads + n) * D;
      for (let p = 0; p < half; p++) {
        const phi = t * freq[p];
        const [a, b] = [m[base + p], m[base + p + half]];
        m[base + p] = a * Math.cos(phi) - b * Math.sin(phi);
        m[base + p + half] = b * Math.cos(phi) + a * Math.sin(phi);
      }
    }
  }
}

/**
 * Attention of layer l over x [T, E] (positions 0 … T − 1), before the output projection: [T, H·D].
 * roundKv: null, or how a reduced KV cache stores each K (after RoPE) and V value.
 */
function attend(config, layer, l, x, T, roundKv = null) {
  const { numHeads: H, numKvHeads: KV, headDim: D, hiddenSize: E } = config;
  let q, k, v;
  if (layer.qkv) {
    const qkv = linear(layer.qkv, x, T); // GPT-2's fused c_attn: q | k | v along its output
    [q, k, v] = [0, 1, 2].map((part) => {
      const m = new Float64Array(T * E);
      for (let t = 0; t < T; t++) m.set(qkv.subarray(t * 3 * E + part * E, t * 3 * E + (part + 1) * E), t * E);
      return m;
    });
  } else {
    [q, k, v] = [layer.q, layer.k, layer.v].map((t) => linear(t, x, T));
  }
  if (config.positions === 'rope') {
    rope(config, q, T, H);
    rope(config, k, T, KV);
  }
  if (roundKv) [k, v] = [k.map(roundKv), v.map(roundKv)];
  const window = config.layerWindows[l];
  const out = new Float64Array(T * H * D);
  for (let n = 0; n < H; n++) {
    const g = Math.floor(n / (H / KV));
    for (let i = 0; i < T; i++) {
      const seen = (j) => !(config.causal && j > i) && !(window !== null && i - j >= window);
      const s = Array.from({ length: T }, (_, j) => {
        if (!seen(j)) return -Infinity;
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[(i * H + n) * D + d] * k[(j * KV + g) * D + d];
        return dot * config.attentionScale;
      });
      const max = Math.max(...s);
      const e = s.map((x) => (x === -Infinity ? 0 : Math.exp(x - max)));
      const sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < T; j++)
        for (let d = 0; d < D; d++) out[(i * H + n) * D + d] += (e[j] / sum) * v[(j * KV + g) * D + d];
    }
  }
  return out;
}

function mlp(config, layer, h, T) {
  const act = ACTIVATIONS[config.activation];
  const inner = linear(layer.up, h, T);
  if (config.mlp === 'gated') {
    const gate = linear(layer.gate, h, T);
    for (let i = 0; i < inner.length; i++) inner[i] *= act(gate[i]);
  } else {
    for (let i = 0; i < inner.length; i++) inner[i] = act(inner[i]);
  }
  return linear(layer.down, inner, T);
}

const added = (x, y) => x.map((v, i) => v + y[i]);

/**
 * Layer l of the plan over its input x [T, E] (any float array) → its output [T, E] in float64.
 * roundKv: null, or the rounding of a reduced KV cache's K and V (see attend).
 */
function layerForward(plan, l, x, T, roundKv = null) {
  const { config } = plan;
  const layer = plan.layers[l];
  const input = Float64Array.from(x);
  if (config.norm.placement === 'post') {
    const a = norm(
      config,
      layer.attentionNorm,
      added(input, linear(layer.o, attend(config, layer, l, input, T, roundKv), T)),
      T,
    );
    return norm(config, layer.outputNorm, added(a, mlp(config, layer, a, T)), T);
  }
  const h = norm(config, layer.inputNorm, input, T);
  const a = added(input, linear(layer.o, attend(config, layer, l, h, T, roundKv), T));
  return added(a, mlp(config, layer, norm(config, layer.postAttentionNorm, a, T), T));
}

/** The final norm (decoders), or the rows as they are (bert has none). */
function finalNorm(plan, x, T) {
  return plan.finalNorm ? norm(plan.config, plan.finalNorm, Float64Array.from(x), T) : Float64Array.from(x);
}

/**
 * The embedding rows of ids as the engine adds them, in float32 and in transformers' order (token,
 * + token type, + learned position), then bert's LayerNorm in float64: { sum (Float32Array), normed
 * (Float64Array, or null without an embedding norm) }.
 */
function embeddingRows(plan, ids, tokenTypeIds = null) {
  const { config, embeddings: e } = plan;
  const E = config.hiddenSize;
  const T = ids.length;
  const sum = new Float32Array(T * E);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < E; i++) {
      let v = e.tokens.data[ids[t] * E + i];
      if (e.tokenTypes) v = Math.fround(v + e.tokenTypes.data[(tokenTypeIds ? tokenTypeIds[t] : 0) * E + i]);
      if (e.positions) v = Math.fround(v + e.positions.data[t * E + i]);
      sum[t * E + i] = v;
    }
  }
  return { sum, normed: e.norm ? norm(config, e.norm, Float64Array.from(sum), T) : null };
}

module.exports = { layerForward, finalNorm, embeddingRows, erf };
