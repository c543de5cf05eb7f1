'use strict';
// Issue 19's JavaScript surface: attn.memory() (what the engine holds: its WebAssembly memory, the
// weights of live layers and models, the live KV caches and sessions), a checkpoint read with
// readSafetensors(bytes, { widen: false }) loading to the same bits as the widened one, and
// Float16Array where the JavaScript engine has it (tests/browser/float16.test.js runs it in Chromium).
const path = require('path');
const { createAttention, loadModel, readSafetensors } = require('wasm-attention');
const { useEngines } = require('./engines');
const { FIXTURES, loadFixture } = require('./model-modules');

const engines = useEngines([1, 2]);
const ramp = (n, scale) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + scale) * 0.5);
const weights = (d) => ({
  qProjWeight: ramp(d * d, 1),
  kProjWeight: ramp(d * d, 2),
  vProjWeight: ramp(d * d, 3),
  outProjWeight: ramp(d * d, 4),
});

describe('attn.memory()', () => {
  test('three byte counts; heapBytes is the WebAssembly memory’s size', () => {
    const attn = engines[1];
    const m = attn.memory();
    expect(Object.keys(m)).toEqual(['heapBytes', 'weightBytes', 'cacheBytes']);
    expect(m.heapBytes).toBe(attn.memoryStats().memoryBytes);
    expect(m.heapBytes % 65536).toBe(0);
  });

  test.each([1, 2])(
    'threads %i: a layer adds its weights, a KV cache its bytes; disposing them gives them back',
    (threads) => {
      const attn = engines[threads];
      const before = attn.memory();
      const layer = attn.createMultiHeadAttention({ embedDim: 32, numHeads: 4, ...weights(32) });
      const withLayer = attn.memory();
      // Four 32×32 float32 matrices, at least (the layer may keep them packed, with padding).
      expect(withLayer.weightBytes - before.weightBytes).toBeGreaterThanOrEqual(4 * 32 * 32 * 4);
      expect(withLayer.cacheBytes).toBe(before.cacheBytes);
      const cache = layer.createKvCache({ maxLength: 64, batch: 2 });
      const withCache = attn.memory();
      // K and V of 64 tokens × 32 values × batch 2, float32, at least.
      expect(withCache.cacheBytes - before.cacheBytes).toBeGreaterThanOrEqual(2 * 64 * 32 * 2 * 4);
      expect(withCache.weightBytes).toBe(withLayer.weightBytes);
      // Two caches of the same shape count twice.
      const second = layer.createKvCache({ maxLength: 64, batch: 2 });
      expect(attn.memory().cacheBytes - withCache.cacheBytes).toBe(withCache.cacheBytes - before.cacheBytes);
      second.dispose();
      cache.dispose();
      cache.dispose(); // idempotent: counted off once
      expect(attn.memory().cacheBytes).toBe(before.cacheBytes);
      layer.dispose();
      expect(attn.memory()).toMatchObject({ weightBytes: before.weightBytes, cacheBytes: before.cacheBytes });
    },
  );

  test('disposing a layer with a live cache: the cache still counts until it is disposed', () => {
    const attn = engines[1];
    const before = attn.memory();
    const layer = attn.createSelfAttention({ dModel: 16, wq: ramp(256, 1), wk: ramp(256, 2), wv: ramp(256, 3) });
    const cache = layer.createKvCache({ maxLength: 8 });
    const cacheBytes = attn.memory().cacheBytes - before.cacheBytes;
    expect(cacheBytes).toBeGreaterThan(0);
    layer.dispose();
    expect(attn.memory()).toMatchObject({
      weightBytes: before.weightBytes,
      cacheBytes: before.cacheBytes + cacheBytes,
    });
    cache.dispose();
    expect(attn.memory().cacheBytes).toBe(before.cacheBytes);
  });

  test('a model adds its weights and each session its cache; disposing the model gives back both', async () => {
    const attn = engines[2];
    const before = attn.memory();
    const model = await loadModel(attn, path.join(FIXTURES, 'gpt2'));
    const loaded = attn.memory();
    const c = model.config;
    // Every weight of GPT-2's blocks and head is held (the tied head reads the embedding): at least
    // the float32 bytes of the blocks' four matrices per layer.
    const blockFloats = c.numLayers * (4 * c.hiddenSize * c.hiddenSize + 2 * c.hiddenSize * 4 * c.hiddenSize);
    expect(loaded.weightBytes - before.weightBytes).toBeGreaterThanOrEqual(blockFloats * 4);
    expect(loaded.cacheBytes).toBe(before.cacheBytes);
    const session = model.createSession({ maxLength: 32 });
    const perSession = attn.memory().cacheBytes - before.cacheBytes;
    // K and V of every layer, 32 tokens × numKvHeads·headDim values, float32, at least.
    expect(perSession).toBeGreaterThanOrEqual(2 * c.numLayers * 32 * c.numKvHeads * c.headDim * 4);
    const other = model.createSession({ maxLength: 32 });
    expect(attn.memory().cacheBytes - before.cacheBytes).toBe(2 * perSession);
    other.dispose();
    expect(attn.memory().cacheBytes - before.cacheBytes).toBe(perSession);
    await model.generate([1, 2, 3], { session, maxNewTokens: 2 }); // use changes nothing held
    expect(attn.memory()).toMatchObject({
      weightBytes: loaded.weightBytes,
      cacheBytes: before.cacheBytes + perSession,
    });
    model.dispose();
    expect(attn.memory()).toMatchObject({ weightBytes: before.weightBytes, cacheBytes: before.cacheBytes });
  });

  test('after attn.dispose() it throws the disposed Error', async () => {
    const attn = await createAttention({ threads: 1 });
    attn.createSelfAttention({ dModel: 8, wq: ramp(64, 1), wk: ramp(64, 2), wv: ramp(64, 3) });
    expect(attn.memory().weightBytes).toBeGreaterThan(0);
    attn.dispose();
    expect(() => attn.memory()).toThrow(Error);
    expect(() => attn.memory()).toThrow('memory: this engine was disposed; create a new one with createAttention');
  });
});

describe('attn.memory() of reduced storage', () => {
  // What a layer's or cache's creation adds to memory(), by its dtype.
  const added = (attn, make) => {
    const before = attn.memory();
    const made = make();
    const after = attn.memory();
    made.dispose();
    return { weightBytes: after.weightBytes - before.weightBytes, cacheBytes: after.cacheBytes - before.cacheBytes };
  };

  test.each([
    ['f16', 0.55],
    ['bf16', 0.55],
    ['int8', 0.3],
  ])('a prepared layer with weightDtype %s holds at most %f× the f32 bytes (biases included)', (weightDtype, ratio) => {
    const attn = engines[1];
    const make = (dtype) => () =>
      attn.createMultiHeadAttention({ embedDim: 256, numHeads: 4, ...weights(256), weightDtype: dtype });
    const f32 = added(attn, make('f32')).weightBytes;
    const reduced = added(attn, make(weightDtype)).weightBytes;
    expect(f32).toBeGreaterThanOrEqual(4 * 256 * 256 * 4);
    expect(reduced).toBeLessThanOrEqual(ratio * f32);
  });

  test.each(['f16', 'bf16'])('a %s KV cache and session hold about half the f32 bytes', async (dtype) => {
    const attn = engines[1];
    const layer = attn.createMultiHeadAttention({ embedDim: 64, numHeads: 4, ...weights(64) });
    const cache = (d) => () => layer.createKvCache({ maxLength: 256, batch: 1, dtype: d });
    const f32 = added(attn, cache('f32')).cacheBytes;
    const half = added(attn, cache(dtype)).cacheBytes;
    layer.dispose();
    expect(half).toBeLessThanOrEqual(0.51 * f32);
    expect(half).toBeGreaterThanOrEqual(0.49 * f32);
    const f = loadFixture('llama-bias-partial-linear-f16');
    const model = await loadModel(attn, { config: f.config, weights: f.files['model.safetensors'] });
    const session = (d) => () => model.createSession({ maxLength: 64, kvDtype: d });
    const sessionF32 = added(attn, session('f32')).cacheBytes;
    const sessionHalf = added(attn, session(dtype)).cacheBytes;
    model.dispose();
    expect(sessionHalf).toBeLessThanOrEqual(0.51 * sessionF32);
    expect(sessionHalf).toBeGreaterThanOrEqual(0.49 * sessionF32);
  });
});

describe('a checkpoint read with { widen: false } loads to the same bits as the widened one', () => {
  test.each(['llama-bias-partial-linear-f16', 'qwen2-bias-tied-bf16'])('%s', async (name) => {
    const f = loadFixture(name);
    const bytes = f.files['model.safetensors'];
    const own = readSafetensors(bytes, { widen: false });
    const attn = engines[1];
    const a = await loadModel(attn, { config: f.config, weights: own });
    const b = await loadModel(attn, { config: f.config, weights: readSafetensors(bytes) });
    const ids = f.expected.ids;
    const bitsOf = (x) => new Uint32Array(x.buffer, x.byteOffset, x.length);
    expect(bitsOf(a.forward(ids).logits)).toEqual(bitsOf(b.forward(ids).logits));
    // The user's arrays are left in their own format.
    expect(Object.values(own.tensors).some((t) => t.dtype !== 'F32' && t.data.BYTES_PER_ELEMENT === 2)).toBe(true);
    a.dispose();
    b.dispose();
  });
});

describe('Float16Array', () => {
  // Node 20 has none (Node 24 and Chromium 135+ do): the bit-for-bit check against the widened
  // Float32Array runs in tests/browser/float16.test.js. Here: what the engine says when refusing a
  // typed array it does not take lists Float16Array among the accepted ones.
  test('the errors that list accepted float arrays name Float16Array', () => {
    const attn = engines[1];
    expect(() =>
      attn.selfAttention({
        x: new Int16Array(8),
        seqLen: 1,
        dModel: 8,
        wq: ramp(64, 1),
        wk: ramp(64, 2),
        wv: ramp(64, 3),
      }),
    ).toThrow(
      'selfAttention: x must be a Float32Array, Float16Array, Float64Array or number[], got an Int16Array of length 8',
    );
    const mha = { embedDim: 8, numHeads: 2, query: ramp(8, 0), ...weights(8) };
    expect(() => attn.multiHeadAttention({ ...mha, attnMask: new Int16Array(1) })).toThrow(
      'multiHeadAttention: attnMask must be a Uint8Array or boolean[] (masked where true) or a Float32Array, Float16Array or Float64Array (added to the scores), got an Int16Array of length 1',
    );
    expect(() => attn.multiHeadAttention({ ...mha, alibi: 'slopes' })).toThrow(
      'multiHeadAttention: alibi must be true or a Float32Array (or Float16Array, Float64Array, number[]) of numHeads slopes, got the string "slopes"',
    );
  });
});
