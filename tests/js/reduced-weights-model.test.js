'use strict';
// Models with reduced weights (loadModel's dtype 'f16', 'bf16', 'int8'; createModel underneath):
// every committed fixture checkpoint, its linear layers (and an untied head) stored reduced, against a
// float64 evaluation of the stored weights (tests/js/model-layer-reference.js over a plan whose
// converted matrices hold the values tests/js/reduced-weights-stored.js computes); the same bits as an
// f32 model of those stored values, at 1 and 2 threads and on the scalar build; a cached decode step;
// the weight bytes of each dtype.
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');
const { useEngines } = require('./engines');
const { randomLlama } = require('./random-checkpoint');
const { layerForward, finalNorm, embeddingRows } = require('./model-layer-reference');
const { storedWeight } = require('./reduced-weights-stored');

const { createModel, engineOf } = require('../../dist/create.cjs');

const { readModelConfig, planCheckpoint, readShardedCheckpoint } = modelModules();
const engines = useEngines([1, 2, 'scalar']);

const DTYPES = ['f16', 'bf16', 'int8'];

function fixturePlan(name) {
  const f = loadFixture(name);
  const weights = f.index ? readShardedCheckpoint(f.index, f.files) : f.files['model.safetensors'];
  return planCheckpoint(readModelConfig(f.config), weights);
}

// A linear entry { weight, bias, layout } with its weight as `dtype` stores it.
function storedLinear(t, dtype, exact) {
  const [a, b] = t.weight.shape;
  const [outF, inF] = t.layout === 'in,out' ? [b, a] : [a, b];
  const s = storedWeight(t.weight.data, outF, inF, dtype, t.layout, exact);
  return { ...t, weight: { ...t.weight, data: exact ? s : Float32Array.from(s) } };
}

// The plan with every converted matrix as stored: each layer's linear entries, an untied head, BERT's
// head transform; embeddings, a tied head, norms and biases as they were.
function storedPlan(plan, dtype, exact) {
  const layers = plan.layers.map((layer) => {
    const out = { ...layer };
    for (const [key, t] of Object.entries(layer)) if (t && t.layout) out[key] = storedLinear(t, dtype, exact);
    return out;
  });
  let lmHead = plan.lmHead;
  if (lmHead) {
    lmHead = { ...lmHead };
    if (!lmHead.tied) lmHead.weight = storedLinear({ weight: lmHead.weight, layout: 'out,in' }, dtype, exact).weight;
    if (lmHead.transform)
      lmHead.transform = { ...lmHead.transform, dense: storedLinear(lmHead.transform.dense, dtype, exact) };
  }
  return { ...plan, layers, lmHead };
}

// hidden [T, E] after the final norm (BERT: the last layer's output) in float64, and a decoder's logits.
function reference(plan, ids) {
  const T = ids.length;
  const e = embeddingRows(plan, ids);
  let x = e.normed ?? Float64Array.from(e.sum);
  for (let l = 0; l < plan.layers.length; l++) x = layerForward(plan, l, x, T);
  const hidden = finalNorm(plan, x, T);
  if (!plan.lmHead || plan.lmHead.transform) return { hidden, logits: null };
  const { hiddenSize: E, vocabSize: V } = plan.config;
  const w = plan.lmHead.weight.data;
  const logits = new Float64Array(T * V);
  for (let t = 0; t < T; t++)
    for (let v = 0; v < V; v++) {
      let s = 0;
      for (let i = 0; i < E; i++) s += hidden[t * E + i] * w[v * E + i];
      logits[t * V + v] = s;
    }
  return { hidden, logits };
}

function expectClose(got, ref, label) {
  expect([label, got.length]).toEqual([label, ref.length]);
  for (let i = 0; i < ref.length; i++) {
    if (!(Math.abs(got[i] - ref[i]) <= 1e-4 + 1e-4 * Math.abs(ref[i]))) {
      throw new Error(`${label}: index ${i} got ${got[i]}, expected ${ref[i]}`);
    }
  }
}

const bitsEqual = (a, b, label) => {
  expect([label, a.length]).toEqual([label, b.length]);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++)
    if (ua[i] !== ub[i]) throw new Error(`${label}: bits differ at ${i}: ${a[i]} vs ${b[i]}`);
};

const idsFor = (plan, T) => Int32Array.from({ length: T }, (_, t) => (t * 7 + 3) % plan.config.vocabSize);

describe.each(fixtureNames())('%s', (name) => {
  const plan = fixturePlan(name);
  const decoder = plan.config.causal;

  test.each(DTYPES)(
    'dtype %s: float64 of the stored weights; f16/bf16 the bits of an f32 twin; any thread count',
    (dtype) => {
      const ids = idsFor(plan, 7);
      const want = reference(storedPlan(plan, dtype, true), ids);
      const twinPlan = storedPlan(plan, dtype, false);
      const results = [];
      for (const attn of [engines[1], engines[2], engines.scalar]) {
        const engine = engineOf(attn);
        const model = createModel(engine, plan, { dtype });
        const twin = createModel(engine, twinPlan, { dtype: 'f32' });
        const got = model.forward(ids, { logits: 'all' });
        expectClose(got.hidden, want.hidden, `${name} ${dtype} hidden`);
        if (want.logits) expectClose(got.logits, want.logits, `${name} ${dtype} logits`);
        const same = twin.forward(ids, { logits: 'all' });
        // int8 sums the integers q and scales the sum: near the twin of q·s, not its bits.
        if (dtype !== 'int8') {
          bitsEqual(got.hidden, same.hidden, `${name} ${dtype} hidden vs f32 twin`);
          if (got.logits) bitsEqual(got.logits, same.logits, `${name} ${dtype} logits vs f32 twin`);
        }
        results.push(got);
        model.dispose();
        twin.dispose();
      }
      bitsEqual(results[0].hidden, results[1].hidden, `${name} ${dtype}: 1 vs 2 threads`);
      if (results[0].logits) bitsEqual(results[0].logits, results[1].logits, `${name} ${dtype} logits: 1 vs 2 threads`);
    },
  );

  // A decoder's cache (BERT keeps none).
  if (decoder)
    test.each(DTYPES)('dtype %s: a cached prompt, then decode steps', (dtype) => {
      const ids = idsFor(plan, 9);
      const want = reference(storedPlan(plan, dtype, true), ids);
      const V = plan.config.vocabSize;
      const outs = [];
      for (const attn of [engines[1], engines[2]]) {
        const model = createModel(engineOf(attn), plan, { dtype });
        const cache = model.createSession({ maxLength: 16 });
        const logits = new Float32Array(9 * V);
        logits.set(model.forward(ids.subarray(0, 6), { session: cache, logits: 'all' }).logits, 0);
        for (let t = 6; t < 9; t++)
          logits.set(model.forward(ids.subarray(t, t + 1), { session: cache, logits: 'all' }).logits, t * V);
        if (want.logits) expectClose(logits, want.logits, `${name} ${dtype} cached logits`);
        outs.push(logits);
        cache.dispose();
        model.dispose();
      }
      bitsEqual(outs[0], outs[1], `${name} ${dtype} cached: 1 vs 2 threads`);
    });
});

test('weightBytes: the converted matrices at most 0.55× (f16, bf16) and 0.3× (int8) of their f32 bytes', () => {
  const shape = {
    layers: 2,
    hidden: 64,
    heads: 4,
    kvHeads: 2,
    headDim: 16,
    intermediate: 192,
    vocab: 320,
    tied: false,
  };
  const { config, tensors } = randomLlama(shape);
  const plan = planCheckpoint(readModelConfig(config), tensors);
  const { hidden: E, heads: H, kvHeads: KV, headDim: D, intermediate: I, vocab: V } = shape;
  const matrixFloats = shape.layers * (E * H * D * 2 + 2 * E * KV * D + 3 * E * I) + V * E;
  const bytes = {};
  for (const dtype of ['f32', ...DTYPES]) {
    const model = createModel(engineOf(engines[1]), plan, { dtype });
    bytes[dtype] = model.weightBytes;
    model.dispose();
  }
  const rest = bytes.f32 - 4 * matrixFloats; // embeddings, norms: the same in every dtype
  expect(rest).toBeGreaterThanOrEqual(4 * V * E);
  for (const dtype of ['f16', 'bf16']) expect(bytes[dtype] - rest).toBeLessThanOrEqual(0.55 * 4 * matrixFloats);
  expect(bytes.int8 - rest).toBeLessThanOrEqual(0.3 * 4 * matrixFloats);
});
