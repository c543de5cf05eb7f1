'use strict';
// Whole models in the engine (lib/model/model.mjs → src/model/): each committed fixture
// checkpoint (tests/fixtures/models/) planned by lib/model and made by createModel on the SIMD
// and the scalar builds, against its float64 reference: logits, hidden states and every layer's
// attention; a prompt fed in chunks through a cache; the same bits at 1 and 2 threads and with or
// without attention asked; the heap back where it was after dispose and after errors; attn.dispose()
// disposing models and their caches.
const { createAttention } = require('wasm-attention');
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');
const { useEngines } = require('./engines');
const { randomLlama } = require('./random-checkpoint');

// The package's CommonJS bundle, the one index.cjs loads: its api.mjs made the engines below, so
// engineOf finds them.
const { createModel, engineOf } = require('../../dist/create.cjs');

const { readModelConfig, planCheckpoint, readShardedCheckpoint } = modelModules();
const NAMES = fixtureNames();
const engines = useEngines([1, 2, 'scalar']);

const fixtures = new Map();
function fixture(name) {
  if (!fixtures.has(name)) {
    const f = loadFixture(name);
    const weights = f.index ? readShardedCheckpoint(f.index, f.files) : f.files['model.safetensors'];
    fixtures.set(name, { ...f, plan: planCheckpoint(readModelConfig(f.config), weights) });
  }
  return fixtures.get(name);
}

const load = (attn, name, options) => createModel(engineOf(attn), fixture(name).plan, options);
const heapInUse = (attn) => attn.memoryStats().heapInUse;
const everyHead = (model) => Array.from({ length: model.config.numHeads }, (_, h) => h);
const everyLayer = (model) => Array.from({ length: model.config.numLayers }, (_, l) => l);
const allAttention = (model) => ({ layers: everyLayer(model), heads: everyHead(model) });

// |got − ref| ≤ 1e-4 + 1e-4·|ref| everywhere (the contract's numbers rule); the first miss named.
function expectClose(got, ref, label) {
  expect([label, got.length]).toEqual([label, ref.length]);
  for (let i = 0; i < ref.length; i++) {
    if (!(Math.abs(got[i] - ref[i]) <= 1e-4 + 1e-4 * Math.abs(ref[i]))) {
      throw new Error(`${label}: index ${i} got ${got[i]}, expected ${ref[i]}`);
    }
  }
}

// Rows [from, to) of an attention reference [heads, T, T] as [heads, to − from, keys] (keys ≤ T).
function attentionRows(ref, T, from, to, keys) {
  const heads = ref.length / (T * T);
  const out = new Float32Array(heads * (to - from) * keys);
  for (let h = 0; h < heads; h++)
    for (let i = from; i < to; i++)
      out.set(ref.subarray((h * T + i) * T, (h * T + i) * T + keys), (h * (to - from) + (i - from)) * keys);
  return out;
}

function inputs(name) {
  const { expected } = fixture(name);
  return {
    ids: Int32Array.from(expected.ids),
    tokenTypeIds: expected.tokenTypeIds ? Int32Array.from(expected.tokenTypeIds) : null,
  };
}

describe.each(NAMES)('%s', (name) => {
  test.each(['simd', 'scalar'])('logits, hidden and every layer’s attention match float64 (%s build)', (build) => {
    const attn = build === 'simd' ? engines[1] : engines.scalar;
    const { reference } = fixture(name);
    const { ids, tokenTypeIds } = inputs(name);
    const model = load(attn, name, { dtype: 'f32' });
    const out = model.forward(ids, { attention: allAttention(model), tokenTypeIds });
    expectClose(out.logits, reference.logits.data, `${name} logits`);
    expectClose(out.hidden, reference.hidden.data, `${name} hidden`);
    for (const l of everyLayer(model)) expectClose(out.attention[l], reference[`attention.${l}`].data, `layer ${l}`);
    model.dispose();
  });

  test('heads in the order asked, the other layers null, logits of the last token or none', () => {
    const { reference } = fixture(name);
    const { ids, tokenTypeIds } = inputs(name);
    const model = load(engines[2], name);
    const T = ids.length;
    const last = model.config.numLayers - 1;
    const out = model.forward(ids, { logits: 'last', attention: { layers: [last], heads: [1, 0] }, tokenTypeIds });
    const V = model.config.vocabSize;
    expectClose(out.logits, reference.logits.data.subarray((T - 1) * V), 'last logits');
    expect(out.attention.slice(0, last).every((a) => a === null)).toBe(true);
    const ref = reference[`attention.${last}`].data;
    expectClose(out.attention[last], [...ref.subarray(T * T, 2 * T * T), ...ref.subarray(0, T * T)], 'heads 1, 0');
    const none = model.forward(ids, { logits: 'none', tokenTypeIds });
    expect([none.logits, none.attention]).toEqual([null, null]);
    expect(none.hidden).toEqual(out.hidden);
    model.dispose();
  });

  test('1 and 2 threads give the same bits, and asking for attention changes none', () => {
    const { ids, tokenTypeIds } = inputs(name);
    const [one, two] = [engines[1], engines[2]].map((attn) => load(attn, name));
    const plain = one.forward(ids, { tokenTypeIds });
    const asked = one.forward(ids, { tokenTypeIds, attention: allAttention(one) });
    const threaded = two.forward(ids, { tokenTypeIds, attention: allAttention(two) });
    expect(asked.logits).toEqual(plain.logits);
    expect(asked.hidden).toEqual(plain.hidden);
    expect(threaded.logits).toEqual(plain.logits);
    expect(threaded.hidden).toEqual(plain.hidden);
    expect(threaded.attention).toEqual(asked.attention);
    one.dispose();
    two.dispose();
  });
});

describe.each(NAMES.filter((n) => n !== 'bert-mlm'))('%s through a session', (name) => {
  test('chunks and single tokens give the whole prompt’s logits and attention', () => {
    const { reference } = fixture(name);
    const { ids } = inputs(name);
    const T = ids.length;
    const model = load(engines[2], name);
    const V = model.config.vocabSize;
    const whole = model.forward(ids);
    const cache = model.createSession({ maxLength: T + 2 });
    const chunks = [
      [0, 3],
      [3, 4],
      [4, T - 1],
      [T - 1, T],
    ];
    const plainCache = model.createSession({ maxLength: T });
    for (const [from, to] of chunks) {
      const out = model.forward(ids.subarray(from, to), { session: cache, attention: allAttention(model) });
      const plain = model.forward(ids.subarray(from, to), { session: plainCache });
      expect(cache.length).toBe(to);
      expect(plain.logits).toEqual(out.logits); // attention asked or not: the same bits
      expectClose(out.logits, reference.logits.data.subarray(from * V, to * V), `logits ${from}…${to}`);
      expectClose(out.logits, whole.logits.subarray(from * V, to * V), `chunk ${from}…${to} vs whole`);
      for (const l of everyLayer(model)) {
        const ref = attentionRows(reference[`attention.${l}`].data, T, from, to, to);
        expectClose(out.attention[l], ref, `layer ${l} rows ${from}…${to}`);
      }
    }
    cache.truncate(3);
    expect(cache.length).toBe(3);
    const again = model.forward(ids.subarray(3, T), { session: cache });
    expectClose(again.logits, reference.logits.data.subarray(3 * V), 'after truncate');
    model.dispose();
    expect(cache.disposed).toBe(true);
  });

  test('a refused call leaves the session as it was', () => {
    const { ids } = inputs(name);
    const model = load(engines[1], name);
    const cache = model.createSession({ maxLength: ids.length });
    model.forward(ids.subarray(0, 4), { session: cache });
    const before = heapInUse(engines[1]);
    const bad = Int32Array.from(ids.subarray(4));
    bad[1] = model.config.vocabSize; // out of range: forward checks ids first; the engine still refuses them
    expect(() => model.forward(bad, { session: cache })).toThrow(RangeError);
    expect(() => model.run(bad, cache, null, 'all')).toThrow(
      /^model\.forward: the engine refused the call \(an id, token type or position out of range\)$/,
    );
    expect(cache.length).toBe(4);
    expect(() => model.forward(ids, { session: cache })).toThrow(/holds 4 of its maxLength \d+ tokens/);
    expect(cache.length).toBe(4);
    expect(heapInUse(engines[1])).toBe(before);
    model.dispose();
  });
});

describe('a random llama wide enough to split over threads', () => {
  // hidden 128, MLP 384, vocabulary 3000: every product and the LM head cross the engine's
  // threshold for sharing work, so 2 threads really split it.
  const shape = { layers: 2, hidden: 128, heads: 8, kvHeads: 2, headDim: 16, intermediate: 384, vocab: 3000, seed: 7 };
  const random = randomLlama(shape);
  const plan = planCheckpoint(readModelConfig(random.config), random.tensors);
  const ids = Int32Array.from({ length: 48 }, (_, i) => (i * 977 + 13) % shape.vocab);

  test('a prefill and decode steps give the same bits at 1 and 2 threads, attention asked or not', () => {
    const runs = [engines[1], engines[2]].map((attn) => {
      const model = createModel(engineOf(attn), plan, {});
      const session = model.createSession({ maxLength: 64 });
      const out = [model.forward(ids.subarray(0, 40), { session, logits: 'last' })];
      for (let t = 40; t < 48; t++) {
        const attention = t % 2 ? { layers: [1], heads: [7, 0, 3] } : null;
        out.push(model.forward(ids.subarray(t, t + 1), { session, attention }));
      }
      out.push(model.forward(ids, { attention: allAttention(model) }));
      model.dispose();
      return out;
    });
    expect(runs[1]).toEqual(runs[0]);
    // Attention asked or not: the decode steps' logits are those of the whole prompt's rows.
    const whole = runs[0].at(-1).logits;
    for (let t = 40; t < 48; t++) {
      expectClose(runs[0][t - 39].logits, whole.subarray(t * shape.vocab, (t + 1) * shape.vocab), `token ${t}`);
    }
  });
});

describe('memory and lifetime', () => {
  test('the heap returns to where it was after dispose and after errors', () => {
    const attn = engines[2];
    const base = heapInUse(attn);
    const model = load(attn, 'llama-gqa-llama3-sharded');
    expect(attn.memory().weightBytes).toBe(model.weightBytes);
    expect(model.weightBytes).toBeGreaterThan(0);
    expect(heapInUse(attn) - base).toBeGreaterThan(0);
    const cache = model.createSession({ maxLength: 64 });
    model.forward(Int32Array.of(1, 2, 3), { session: cache, attention: allAttention(model) });
    expect(() => model.createSession({ maxLength: 2 ** 31 })).toThrow(/too large for WebAssembly memory/);
    // Attention [heads, T, T] of every layer for 2^14 tokens: past the heap's limit.
    expect(() => model.forward(new Int32Array(1 << 14), { attention: true })).toThrow(
      /too large for WebAssembly memory/,
    );
    model.dispose();
    expect(cache.disposed).toBe(true);
    expect(heapInUse(attn)).toBe(base);
    // A load that fails part way (a layer's tensor whose buffer is gone) frees what it made.
    const { plan } = fixture('gpt2');
    const broken = { ...plan, layers: plan.layers.map((l, i) => (i === 1 ? { ...l, down: { ...l.down } } : l)) };
    broken.layers[1].down.weight = { ...plan.layers[1].down.weight, data: new Float32Array(0) };
    expect(() => createModel(engineOf(attn), broken, {})).toThrow(TypeError);
    expect(heapInUse(attn)).toBe(base);
    // A model larger than the heap can ever be is refused before anything is allocated.
    const huge = { ...plan, config: { ...plan.config, vocabSize: 2 ** 30 } };
    expect(() => createModel(engineOf(attn), huge, {})).toThrow(
      /loadModel: the model is too large for WebAssembly memory: it needs about \d+\.\d MiB/,
    );
    expect(heapInUse(attn)).toBe(base);
  });

  test('hiddenStates: the entries listed, the others null; an entry out of range refused; the heap back', () => {
    const attn = engines[1];
    const model = load(attn, 'gpt2');
    const { ids } = inputs('gpt2');
    const L = model.config.numLayers;
    const base = heapInUse(attn);
    const out = model.forward(ids, { hiddenStates: { layers: [L, 0] } });
    expect(out.hiddenStates.map((h) => h && h.length)).toEqual([ids.length * 32, null, ids.length * 32]);
    expect(out.hiddenStates[L]).toEqual(out.hidden);
    expect(model.forward(ids).hiddenStates).toBeNull();
    for (const bad of [[L + 1], [-1], [0.5]]) {
      expect(() => model.forward(ids, { hiddenStates: { layers: bad } })).toThrow(RangeError);
      expect(() => model.forward(ids, { hiddenStates: { layers: bad } })).toThrow(
        `forward: hiddenStates.layers[0] must be an integer from 0 to ${L}`,
      );
    }
    expect(heapInUse(attn)).toBe(base);
    model.dispose();
  });

  test('a bert without its masked-LM head gives hidden states and no logits', () => {
    const { plan, reference } = fixture('bert-mlm');
    const { ids, tokenTypeIds } = inputs('bert-mlm');
    const model = createModel(engineOf(engines[1]), { ...plan, lmHead: null }, {});
    const out = model.forward(ids, { tokenTypeIds });
    expect(out.logits).toBeNull();
    expectClose(out.hidden, reference.hidden.data, 'bert hidden');
    model.dispose();
  });

  test("dtype: 'f32', 'f16', 'bf16' or 'int8'; another string a RangeError, another value a TypeError", () => {
    const { plan } = fixture('gpt2');
    expect(() => createModel(engineOf(engines[1]), plan, { dtype: 'f64' })).toThrow(
      /^loadModel: dtype must be 'f32', 'f16', 'bf16' or 'int8', got "f64"$/,
    );
    expect(() => createModel(engineOf(engines[1]), plan, { dtype: 16 })).toThrow(TypeError);
  });

  test('bert keeps no session; positions past what gpt2 learned are refused', () => {
    const bert = load(engines[1], 'bert-mlm');
    expect(() => bert.createSession({ maxLength: 8 })).toThrow(TypeError);
    bert.dispose();
    const gpt2 = load(engines[1], 'gpt2');
    const max = gpt2.config.maxPositions;
    expect(() => gpt2.createSession({ maxLength: max + 8 })).toThrow(
      /at most maxPositions = \d+ \(a gpt2 model learns/,
    );
    expect(() => gpt2.forward(new Int32Array(max + 1))).toThrow(
      /ids must be at most maxPositions = \d+ tokens \(a gpt2 model learns one embedding per position\)/,
    );
    const cache = gpt2.createSession({ maxLength: max });
    expect(() => gpt2.forward(new Int32Array(max + 1), { session: cache })).toThrow(RangeError);
    expect(cache.length).toBe(0);
    gpt2.dispose();
    expect(() => gpt2.forward(Int32Array.of(1))).toThrow(/this model was disposed/);
    expect(() => cache.length).toThrow(/disposed/);
  });

  test('attn.dispose() disposes its models and their sessions', async () => {
    const attn = await createAttention({ threads: 1 });
    expect(engineOf(attn)).toBeDefined();
    expect(engineOf({})).toBeUndefined();
    const model = load(attn, 'mistral-window');
    const cache = model.createSession({ maxLength: 16 });
    model.forward(Int32Array.of(1, 2), { session: cache });
    attn.dispose();
    expect(model.disposed).toBe(true);
    expect(cache.disposed).toBe(true);
    expect(() => model.forward(Int32Array.of(1))).toThrow(/this model's engine was disposed/);
    expect(() => cache.length).toThrow(/disposed/);
    expect(() => model.createSession({ maxLength: 4 })).toThrow(Error);
    model.dispose(); // idempotent
    expect(() => createModel(engineOf(attn), fixture('gpt2').plan, {})).toThrow(/engine was disposed/);
  });
});
