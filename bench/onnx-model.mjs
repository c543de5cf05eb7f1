// Builds small ONNX models in memory (a minimal protobuf writer, no dependencies) for the
// onnxruntime-web peer: multi-head self-attention with PyTorch nn.MultiheadAttention weights.
//   'contrib':  com.microsoft Attention (fused QKV projection + attention) → MatMul → Add
//   'standard': MatMul/Add, Slice, Reshape, Transpose, MatMul, Softmax, MatMul, … (ai.onnx 17)
// and a decoder layer with a KV cache: MatMul (Q, K, V) → com.microsoft GroupQueryAttention (past
// K/V in, present K/V out) → MatMul (buildGqaModel), its projections in float32 or as onnxruntime's
// quantize_dynamic writes them (int8 weights with a scale per output column, activations quantized
// per call: DynamicQuantizeLinear → MatMulInteger → Cast → Mul).

class Writer {
  constructor() {
    this.parts = [];
    this.len = 0;
  }
  bytes(u8) {
    this.parts.push(u8);
    this.len += u8.length;
  }
  varint(v) {
    v = BigInt(v);
    if (v < 0n) v += 1n << 64n; // int64 two's complement, 10 bytes
    const out = [];
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v) b |= 0x80;
      out.push(b);
    } while (v);
    this.bytes(Uint8Array.from(out));
  }
  key(field, wire) {
    this.varint((field << 3) | wire);
  }
  int(field, v) {
    this.key(field, 0);
    this.varint(v);
  }
  float(field, v) {
    this.key(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.bytes(b);
  }
  lenDelim(field, u8) {
    this.key(field, 2);
    this.varint(u8.length);
    this.bytes(u8);
  }
  string(field, s) {
    this.lenDelim(field, new TextEncoder().encode(s));
  }
  msg(field, fn) {
    const w = new Writer();
    fn(w);
    this.lenDelim(field, w.finish());
  }
  finish() {
    const out = new Uint8Array(this.len);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

const FLOAT = 1,
  INT8 = 3,
  INT32 = 6,
  INT64 = 7;

function tensor(w, field, name, dims, data, dataType = FLOAT) {
  w.msg(field, (t) => {
    for (const d of dims) t.int(1, d);
    t.int(2, dataType);
    t.string(8, name);
    const raw =
      dataType === FLOAT
        ? new Uint8Array(Float32Array.from(data).buffer)
        : dataType === INT8
          ? new Uint8Array(Int8Array.from(data).buffer)
          : new Uint8Array(BigInt64Array.from(data.map(BigInt)).buffer);
    t.lenDelim(9, raw);
  });
}

function valueInfo(w, field, name, dims, elemType = FLOAT) {
  w.msg(field, (v) => {
    v.string(1, name);
    v.msg(2, (tp) =>
      tp.msg(1, (tt) => {
        tt.int(1, elemType);
        tt.msg(2, (sh) => {
          for (const d of dims) sh.msg(1, (dim) => dim.int(1, d));
        });
      }),
    );
  });
}

function node(w, opType, inputs, outputs, attrs = {}, domain = '') {
  w.msg(1, (n) => {
    for (const i of inputs) n.string(1, i);
    for (const o of outputs) n.string(2, o);
    n.string(3, outputs[0] + '_node');
    n.string(4, opType);
    if (domain) n.string(7, domain);
    for (const [name, v] of Object.entries(attrs)) {
      n.msg(5, (a) => {
        a.string(1, name);
        if (Array.isArray(v)) {
          for (const x of v) a.int(8, x);
          a.int(20, 7);
        } else if (Number.isInteger(v)) {
          a.int(3, v);
          a.int(20, 2);
        } else {
          a.float(2, v);
          a.int(20, 1);
        }
      });
    }
  });
}

function transpose2d(w, rows, cols) {
  // [rows, cols] → [cols, rows]
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
  return t;
}

/**
 * @param {object} p  { n, d, h, inProjWeight [3d,d], inProjBias [3d], outProjWeight [d,d], outProjBias [d] }
 * @param {'contrib'|'standard'} kind
 * @returns {Uint8Array} ONNX model bytes; input 'x' [1, n, d], output 'y' [1, n, d]
 */
export function buildMhaModel(p, kind) {
  const { n, d, h } = p,
    hd = d / h;
  const winT = transpose2d(p.inProjWeight, 3 * d, d); // [d, 3d]
  const woT = transpose2d(p.outProjWeight, d, d); // [d, d]
  const graph = (g) => {
    if (kind === 'contrib') {
      node(g, 'Attention', ['x', 'w_in', 'b_in'], ['attn'], { num_heads: h }, 'com.microsoft');
      node(g, 'MatMul', ['attn', 'w_out'], ['proj']);
      node(g, 'Add', ['proj', 'b_out'], ['y']);
    } else {
      node(g, 'MatMul', ['x', 'w_in'], ['qkv0']);
      node(g, 'Add', ['qkv0', 'b_in'], ['qkv']); // [1, n, 3d]
      node(g, 'Reshape', ['qkv', 'shape_qkv'], ['qkv5']); // [n, 3, h, hd]
      node(g, 'Transpose', ['qkv5'], ['qkvT'], { perm: [1, 2, 0, 3] }); // [3, h, n, hd]
      node(g, 'Split', ['qkvT', 'split3'], ['q4', 'k4', 'v4'], { axis: 0 });
      node(g, 'Squeeze', ['q4', 'axis0'], ['q']); // [h, n, hd]
      node(g, 'Squeeze', ['k4', 'axis0'], ['k']);
      node(g, 'Squeeze', ['v4', 'axis0'], ['v']);
      node(g, 'Transpose', ['k'], ['kT'], { perm: [0, 2, 1] }); // [h, hd, n]
      node(g, 'Mul', ['q', 'scale'], ['qs']);
      node(g, 'MatMul', ['qs', 'kT'], ['scores']); // [h, n, n]
      node(g, 'Softmax', ['scores'], ['probs'], { axis: -1 });
      node(g, 'MatMul', ['probs', 'v'], ['ctx']); // [h, n, hd]
      node(g, 'Transpose', ['ctx'], ['ctxT'], { perm: [1, 0, 2] }); // [n, h, hd]
      node(g, 'Reshape', ['ctxT', 'shape_out'], ['attn']); // [1, n, d]
      node(g, 'MatMul', ['attn', 'w_out'], ['proj']);
      node(g, 'Add', ['proj', 'b_out'], ['y']);
      tensor(g, 5, 'shape_qkv', [4], [n, 3, h, hd], INT64);
      tensor(g, 5, 'split3', [3], [1, 1, 1], INT64);
      tensor(g, 5, 'axis0', [1], [0], INT64);
      tensor(g, 5, 'scale', [], [1 / Math.sqrt(hd)]);
      tensor(g, 5, 'shape_out', [3], [1, n, d], INT64);
    }
    g.string(2, 'mha');
    tensor(g, 5, 'w_in', [d, 3 * d], winT);
    tensor(g, 5, 'b_in', [3 * d], p.inProjBias);
    tensor(g, 5, 'w_out', [d, d], woT);
    tensor(g, 5, 'b_out', [d], p.outProjBias);
    valueInfo(g, 11, 'x', [1, n, d]);
    valueInfo(g, 12, 'y', [1, n, d]);
  };
  const m = new Writer();
  m.int(1, 8); // ir_version
  m.string(2, 'wasm-attention-bench');
  m.msg(7, graph);
  m.msg(8, (o) => {
    o.string(1, '');
    o.int(2, 17);
  });
  if (kind === 'contrib')
    m.msg(8, (o) => {
      o.string(1, 'com.microsoft');
      o.int(2, 1);
    });
  return m.finish();
}

/** x quantized per call to uint8 (x_q, x_scale, x_zp), once for every int8 product that reads it. */
function quantizeActivation(g, x) {
  node(g, 'DynamicQuantizeLinear', [x], [`${x}_q`, `${x}_scale`, `${x}_zp`]);
}

/**
 * y = x·Wᵀ with W [out, in] quantized as the contract's int8 rule (s = max|w_row| / 127, q rounded
 * half to even), in quantize_dynamic's nodes after quantizeActivation(x); onnxruntime fuses them
 * into DynamicQuantizeMatMul.
 */
function int8MatMul(g, x, name, w, out, inDim) {
  const q = new Int8Array(out * inDim),
    scales = new Float32Array(out);
  for (let o = 0; o < out; o++) {
    let max = 0;
    for (let i = 0; i < inDim; i++) max = Math.max(max, Math.abs(w[o * inDim + i]));
    const s = max > 0 ? Math.fround(max / 127) : 1;
    scales[o] = s;
    for (let i = 0; i < inDim; i++) {
      const v = w[o * inDim + i] / s,
        r = Math.round(v);
      q[i * out + o] = Math.max(-127, Math.min(127, r - v === 0.5 && r % 2 ? r - 1 : r)); // [in, out]
    }
  }
  node(g, 'MatMulInteger', [`${x}_q`, `${name}_q`, `${x}_zp`, `${name}_zp`], [`${name}_i32`]);
  node(g, 'Cast', [`${name}_i32`], [`${name}_f32`], { to: FLOAT });
  node(g, 'Mul', [`${x}_scale`, `${name}_scale`], [`${name}_scales`]);
  node(g, 'Mul', [`${name}_f32`, `${name}_scales`], [name]);
  tensor(g, 5, `${name}_q`, [inDim, out], q, INT8);
  tensor(g, 5, `${name}_zp`, [out], new Int8Array(out), INT8);
  tensor(g, 5, `${name}_scale`, [out], scales);
}

/**
 * A decoder layer's step with a KV cache, for `tokens` new tokens after `past` cached ones.
 * @param {object} p  { d, h, kvHeads, headDim, wq [h·hd, d], wk, wv [kvHeads·hd, d], wo [d, h·hd] }
 * @returns {Uint8Array} inputs x [1, tokens, d], past_key / past_value [1, kvHeads, past, hd],
 *   seqlens_k int32 [1] (= past + tokens − 1), total_sequence_length int32 []; output y [1, tokens, d]
 */
// localWindow: GroupQueryAttention's local_window_size (a sliding window; bench/long.mjs); weights:
// 'f32' or 'int8', how the four projections are stored.
export function buildGqaModel(p, tokens, past, { localWindow, weights = 'f32' } = {}) {
  const { d, h, kvHeads, headDim: hd } = p;
  const int8 = weights === 'int8';
  const graph = (g) => {
    if (int8) {
      quantizeActivation(g, 'x');
      int8MatMul(g, 'x', 'q', p.wq, h * hd, d);
      int8MatMul(g, 'x', 'k', p.wk, kvHeads * hd, d);
      int8MatMul(g, 'x', 'v', p.wv, kvHeads * hd, d);
    } else {
      node(g, 'MatMul', ['x', 'w_q'], ['q']);
      node(g, 'MatMul', ['x', 'w_k'], ['k']);
      node(g, 'MatMul', ['x', 'w_v'], ['v']);
    }
    node(
      g,
      'GroupQueryAttention',
      ['q', 'k', 'v', 'past_key', 'past_value', 'seqlens_k', 'total_sequence_length'],
      ['attn', 'present_key', 'present_value'],
      { num_heads: h, kv_num_heads: kvHeads, ...(localWindow ? { local_window_size: localWindow } : {}) },
      'com.microsoft',
    );
    g.string(2, 'gqa');
    if (int8) {
      quantizeActivation(g, 'attn');
      int8MatMul(g, 'attn', 'y', p.wo, d, h * hd);
    } else {
      node(g, 'MatMul', ['attn', 'w_o'], ['y']);
      tensor(g, 5, 'w_q', [d, h * hd], transpose2d(p.wq, h * hd, d));
      tensor(g, 5, 'w_k', [d, kvHeads * hd], transpose2d(p.wk, kvHeads * hd, d));
      tensor(g, 5, 'w_v', [d, kvHeads * hd], transpose2d(p.wv, kvHeads * hd, d));
      tensor(g, 5, 'w_o', [h * hd, d], transpose2d(p.wo, d, h * hd));
    }
    valueInfo(g, 11, 'x', [1, tokens, d]);
    valueInfo(g, 11, 'past_key', [1, kvHeads, past, hd]);
    valueInfo(g, 11, 'past_value', [1, kvHeads, past, hd]);
    valueInfo(g, 11, 'seqlens_k', [1], INT32);
    valueInfo(g, 11, 'total_sequence_length', [], INT32);
    valueInfo(g, 12, 'y', [1, tokens, d]);
  };
  const m = new Writer();
  m.int(1, 8);
  m.string(2, 'wasm-attention-bench');
  m.msg(7, graph);
  m.msg(8, (o) => {
    o.string(1, '');
    o.int(2, 17);
  });
  m.msg(8, (o) => {
    o.string(1, 'com.microsoft');
    o.int(2, 1);
  });
  return m.finish();
}
