'use strict';
// KV caches (docs/API.md, "KV cache"): a prompt fed in any split gives one causal forward's
// outputs; errors change nothing; disposal.
const ref = require('./reference');
const { mhaArgs } = require('./cases');
const { useEngines } = require('./engines');
const { MHA_LAYER_ARGS, splitArgs } = require('./contract-args');

const engines = useEngines();

const layerOf = (a) => splitArgs(a, MHA_LAYER_ARGS).layer;

/** Rows [t0, t0 + n) of every batch element of a [batch, T, width] tensor. */
function rows(t, batch, T, width, t0, n) {
  const out = new Float32Array(batch * n * width);
  for (let b = 0; b < batch; b++) out.set(t.subarray((b * T + t0) * width, (b * T + t0 + n) * width), b * n * width);
  return out;
}

/** The first `cols` columns of rows [t0, t0 + n) of the [batch, T, T] weights of a full forward. */
function weightRows(w, batch, T, t0, n, cols) {
  const out = new Float32Array(batch * n * cols);
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < n; i++)
      out.set(w.subarray((b * T + t0 + i) * T, (b * T + t0 + i) * T + cols), (b * n + i) * cols);
  }
  return out;
}

const SPLITS = { whole: [37], halves: [16, 21], uneven: [5, 1, 1, 13, 17], tokens: Array(37).fill(1) };
const LAYERS = [
  { seed: 40, embedDim: 16, numHeads: 4 },
  { seed: 41, embedDim: 24, numHeads: 4, numKvHeads: 2, rope: true, separateBias: true, outBias: true },
  { seed: 42, embedDim: 16, numHeads: 4, numKvHeads: 1, headDim: 6, rope: { dim: 4, interleaved: true }, alibi: true },
  { seed: 43, embedDim: 16, numHeads: 2, slidingWindow: 6, alibi: true, rope: true, bias: true },
  // grouped heads of a short step share one block (K and V read once per group), with a window and ALiBi
  { seed: 45, embedDim: 16, numHeads: 8, numKvHeads: 2, slidingWindow: 5, alibi: true, rope: { interleaved: true } },
];

describe.each([1, 2])('a prompt in any split equals one causal forward, %i thread(s)', (threads) => {
  test.each(LAYERS.flatMap((o) => Object.keys(SPLITS).map((s) => [JSON.stringify(o), s, o])))(
    '%s split %s',
    (_, splitName, o) => {
      const attn = engines[threads];
      const T = 37,
        batch = 2,
        E = o.embedDim;
      const full = mhaArgs({ ...o, batch, tgtLen: T, isCausal: true });
      const want = attn.multiHeadAttention(full);
      ref.expectClose(want.output, ref.multiHeadAttention(full).output, 'full forward vs reference');
      const layer = attn.createMultiHeadAttention(layerOf(full));
      const cache = layer.createKvCache({ maxLength: 40, batch });
      let t0 = 0;
      for (const n of SPLITS[splitName]) {
        const needWeights = n % 2 === 1;
        const got = layer.forward({ query: rows(full.query, batch, T, E, t0, n), cache, isCausal: true, needWeights });
        expect(cache.length).toBe(t0 + n);
        ref.expectClose(got.output, rows(want.output, batch, T, E, t0, n), `tokens ${t0}…${t0 + n - 1} output`);
        if (needWeights) {
          ref.expectClose(got.weights, weightRows(want.weights, batch, T, t0, n, t0 + n), `tokens ${t0}… weights`);
        } else {
          expect(got.weights).toBeNull();
        }
        t0 += n;
      }
      cache.dispose();
      layer.dispose();
    },
  );
});

describe('caches', () => {
  const setup = (attn, o = LAYERS[1]) => {
    const full = mhaArgs({ ...o, tgtLen: 12, isCausal: true });
    const layer = attn.createMultiHeadAttention(layerOf(full));
    return { full, layer, E: o.embedDim };
  };

  test('truncate and refeed gives the same outputs; length, maxLength, batch', () => {
    const attn = engines[1];
    const { full, layer, E } = setup(attn);
    const cache = layer.createKvCache({ maxLength: 12 });
    expect([cache.length, cache.maxLength, cache.batch]).toEqual([0, 12, 1]);
    const first = layer.forward({ query: full.query, cache, isCausal: true });
    cache.truncate(5);
    expect(cache.length).toBe(5);
    const again = layer.forward({ query: full.query.subarray(5 * E), cache, isCausal: true });
    ref.expectClose(again.output, first.output.subarray(5 * E), 'refed tokens');
    expect(cache.length).toBe(12);
    expect(() => cache.truncate(13)).toThrow(RangeError);
    expect(() => cache.truncate(1.5)).toThrow(RangeError);
    expect(() => cache.truncate('1')).toThrow(TypeError);
    layer.dispose();
    cache.dispose();
  });

  test('errors are typed, change nothing and leak nothing', () => {
    const attn = engines[1];
    const { full, layer, E } = setup(attn);
    const other = setup(attn).layer;
    const cache = layer.createKvCache({ maxLength: 8, batch: 1 });
    layer.forward({ query: full.query.subarray(0, 6 * E), cache, isCausal: true });
    const heap = attn.memoryStats().heapInUse;
    const bad = [
      [{ query: full.query.subarray(0, 3 * E), cache }, RangeError, /at most 2 tokens/],
      [{ query: full.query.subarray(0, E), cache, key: full.query.subarray(0, E) }, TypeError, /key must be absent/],
      [{ query: full.query.subarray(0, E), cache, batch: 2 }, RangeError, /batch must be 1/],
      [{ query: full.query.subarray(0, E), cache, keyPaddingMask: new Uint8Array(6) }, RangeError, /keyPaddingMask/],
      [{ query: full.query.subarray(0, E), cache, positionOffset: -1 }, RangeError, /positionOffset/],
      [{ query: full.query.subarray(0, E), cache, positionOffset: 0.5 }, RangeError, /positionOffset/],
      [{ query: full.query.subarray(0, E), cache, positionOffset: '1' }, TypeError, /positionOffset/],
      [{ query: full.query.subarray(0, E), cache: {} }, TypeError, /cache/],
      [{ query: full.query.subarray(0, E), cache, returnIntermediates: true }, TypeError, /returnIntermediates/],
    ];
    for (const [args, Type, message] of bad) {
      expect(() => layer.forward(args)).toThrow(Type);
      expect(() => layer.forward(args)).toThrow(message);
      expect(cache.length).toBe(6);
    }
    expect(() => other.forward({ query: full.query.subarray(0, E), cache })).toThrow(RangeError);
    expect(() => other.forward({ query: full.query.subarray(0, E), cache })).toThrow(/another layer/);
    expect(() => attn.multiHeadAttention({ ...full, cache })).toThrow(TypeError);
    expect(attn.memoryStats().heapInUse).toBe(heap);
    expect(cache.length).toBe(6);
    // the cache still works: the remaining tokens equal a full forward's
    const got = layer.forward({ query: full.query.subarray(6 * E, 8 * E), cache, isCausal: true });
    const want = attn.multiHeadAttention({ ...full, query: full.query.subarray(0, 8 * E) });
    ref.expectClose(got.output, want.output.subarray(6 * E), 'after errors');
    expect(() => layer.createKvCache({ maxLength: 0 })).toThrow(RangeError);
    expect(() => layer.createKvCache({ maxLength: 4, batch: 'x' })).toThrow(TypeError);
    expect(() => layer.createKvCache({ maxLength: 4, length: 3 })).toThrow(/unknown argument length/);
    expect(() => layer.createKvCache({ maxLength: 2 ** 40 })).toThrow(RangeError);
    cache.dispose();
    other.dispose();
    layer.dispose();
  });

  test('a disposed cache, layer or engine says so; a cache of a layer without kdim = embedDim is refused', async () => {
    const { createAttention } = require('wasm-attention');
    const attn = await createAttention({ threads: 1 });
    const { full, layer, E } = setup(attn);
    const query = full.query.subarray(0, E);
    const cache = layer.createKvCache({ maxLength: 8 });
    cache.dispose();
    cache.dispose();
    expect(cache.disposed).toBe(true);
    expect(() => layer.forward({ query, cache })).toThrow(/KV cache was disposed/);
    expect(() => cache.length).toThrow(/disposed/);
    const live = layer.createKvCache({ maxLength: 8 });
    layer.forward({ query, cache: live });
    attn.dispose();
    expect(live.disposed).toBe(true);
    expect(() => live.length).toThrow(/engine was disposed/);
    const engine = engines[1];
    const cross = engine.createMultiHeadAttention({
      ...layerOf(mhaArgs({ seed: 44, tgtLen: 2, embedDim: 8, numHeads: 2, kdim: 5 })),
      kdim: 5,
    });
    expect(() => cross.createKvCache({ maxLength: 4 })).toThrow(RangeError);
    cross.dispose();
  });

  test("a keyPaddingMask of cache.length columns equals the full forward's first columns", () => {
    const attn = engines[1];
    const T = 10,
      batch = 2,
      o = LAYERS[1],
      E = o.embedDim;
    const full = mhaArgs({ ...o, batch, tgtLen: T, isCausal: true, keyPaddingMask: 'bool' });
    full.keyPaddingMask[0] = 0; // key 0 of each batch element stays visible: no fully masked row
    full.keyPaddingMask[T] = 0;
    const want = attn.multiHeadAttention(full);
    const layer = attn.createMultiHeadAttention(layerOf(full));
    const cache = layer.createKvCache({ maxLength: T, batch });
    let t0 = 0;
    for (const n of [4, 1, 5]) {
      const kpm = new Uint8Array(batch * (t0 + n));
      for (let b = 0; b < batch; b++) kpm.set(full.keyPaddingMask.subarray(b * T, b * T + t0 + n), b * (t0 + n));
      const got = layer.forward({
        query: rows(full.query, batch, T, E, t0, n),
        cache,
        isCausal: true,
        keyPaddingMask: kpm,
      });
      ref.expectClose(got.output, rows(want.output, batch, T, E, t0, n), `tokens ${t0}… with padding`);
      t0 += n;
    }
    layer.dispose();
  });

  test('a NaN or ±Infinity in a token reaches the rows a full forward has it in; 1 and 2 threads agree bit for bit', () => {
    const T = 9,
      o = LAYERS[1],
      E = o.embedDim;
    for (const [at, what] of [
      [3 * E + 5, NaN],
      [6 * E, Infinity],
      [0, -Infinity],
    ]) {
      const full = mhaArgs({ ...o, tgtLen: T, isCausal: true, slidingWindow: undefined });
      full.query = Float32Array.from(full.query);
      full.query[at] = what;
      const want = ref.multiHeadAttention(full);
      const outputs = {};
      for (const threads of [1, 2]) {
        const layer = engines[threads].createMultiHeadAttention(layerOf(full));
        const cache = layer.createKvCache({ maxLength: T });
        const parts = [2, 3, 1, 3].map((n, k, all) => {
          const t0 = all.slice(0, k).reduce((x, y) => x + y, 0);
          return layer.forward({
            query: full.query.subarray(t0 * E, (t0 + n) * E),
            cache,
            isCausal: true,
            needWeights: k % 2 === 0,
          }).output;
        });
        const got = new Float32Array(T * E);
        let off = 0;
        for (const x of parts) {
          got.set(x, off);
          off += x.length;
        }
        ref.expectClose(got, want.output, `${what} at ${at}, ${threads} thread(s)`);
        outputs[threads] = got;
        layer.dispose();
      }
      expect(Buffer.compare(Buffer.from(outputs[1].buffer), Buffer.from(outputs[2].buffer))).toBe(0);
    }
  });

  test('a greedy decoding loop: one token per step after a prompt', () => {
    const attn = engines[2];
    const { full, layer, E } = setup(attn, LAYERS[2]);
    const cache = layer.createKvCache({ maxLength: 12 });
    const outs = [
      layer.forward({ query: full.query.subarray(0, 4 * E), cache, isCausal: true, needWeights: false }).output,
    ];
    for (let t = 4; t < 12; t++) {
      outs.push(layer.forward({ query: full.query.subarray(t * E, (t + 1) * E), cache, isCausal: true }).output);
    }
    const got = new Float32Array(12 * E);
    let o = 0;
    for (const x of outs) {
      got.set(x, o);
      o += x.length;
    }
    ref.expectClose(got, ref.multiHeadAttention(full).output, 'decoded vs reference');
    layer.dispose();
  });
});
