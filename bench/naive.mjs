// Naive JavaScript multi-head self-attention (plain loops over Float32Array), PyTorch
// nn.MultiheadAttention semantics with batch 1, query = key = value, no mask:
//   Q|K|V = x·inProjWeightᵀ + inProjBias, per head softmax(Q·Kᵀ·scale)·V, concat, ·outProjWeightᵀ + outProjBias.

function linear(x, rows, inDim, w, wRowOffset, outDim, b, bOffset, out) {
  for (let i = 0; i < rows; i++) {
    const xo = i * inDim;
    for (let j = 0; j < outDim; j++) {
      const wo = (wRowOffset + j) * inDim;
      let s = b ? b[bOffset + j] : 0;
      for (let t = 0; t < inDim; t++) s += x[xo + t] * w[wo + t];
      out[i * outDim + j] = s;
    }
  }
  return out;
}

/** @returns {Float32Array} output [n, d] */
export function naiveMha({ query, n, embedDim: d, numHeads: h, inProjWeight, inProjBias, outProjWeight, outProjBias }) {
  const hd = d / h,
    scale = 1 / Math.sqrt(hd);
  const q = linear(query, n, d, inProjWeight, 0, d, inProjBias, 0, new Float32Array(n * d));
  const k = linear(query, n, d, inProjWeight, d, d, inProjBias, d, new Float32Array(n * d));
  const v = linear(query, n, d, inProjWeight, 2 * d, d, inProjBias, 2 * d, new Float32Array(n * d));
  const ctx = new Float32Array(n * d);
  const row = new Float32Array(n);
  for (let hh = 0; hh < h; hh++) {
    const c0 = hh * hd;
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let t = 0; t < hd; t++) s += q[i * d + c0 + t] * k[j * d + c0 + t];
        s *= scale;
        row[j] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const e = Math.exp(row[j] - max);
        row[j] = e;
        sum += e;
      }
      const inv = 1 / sum;
      for (let t = 0; t < hd; t++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += row[j] * v[j * d + c0 + t];
        ctx[i * d + c0 + t] = s * inv;
      }
    }
  }
  return linear(ctx, n, d, outProjWeight, 0, d, outProjBias, 0, new Float32Array(n * d));
}
