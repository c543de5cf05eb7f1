'use strict';
// Prepared attention layers with reduced weights (weightDtype 'f16', 'bf16', 'int8'; docs/API.md,
// "Reduced precision"): forwards of few rows (a decode step: weights read as stored) and of many rows
// (prefill: widened a panel at a time), with and without a KV cache, against a float64 evaluation
// that uses the stored (rounded or quantized) weights, computed by tests/js/reduced-weights-stored.js;
// the same bits as an f32 layer made from those stored values, at 1 and 2 threads and on the scalar
// build; the weights' bytes; the errors for a bad weightDtype.
const ref = require('./reference');
const { useEngines } = require('./engines');
const { storedWeight } = require('./reduced-weights-stored');

const engines = useEngines([1, 2, 'scalar']);

const DTYPES = ['f16', 'bf16', 'int8'];
const E = 64,
  H = 4,
  KV = 2,
  HD = 16;

// A grouped-query layer with RoPE and biases; weights of both signs with a zero row (int8's scale 1)
// and a row whose max is large (its small entries quantize to 0).
function layerWeights(seed) {
  const rng = ref.mulberry32(seed);
  const w = (out, inF) => {
    const a = ref.randomArray(rng, out * inF, 1 / Math.sqrt(inF));
    a.fill(0, 0, inF); // output row 0: all zeros
    a[inF + 3] = 5; // output row 1: one large weight
    return a;
  };
  return {
    qProjWeight: w(H * HD, E),
    kProjWeight: w(KV * HD, E),
    vProjWeight: w(KV * HD, E),
    outProjWeight: w(E, H * HD),
    qProjBias: ref.randomArray(rng, H * HD, 0.1),
    kProjBias: ref.randomArray(rng, KV * HD, 0.1),
    vProjBias: ref.randomArray(rng, KV * HD, 0.1),
    outProjBias: ref.randomArray(rng, E, 0.1),
  };
}

const SHAPE = { embedDim: E, numHeads: H, numKvHeads: KV, headDim: HD, rope: true };
const MATRICES = {
  qProjWeight: [H * HD, E],
  kProjWeight: [KV * HD, E],
  vProjWeight: [KV * HD, E],
  outProjWeight: [E, H * HD],
};

// The weights as `dtype` stores them: exact (float64 reference) or as the engine's float32 values.
function stored(weights, dtype, exact) {
  const out = { ...weights };
  for (const [name, [o, i]] of Object.entries(MATRICES)) {
    const s = storedWeight(weights[name], o, i, dtype, 'out,in', exact);
    out[name] = exact ? s : Float32Array.from(s);
  }
  return out;
}

const bitsEqual = (a, b, label) => {
  expect([label, a.length]).toEqual([label, b.length]);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++)
    if (ua[i] !== ub[i]) throw new Error(`${label}: bits differ at ${i}: ${a[i]} vs ${b[i]}`);
};

const rowsOf = (x, t0, n) => x.subarray(t0 * E, (t0 + n) * E);

describe.each(DTYPES)('weightDtype %s', (dtype) => {
  const weights = layerWeights(19);
  const exact = stored(weights, dtype, true);
  const twinWeights = stored(weights, dtype, false);

  test.each([1, 3, 4, 5, 24])('%i rows without a cache: the float64 evaluation of the stored weights', (T) => {
    const query = ref.randomArray(ref.mulberry32(T), T * E);
    const want = ref.multiHeadAttention({ ...SHAPE, ...exact, query, isCausal: true, needWeights: false }).output;
    const outputs = [];
    for (const attn of [engines[1], engines[2], engines.scalar]) {
      const layer = attn.createMultiHeadAttention({ ...SHAPE, ...weights, weightDtype: dtype });
      const twin = attn.createMultiHeadAttention({ ...SHAPE, ...twinWeights });
      const got = layer.forward({ query, isCausal: true, needWeights: false }).output;
      ref.expectClose(got, want, `${dtype} T=${T}`);
      // int8 sums the integers q and scales the sum: near the twin of q·s, not its bits.
      if (dtype !== 'int8') {
        bitsEqual(
          got,
          twin.forward({ query, isCausal: true, needWeights: false }).output,
          `${dtype} T=${T} vs f32 twin`,
        );
      }
      outputs.push(got);
      layer.dispose();
      twin.dispose();
    }
    bitsEqual(outputs[0], outputs[1], `${dtype} T=${T}: 1 vs 2 threads`);
  });

  test('a cache fed a prompt of 20 then steps of 1, 2 and 4 tokens (decode) and 9 (prefill)', () => {
    const T = 36;
    const query = ref.randomArray(ref.mulberry32(5), T * E);
    const want = ref.multiHeadAttention({ ...SHAPE, ...exact, query, isCausal: true, needWeights: false }).output;
    const outputs = [];
    for (const attn of [engines[1], engines[2]]) {
      const layer = attn.createMultiHeadAttention({ ...SHAPE, ...weights, weightDtype: dtype });
      const cache = layer.createKvCache({ maxLength: 40 });
      const got = new Float32Array(T * E);
      let t0 = 0;
      for (const n of [20, 1, 2, 4, 9]) {
        const out = layer.forward({ query: rowsOf(query, t0, n), cache, isCausal: true }).output;
        got.set(out, t0 * E);
        t0 += n;
      }
      ref.expectClose(got, want, `${dtype} cached`);
      outputs.push(got);
      cache.dispose();
      layer.dispose();
    }
    bitsEqual(outputs[0], outputs[1], `${dtype} cached: 1 vs 2 threads`);
  });

  test('createSelfAttention stores its weights reduced too', () => {
    const dModel = 24,
      d = 8;
    const rng = ref.mulberry32(3);
    const [wq, wk, wv] = [0, 1, 2].map(() => ref.randomArray(rng, d * dModel, 0.3));
    const query = ref.randomArray(rng, 6 * dModel);
    const st = (w) => storedWeight(w, d, dModel, dtype, 'out,in', true);
    const want = ref.selfAttention({
      dModel,
      wq: st(wq),
      wk: st(wk),
      wv: st(wv),
      x: query,
      seqLen: 6,
      needWeights: false,
    }).output;
    const layer = engines[1].createSelfAttention({ dModel, wq, wk, wv, weightDtype: dtype });
    ref.expectClose(layer.forward({ x: query, seqLen: 6, needWeights: false }).output, want, `${dtype} selfAttention`);
    layer.dispose();
  });
});

test('the heap a prepared layer holds: ≤ 0.55× of f32 for f16 and bf16, ≤ 0.3× for int8', () => {
  const attn = engines[1];
  const wide = 256;
  const rng = ref.mulberry32(9);
  const args = {
    embedDim: wide,
    numHeads: 4,
    inProjWeight: ref.randomArray(rng, 3 * wide * wide, 0.1),
    outProjWeight: ref.randomArray(rng, wide * wide, 0.1),
  };
  const held = (weightDtype) => {
    const before = attn.memoryStats().heapInUse;
    const layer = attn.createMultiHeadAttention({ ...args, weightDtype });
    const bytes = attn.memoryStats().heapInUse - before;
    layer.dispose();
    return bytes;
  };
  const f32 = held('f32');
  expect(f32).toBeGreaterThanOrEqual(4 * wide * wide * 4);
  for (const dtype of ['f16', 'bf16']) expect(held(dtype)).toBeLessThanOrEqual(0.55 * f32);
  expect(held('int8')).toBeLessThanOrEqual(0.3 * f32);
});

test('weightDtype: a TypeError for a non-string, a RangeError for another string, a repeat must agree', () => {
  const attn = engines[1];
  const args = { ...SHAPE, ...layerWeights(1) };
  expect(() => attn.createMultiHeadAttention({ ...args, weightDtype: 16 })).toThrow(
    new TypeError("createMultiHeadAttention: weightDtype must be 'f32', 'f16', 'bf16' or 'int8', got number 16"),
  );
  expect(() => attn.createMultiHeadAttention({ ...args, weightDtype: 'fp16' })).toThrow(
    new RangeError("createMultiHeadAttention: weightDtype must be 'f32', 'f16', 'bf16' or 'int8', got \"fp16\""),
  );
  expect(() =>
    attn.createSelfAttention({
      dModel: 4,
      wq: new Float32Array(16),
      wk: new Float32Array(16),
      wv: new Float32Array(16),
      weightDtype: null,
    }),
  ).toThrow(TypeError);
  const layer = attn.createMultiHeadAttention({ ...args, weightDtype: 'int8' });
  const query = new Float32Array(2 * E);
  expect(layer.forward({ query, weightDtype: 'int8' }).output).toHaveLength(2 * E);
  expect(() => layer.forward({ query, weightDtype: 'f16' })).toThrow(
    /weightDtype must be 'int8' as when the layer was created, got 'f16'/,
  );
  layer.dispose();
  // One-shot calls take no weightDtype: nothing is kept to store.
  expect(() => attn.multiHeadAttention({ ...args, query, weightDtype: 'f16' })).toThrow(/unknown|weightDtype/);
});
