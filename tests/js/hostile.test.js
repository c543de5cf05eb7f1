'use strict';
// Issue 8: hostile inputs. Typed arrays that misreport themselves, Proxies, getters that call the
// engine while it reads the arguments (re-entrancy), layer arguments repeated wrongly in a prepared
// forward, a scale that is finite in float64 but not in float32, and the out-of-memory message.
// Every bad call must throw the right class naming the argument, leave the heap in use where it
// was, and leave the engine giving bit-identical results to those computed before it.
const { createAttention } = require('wasm-attention');
const { mhaArgs, saArgs } = require('./cases');

const E = 8;
let attn, layer, saLayer, baseline;
const MHA = mhaArgs({
  seed: 31,
  batch: 2,
  tgtLen: 3,
  srcLen: 4,
  embedDim: E,
  numHeads: 2,
  bias: true,
  outBias: true,
  attnMask: 'float2d',
});
const LAYER = {
  embedDim: E,
  numHeads: 2,
  inProjWeight: MHA.inProjWeight,
  inProjBias: MHA.inProjBias,
  outProjWeight: MHA.outProjWeight,
  outProjBias: MHA.outProjBias,
};
const INPUTS = { query: MHA.query, key: MHA.key, value: MHA.value, batch: 2, attnMask: MHA.attnMask };
const SA = saArgs({ seed: 32, seqLen: 5, dModel: 6, dK: 4, dV: 3, bias: true, mask: 'bool' });
const SA_LAYER = { dModel: 6, wq: SA.wq, wk: SA.wk, wv: SA.wv, bq: SA.bq, bk: SA.bk, bv: SA.bv };
const SA_INPUTS = { x: SA.x, seqLen: 5, attnMask: SA.attnMask };

const results = () => ({
  mha: attn.multiHeadAttention(MHA),
  layer: layer.forward(INPUTS),
  sa: attn.selfAttention(SA),
  saLayer: saLayer.forward(SA_INPUTS),
});

beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
  layer = attn.createMultiHeadAttention(LAYER);
  saLayer = attn.createSelfAttention(SA_LAYER);
  baseline = results(); // computed before any bad call
});

const bits = (a) => (a === null ? null : Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length)));
function expectUnchanged(label) {
  const now = results();
  for (const key of Object.keys(baseline)) {
    for (const part of ['output', 'weights']) {
      expect([label, key, part, bits(now[key][part])]).toEqual([label, key, part, bits(baseline[key][part])]);
    }
  }
}

/** fn must throw Cls whose message matches re (the function and the argument); heap and results unchanged. */
function expectRejected(label, fn, Cls, re) {
  const before = attn.memoryStats().heapInUse;
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect([label, err && err.constructor.name]).toEqual([label, Cls.name]);
  expect([label, err.message]).toEqual([label, expect.stringMatching(re)]);
  expect([label, attn.memoryStats().heapInUse]).toEqual([label, before]);
  expectUnchanged(label);
  return err;
}

// ------------------------------------------------------------------ 1. misreported lengths

describe('1. a typed array is read by what it really holds, never by its own properties', () => {
  class Lying extends Float32Array {
    get length() {
      return 2 * E;
    }
  }

  test('a subclass claiming a valid length while holding more is refused by its real length', () => {
    const query = new Lying(65537).fill(1e30);
    const err = expectRejected('Lying query', () => layer.forward({ query }), RangeError, /forward: query .*65537/);
    expect(err.message).toMatch(/\bquery\b/);
    expectRejected(
      'Lying query one-shot',
      () => attn.multiHeadAttention({ ...MHA, query, key: undefined, value: undefined, batch: 1 }),
      RangeError,
      /multiHeadAttention: query .*65537/,
    );
  });

  test('a subclass whose real length is valid gives the result of a plain array of the same contents', () => {
    const plain = MHA.query.slice(0, 3 * E * 2);
    const lying = Lying.from(plain); // claims 2 tokens (16 elements), holds 6 tokens
    expect(lying.length).toBe(2 * E);
    const got = layer.forward({ query: lying });
    expect(got.output.length).toBe(6 * E);
    expect(bits(got.output)).toEqual(bits(layer.forward({ query: plain }).output));
    expectUnchanged('after a Lying query');
  });

  test('overridden buffer, byteOffset, byteLength and subarray are not used', () => {
    const big = new Float32Array(100 + MHA.query.length);
    big.set(MHA.query, 100);
    const view = big.subarray(100);
    Object.defineProperties(view, {
      byteOffset: { get: () => 0 },
      byteLength: { get: () => 4 },
      buffer: { get: () => new ArrayBuffer(8) },
      length: { get: () => 1 },
    });
    const got = attn.multiHeadAttention({ ...MHA, query: view });
    expect(bits(got.output)).toEqual(bits(baseline.mha.output));
  });

  test('a Proxy around a Float32Array is refused with our TypeError naming the argument', () => {
    const proxy = new Proxy(new Float32Array(MHA.query), {});
    expectRejected(
      'Proxy query',
      () => attn.multiHeadAttention({ ...MHA, query: proxy }),
      TypeError,
      /multiHeadAttention: query must be a Float32Array.*Proxy/,
    );
    expectRejected(
      'Proxy query forward',
      () => layer.forward({ ...INPUTS, query: proxy }),
      TypeError,
      /forward: query must be/,
    );
    expectRejected(
      'Proxy x',
      () => attn.selfAttention({ ...SA, x: new Proxy(SA.x, {}) }),
      TypeError,
      /selfAttention: x must be/,
    );
    expectRejected(
      'Proxy wq',
      () => attn.createSelfAttention({ ...SA_LAYER, wq: new Proxy(SA.wq, {}) }),
      TypeError,
      /createSelfAttention: wq must be/,
    );
    expectRejected(
      'Proxy attnMask',
      () => attn.multiHeadAttention({ ...MHA, attnMask: new Proxy(MHA.attnMask, {}) }),
      TypeError,
      /attnMask must be/,
    );
    expectRejected(
      'Proxy keyPaddingMask',
      () => layer.forward({ ...INPUTS, keyPaddingMask: new Proxy(new Uint8Array(8), {}) }),
      TypeError,
      /keyPaddingMask must be/,
    );
  });

  test('an object with a typed array prototype but no typed array inside is refused by name', () => {
    const fake = Object.create(Float32Array.prototype);
    expectRejected(
      'fake query',
      () => attn.multiHeadAttention({ ...MHA, query: fake }),
      TypeError,
      /query must be .*posing/,
    );
    expectRejected(
      'fake outProjWeight',
      () => attn.createMultiHeadAttention({ ...LAYER, outProjWeight: fake }),
      TypeError,
      /outProjWeight must be/,
    );
  });

  test('a detached buffer is refused as a wrong length, named', () => {
    const q = new Float32Array(MHA.query);
    structuredClone(q.buffer, { transfer: [q.buffer] });
    expectRejected(
      'detached query',
      () => attn.multiHeadAttention({ ...MHA, query: q }),
      RangeError,
      /query .*length 0/,
    );
  });

  test('a buffer detached by a getter while the arguments are read is refused, not copied short', () => {
    const q = new Float32Array(MHA.query);
    const attnMask = Array.from(MHA.attnMask, () => false);
    Object.defineProperty(attnMask, 0, {
      enumerable: true,
      get() {
        structuredClone(q.buffer, { transfer: [q.buffer] });
        return false;
      },
    });
    const args = { ...MHA, query: q, attnMask };
    // the query is checked before the mask, whose first element detaches the query's buffer
    expectRejected('detached mid-call', () => attn.multiHeadAttention(args), TypeError, /query's buffer was detached/);
  });
});

// ------------------------------------------------------------------ 5. layer arguments in forward

describe('5. a prepared forward checks repeated layer arguments fully', () => {
  test.each([
    ['inProjWeight a string', { inProjWeight: 'garbage' }, TypeError, /forward: inProjWeight must be/],
    [
      'outProjWeight of length 3',
      { outProjWeight: new Float32Array(3) },
      RangeError,
      /forward: outProjWeight must be of length/,
    ],
    ['inProjBias an Int32Array', { inProjBias: new Int32Array(3 * E) }, TypeError, /forward: inProjBias must be/],
    ['outProjBias too long', { outProjBias: new Float32Array(E + 1) }, RangeError, /forward: outProjBias/],
    ['qProjWeight of length 2', { qProjWeight: [1, 2] }, RangeError, /forward: qProjWeight/],
    [
      'numHeads the string "2"',
      { numHeads: '2' },
      TypeError,
      /forward: numHeads must be a positive integer, got the string "2"/,
    ],
    ['numHeads 4', { numHeads: 4 }, RangeError, /forward: numHeads must be 2 as when the layer was created, got 4/],
    ['embedDim 2.5', { embedDim: 2.5 }, RangeError, /forward: embedDim must be a positive integer/],
    ['kdim a boolean', { kdim: true }, TypeError, /forward: kdim must be/],
  ])('MHA forward: %s', (label, extra, Cls, re) => {
    expectRejected(label, () => layer.forward({ ...INPUTS, ...extra }), Cls, re);
  });

  test.each([
    ['wq a string', { wq: 'w' }, TypeError, /forward: wq must be/],
    ['wk one element short', { wk: SA.wk.slice(1) }, RangeError, /forward: wk must be of length/],
    ['bv too long', { bv: new Float32Array(4) }, RangeError, /forward: bv/],
    ['dModel the string "6"', { dModel: '6' }, TypeError, /forward: dModel must be a positive integer/],
    ['dModel 7', { dModel: 7 }, RangeError, /forward: dModel must be 6 as when the layer was created/],
  ])('SA forward: %s', (label, extra, Cls, re) => {
    expectRejected(label, () => saLayer.forward({ ...SA_INPUTS, ...extra }), Cls, re);
  });

  test('the whole creation object is still accepted by forward when it agrees', () => {
    expect(bits(layer.forward({ ...LAYER, ...INPUTS }).output)).toEqual(bits(baseline.layer.output));
    expect(bits(saLayer.forward({ ...SA_LAYER, ...SA_INPUTS }).output)).toEqual(bits(baseline.saLayer.output));
  });

  test('a one-shot numHeads of the wrong type is a TypeError', () => {
    expectRejected(
      'numHeads "2"',
      () => attn.multiHeadAttention({ ...MHA, numHeads: '2' }),
      TypeError,
      /numHeads must be a positive integer/,
    );
  });
});

// ------------------------------------------------------------------ 6. re-entrancy

describe('6. a getter that calls the engine while the arguments are read changes nothing', () => {
  const reentrant = (plain, at, inner) => {
    const arr = Array.from(plain);
    Object.defineProperty(arr, at, { enumerable: true, get: () => (inner(), plain[at]) });
    return arr;
  };

  test('an element getter of a number[] query calling the engine: same bits as a plain query', () => {
    let calls = 0;
    const inner = () => {
      calls++;
      attn.multiHeadAttention(mhaArgs({ seed: 99, tgtLen: 7, embedDim: 4, numHeads: 1, needWeights: false }));
      attn.selfAttention(SA);
      layer.forward({ query: MHA.query.slice(0, E) });
    };
    const query = reentrant(MHA.query, 5, inner);
    const got = attn.multiHeadAttention({ ...MHA, query });
    expect(calls).toBe(1); // read once
    expect(bits(got.output)).toEqual(bits(baseline.mha.output));
    expect(bits(got.weights)).toEqual(bits(baseline.mha.weights));
    const got2 = layer.forward({ ...INPUTS, value: reentrant(MHA.value, 3, inner) });
    expect(bits(got2.output)).toEqual(bits(baseline.layer.output));
    const got3 = saLayer.forward({ ...SA_INPUTS, x: reentrant(SA.x, 0, inner) });
    expect(bits(got3.output)).toEqual(bits(baseline.saLayer.output));
    expectUnchanged('after re-entrant calls');
  });

  test('a getter on the arguments object calling the engine, read once', () => {
    let reads = 0;
    const args = { ...MHA };
    Object.defineProperty(args, 'query', {
      enumerable: true,
      get() {
        reads++;
        attn.multiHeadAttention(MHA);
        return reads === 1 ? MHA.query : new Float32Array(1);
      },
    });
    expect(bits(attn.multiHeadAttention(args).output)).toEqual(bits(baseline.mha.output));
    expect(reads).toBe(1);
  });

  test('a getter that disposes the layer mid-call: Error saying so, heap unchanged', () => {
    const victim = attn.createMultiHeadAttention(LAYER);
    const before = attn.memoryStats().heapInUse;
    const args = { ...INPUTS };
    Object.defineProperty(args, 'value', { enumerable: true, get: () => (victim.dispose(), MHA.value) });
    expect(() => victim.forward(args)).toThrow(/forward: this layer was disposed/);
    expect(attn.memoryStats().heapInUse).toBeLessThan(before); // its weights were freed
    expectUnchanged('after a layer disposed mid-call');
  });

  test('a getter that disposes the engine mid-call: Error saying so', async () => {
    const other = await createAttention({ threads: 1 });
    const args = { ...MHA };
    Object.defineProperty(args, 'key', { enumerable: true, get: () => (other.dispose(), MHA.key) });
    expect(() => other.multiHeadAttention(args)).toThrow(/multiHeadAttention: this engine was disposed/);
  });
});

// ------------------------------------------------------------------ 7. scale finite in float32

describe('7. scale must be finite in float32', () => {
  test.each([1e300, -1e39, 3.5e38, Infinity, -Infinity, NaN])('scale %s is a RangeError naming scale', (scale) => {
    expectRejected(
      `MHA scale ${scale}`,
      () => attn.multiHeadAttention({ ...MHA, scale }),
      RangeError,
      /multiHeadAttention: scale must be a finite number, also in float32/,
    );
    expectRejected(
      `layer scale ${scale}`,
      () => layer.forward({ ...INPUTS, scale }),
      RangeError,
      /forward: scale must be/,
    );
    expectRejected(
      `SA scale ${scale}`,
      () => attn.selfAttention({ ...SA, scale }),
      RangeError,
      /selfAttention: scale must be/,
    );
  });

  test('the largest float32 scales are accepted', () => {
    for (const scale of [3.4e38, -3.4e38, 1e-300]) {
      const got = attn.multiHeadAttention({ ...MHA, scale, needWeights: false });
      expect(got.output.length).toBe(baseline.mha.output.length);
    }
  });
});

// ------------------------------------------------------------------ 8. messages

describe('8. messages name the argument and count everything', () => {
  test('the out-of-memory size counts the masks', () => {
    const L = 24000; // weights alone: 2.3 GB
    const args = {
      query: new Float32Array(L),
      embedDim: 1,
      numHeads: 1,
      inProjWeight: new Float32Array(3),
      outProjWeight: new Float32Array(1),
    };
    const mib = (err) => Number(/needs about ([\d.]+) MiB/.exec(err.message)[1]);
    const plain = expectRejected(
      'too large',
      () => attn.multiHeadAttention(args),
      RangeError,
      /multiHeadAttention: the work is too large for WebAssembly memory/,
    );
    // a [L, L] bool mask: 549 MiB more (zero pages: never touched before the size check)
    const masked = expectRejected(
      'too large with a mask',
      () => attn.multiHeadAttention({ ...args, attnMask: new Uint8Array(L * L) }),
      RangeError,
      /too large for WebAssembly memory/,
    );
    expect(mib(masked) - mib(plain)).toBeCloseTo((L * L) / 1048576, 0);
    const padded = expectRejected(
      'too large with a padding mask',
      () => attn.multiHeadAttention({ ...args, keyPaddingMask: new Float32Array(L) }),
      RangeError,
      /too large/,
    );
    expect(mib(padded) - mib(plain)).toBeCloseTo((4 * L) / 1048576, 1);
  });

  test('wrong-type elements and masks name the argument and the element', () => {
    expectRejected(
      'query[2] a string',
      () => attn.multiHeadAttention({ ...MHA, query: Object.assign(Array.from(MHA.query), { 2: 'x' }) }),
      TypeError,
      /multiHeadAttention: query\[2\] must be a number, got the string "x"/,
    );
    expectRejected(
      'attnMask boolean[] with a number',
      () => attn.selfAttention({ ...SA, attnMask: [true, 1] }),
      TypeError,
      /selfAttention: attnMask must be .* element 1 is number 1/,
    );
    expectRejected(
      'args a Float32Array',
      () => attn.selfAttention(new Float32Array(3)),
      TypeError,
      /selfAttention: expected one object of named arguments/,
    );
  });
});
