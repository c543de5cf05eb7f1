// The model's dense arithmetic in plain JavaScript over Float32Array: embedding rows, RMSNorm,
// nn.Linear without bias, the SwiGLU MLP. Matrices are row-major, weights in nn.Linear's layout
// [out, in], so every output is one contiguous dot product (the cache-friendly order for a
// weight that is read once per token). Sums run in JavaScript numbers (float64): the float32
// rounding happens once per stored value, as close to the float64 reference as float32 storage allows.

/** Rows `ids` of a [vocab, dim] table → [ids.length, dim]. */
export function embedRows(table, dim, ids) {
  const out = new Float32Array(ids.length * dim);
  for (let r = 0; r < ids.length; r++) out.set(table.subarray(ids[r] * dim, (ids[r] + 1) * dim), r * dim);
  return out;
}

/** x [rows, dim] → x · rsqrt(mean(x²) + eps) · weight, row by row (LLaMA's RMSNorm). */
export function rmsNorm(x, rows, dim, weight, eps) {
  const out = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    const base = r * dim;
    let sumSq = 0;
    for (let i = 0; i < dim; i++) sumSq += x[base + i] * x[base + i];
    const inv = 1 / Math.sqrt(sumSq / dim + eps);
    for (let i = 0; i < dim; i++) out[base + i] = x[base + i] * inv * weight[i];
  }
  return out;
}

/** x [rows, inDim] · Wᵀ with W [outDim, inDim] → [rows, outDim]. */
export function linear(x, rows, inDim, w, outDim) {
  const out = new Float32Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    const xr = r * inDim;
    const yr = r * outDim;
    let o = 0;
    // Four outputs per pass over x: each x[i] is loaded once for four weight rows (about twice
    // as fast as one row at a time in V8).
    for (; o + 4 <= outDim; o += 4) {
      const w0 = o * inDim,
        w1 = w0 + inDim,
        w2 = w1 + inDim,
        w3 = w2 + inDim;
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      for (let i = 0; i < inDim; i++) {
        const xi = x[xr + i];
        s0 += xi * w[w0 + i];
        s1 += xi * w[w1 + i];
        s2 += xi * w[w2 + i];
        s3 += xi * w[w3 + i];
      }
      out[yr + o] = s0;
      out[yr + o + 1] = s1;
      out[yr + o + 2] = s2;
      out[yr + o + 3] = s3;
    }
    for (; o < outDim; o++) {
      const wo = o * inDim;
      let s = 0;
      for (let i = 0; i < inDim; i++) s += x[xr + i] * w[wo + i];
      out[yr + o] = s;
    }
  }
  return out;
}

/** down(silu(gate(x)) · up(x)): the SwiGLU MLP of LLaMA, no biases. */
export function swiglu(x, rows, dim, { gate, up, down }, hidden) {
  const g = linear(x, rows, dim, gate, hidden);
  const u = linear(x, rows, dim, up, hidden);
  for (let i = 0; i < g.length; i++) g[i] = (g[i] / (1 + Math.exp(-g[i]))) * u[i];
  return linear(g, rows, hidden, down, dim);
}

/** x += y, elementwise (the residual stream). */
export function addInPlace(x, y) {
  for (let i = 0; i < x.length; i++) x[i] += y[i];
}
