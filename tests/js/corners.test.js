'use strict';
// Corners found by using the package as its users do (KV caches, decoder arguments, tensor objects,
// safetensors files, state dicts): each bad call throws a named TypeError / RangeError, nothing
// wraps silently, and the engine keeps its heap and its results.
const { createAttention, readSafetensors, attentionArgsFromStateDict } = require('wasm-attention');

const E = 8,
  H = 4,
  HKV = 2,
  HD = 2;
let attn;
let seed = 7;
const random = (n) => Float32Array.from({ length: n }, () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5);
const GQA = {
  embedDim: E,
  numHeads: H,
  numKvHeads: HKV,
  headDim: HD,
  qProjWeight: random(H * HD * E),
  kProjWeight: random(HKV * HD * E),
  vProjWeight: random(HKV * HD * E),
  outProjWeight: random(E * H * HD),
};
const bits = (a) => (a === null ? null : Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length)));

beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
});
afterAll(() => attn.dispose());

function expectThrows(fn, Cls, re) {
  const before = attn.memoryStats().heapInUse;
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(Cls);
  expect(error.message).toMatch(re);
  expect(attn.memoryStats().heapInUse).toBe(before);
}

describe('a forgotten numKvHeads is named', () => {
  test('separate projections sized for 2 K/V heads without numKvHeads: the RangeError names numKvHeads', () => {
    const { numKvHeads, ...forgot } = GQA;
    expect(numKvHeads).toBe(HKV);
    expectThrows(
      () => attn.createMultiHeadAttention(forgot),
      RangeError,
      /numKvHeads must be given for a kProjWeight of 2 K\/V heads .*numKvHeads: 2, got nothing/,
    );
  });

  test('without headDim either (512 = 8 × 64 with 2 K/V heads), the hint still names numKvHeads', () => {
    const args = {
      embedDim: 64,
      numHeads: 8,
      qProjWeight: new Float32Array(64 * 64),
      kProjWeight: new Float32Array(16 * 64),
      vProjWeight: new Float32Array(16 * 64),
      outProjWeight: new Float32Array(64 * 64),
    };
    expectThrows(() => attn.createMultiHeadAttention(args), RangeError, /numKvHeads .* 2 K\/V heads/);
  });

  test('a kProjWeight that fits no K/V head count keeps the plain length error', () => {
    const { numKvHeads, ...forgot } = GQA;
    expectThrows(
      () => attn.createMultiHeadAttention({ ...forgot, kProjWeight: new Float32Array(5) }),
      RangeError,
      /kProjWeight must be of length/,
    );
  });
});

describe('tensor objects { data, shape } (what readSafetensors returns) stand for their data', () => {
  test('a layer made of tensor objects gives the bits of one made of their arrays', () => {
    const wrap = (t, shape) => ({ dtype: 'F32', shape, data: t });
    const objects = {
      ...GQA,
      qProjWeight: wrap(GQA.qProjWeight, [H * HD, E]),
      kProjWeight: wrap(GQA.kProjWeight, [HKV * HD, E]),
      vProjWeight: { data: GQA.vProjWeight },
      outProjWeight: wrap(GQA.outProjWeight, [E, H * HD]),
    };
    const query = random(3 * E);
    const plain = attn.multiHeadAttention({ ...GQA, query });
    const wrapped = attn.multiHeadAttention({ ...objects, query: { data: query, shape: [1, 3, E] } });
    expect(bits(wrapped.output)).toEqual(bits(plain.output));
    expect(bits(wrapped.weights)).toEqual(bits(plain.weights));
  });

  test('a shape that does not hold the data is a RangeError naming the argument and shape', () => {
    expectThrows(
      () => attn.multiHeadAttention({ ...GQA, query: { data: random(3 * E), shape: [1, 4, E] } }),
      RangeError,
      /query\.shape must be a list of non-negative integers whose product is the length of its data, got \[1, 4, 8\] for data of length 24/,
    );
    expectThrows(
      () => attn.multiHeadAttention({ ...GQA, query: { data: random(16), shape: [-4, -4] } }),
      RangeError,
      /query\.shape/,
    );
  });

  test('integer data (an I32 tensor) is a TypeError that says what the object held', () => {
    expectThrows(
      () => attn.multiHeadAttention({ ...GQA, query: { dtype: 'I32', shape: [3, E], data: new Int32Array(3 * E) } }),
      TypeError,
      /query must be a Float32Array, Float16Array, Float64Array or number\[\] \(or a tensor object \{ data, shape \} of one, or \{ dtype: 'F16' \| 'BF16', data: Uint16Array \}\), got a tensor object of dtype I32 whose data is an Int32Array of length 24/,
    );
  });

  test('F16 and BF16 tensors read with { widen: false } (bit patterns in a Uint16Array) give the bits of the widened ones', () => {
    const E2 = GQA.embedDim;
    const n = 3 * E2;
    // Bit patterns of small values of both formats: sign, exponent 0x3x (F16) / 0x3e–0x3f (BF16).
    const f16 = Uint16Array.from({ length: n }, (_, i) => (i % 2 ? 0x8000 : 0) | (0x3000 + ((i * 37) % 0x0c00)));
    const bf16 = Uint16Array.from({ length: n }, (_, i) => (i % 2 ? 0x8000 : 0) | (0x3e00 + ((i * 53) % 0x0180)));
    // Their values (all normal numbers): F16 from its fields, BF16 as the top half of a float32.
    const floatsOfF16 = (h) =>
      Float32Array.from(h, (x) => (x & 0x8000 ? -1 : 1) * (1 + (x & 0x3ff) / 1024) * 2 ** (((x >> 10) & 0x1f) - 15));
    const floatsOfBf16 = (h) => new Float32Array(Uint32Array.from(h, (x) => x << 16).buffer);
    for (const [dtype, bits, floats] of [
      ['F16', f16, floatsOfF16(f16)],
      ['BF16', bf16, floatsOfBf16(bf16)],
    ]) {
      const own = attn.multiHeadAttention({ ...GQA, query: { dtype, shape: [3, E2], data: bits } });
      const widened = attn.multiHeadAttention({ ...GQA, query: floats });
      expect(new Uint32Array(own.output.buffer)).toEqual(new Uint32Array(widened.output.buffer));
    }
    // A Uint16Array of any other dtype is still refused.
    expect(() => attn.multiHeadAttention({ ...GQA, query: { dtype: 'U16', shape: [3, E2], data: f16 } })).toThrow(
      /query must be .* got a tensor object of dtype U16 whose data is an? Uint16Array of length 24/,
    );
  });

  test('an object without data is still refused as an object', () => {
    expectThrows(
      () => attn.multiHeadAttention({ ...GQA, query: { shape: [3, E] } }),
      TypeError,
      /query must be .*got an object/,
    );
  });
});

describe('sizes that would wrap in a 32-bit slot', () => {
  test('createKvCache with batch 2^32 or 2^32 + 1 is a RangeError naming batch; 2^31 is too large for memory', () => {
    const layer = attn.createMultiHeadAttention(GQA);
    for (const batch of [2 ** 32, 2 ** 32 + 1]) {
      expectThrows(
        () => layer.createKvCache({ maxLength: 8, batch }),
        RangeError,
        /createKvCache: batch must be at most 2\^31/,
      );
    }
    expectThrows(
      () => layer.createKvCache({ maxLength: 8, batch: 2 ** 31 }),
      RangeError,
      /too large for WebAssembly memory/,
    );
    layer.dispose();
  });

  test('slidingWindow 2^32 + 1 masks no key (not a window of 1), as 2^32 − 1 and no window', () => {
    const query = random(5 * E);
    const none = attn.multiHeadAttention({ ...GQA, query, isCausal: true, averageAttnWeights: false });
    const one = attn.multiHeadAttention({ ...GQA, query, isCausal: true, averageAttnWeights: false, slidingWindow: 1 });
    expect(bits(one.weights)).not.toEqual(bits(none.weights));
    for (const slidingWindow of [2 ** 32 + 1, 2 ** 32 - 1, 2 ** 40]) {
      const wide = attn.multiHeadAttention({ ...GQA, query, isCausal: true, averageAttnWeights: false, slidingWindow });
      expect([slidingWindow, bits(wide.weights)]).toEqual([slidingWindow, bits(none.weights)]);
    }
  });
});

describe("a forward repeating a layer's setting must agree with it", () => {
  const query = random(4 * E);
  test.each([
    [
      'slidingWindow 1 on a layer without a window',
      {},
      { slidingWindow: 1 },
      /slidingWindow must be absent \(no window\) as when the layer was created .*got 1/,
    ],
    [
      'slidingWindow 2 on a layer of window 3',
      { slidingWindow: 3 },
      { slidingWindow: 2 },
      /slidingWindow must be 3 as when the layer was created/,
    ],
    [
      'rope on a layer without RoPE',
      {},
      { rope: true },
      /rope must be absent \(no RoPE\) as when the layer was created/,
    ],
    [
      'another rope base',
      { rope: true },
      { rope: { base: 500 } },
      /rope must be \{ dim: 2, base: 10000, interleaved: false \} as when the layer was created .*got \{ dim: 2, base: 500/,
    ],
    ['alibi on a layer without ALiBi', {}, { alibi: true }, /alibi must be absent \(no ALiBi\)/],
    [
      'other ALiBi slopes',
      { alibi: true },
      { alibi: new Float32Array([1, 2, 3, 4]) },
      /alibi must be true \(the paper's slopes\)/,
    ],
  ])('%s is a RangeError', (_, made, repeated, re) => {
    const layer = attn.createMultiHeadAttention({ ...GQA, ...made });
    expectThrows(() => layer.forward({ query, ...repeated }), RangeError, re);
    layer.dispose();
  });

  test('the same settings repeated are accepted and change nothing', () => {
    const made = { ...GQA, slidingWindow: 3, rope: { base: 500 }, alibi: new Float32Array([0.5, 0.25, 0.125, 0.0625]) };
    const layer = attn.createMultiHeadAttention(made);
    const plain = layer.forward({ query, isCausal: true });
    const repeated = layer.forward({
      ...made,
      query,
      isCausal: true,
      rope: { base: 500, dim: HD },
      alibi: [0.5, 0.25, 0.125, 0.0625],
    });
    expect(bits(repeated.output)).toEqual(bits(plain.output));
    layer.dispose();
  });
});

describe('element getters run before the cache length is read', () => {
  test('a query element getter that truncates the cache: the call uses the truncated cache, no internal error', () => {
    const layer = attn.createMultiHeadAttention(GQA);
    const cache = layer.createKvCache({ maxLength: 16 });
    const prompt = random(4 * E);
    layer.forward({ query: prompt, cache, isCausal: true });
    const step = Array.from(random(E));
    const hostile = step.slice();
    Object.defineProperty(hostile, 0, { get: () => (cache.truncate(2), step[0]), enumerable: true });
    const got = layer.forward({ query: hostile, cache, isCausal: true });
    expect(cache.length).toBe(3);
    // The same as truncating first, then a plain step.
    const again = layer.createKvCache({ maxLength: 16 });
    layer.forward({ query: prompt.subarray(0, 2 * E), cache: again, isCausal: true });
    const want = layer.forward({ query: step, cache: again, isCausal: true });
    expect(bits(got.output)).toEqual(bits(want.output));
    layer.dispose();
  });

  test('a keyPaddingMask element getter that makes a nested forward on the same cache', () => {
    const layer = attn.createMultiHeadAttention(GQA);
    const cache = layer.createKvCache({ maxLength: 16 });
    layer.forward({ query: random(2 * E), cache, isCausal: true });
    const mask = [false, false, false, false];
    Object.defineProperty(mask, 1, {
      get: () => (layer.forward({ query: random(E), cache, isCausal: true }), false),
      enumerable: true,
    });
    // The nested step appends one token first: the cache then holds 3, and this call's 1 token makes 4.
    const got = layer.forward({ query: random(E), cache, isCausal: true, keyPaddingMask: mask });
    expect(got.weights.length).toBe(4);
    expect(cache.length).toBe(4);
    layer.dispose();
  });
});

describe('small corners', () => {
  test('rope base 1e39 is accepted (the base is used in double precision); 0 and Infinity are not', () => {
    const layer = attn.createMultiHeadAttention({ ...GQA, rope: { base: 1e39 } });
    const { output } = layer.forward({ query: random(3 * E) });
    expect(output.every(Number.isFinite)).toBe(true);
    layer.dispose();
    expectThrows(
      () => attn.createMultiHeadAttention({ ...GQA, rope: { base: 0 } }),
      RangeError,
      /rope\.base must be a positive number/,
    );
    expectThrows(
      () => attn.createMultiHeadAttention({ ...GQA, rope: { base: Infinity } }),
      RangeError,
      /rope\.base must be a finite number/,
    );
  });

  test('createKvCache on a disposed layer names createKvCache, not forward', () => {
    const layer = attn.createMultiHeadAttention(GQA);
    layer.dispose();
    expectThrows(
      () => layer.createKvCache({ maxLength: 4 }),
      Error,
      /^createMultiHeadAttention\(\)\.createKvCache: this layer was disposed/,
    );
  });
});

describe('attentionArgsFromStateDict checks every dimension of a shape', () => {
  const w = new Float32Array(16);
  const dict = (shape) => ({
    'q_proj.weight': { data: w, shape },
    'k_proj.weight': w,
    'v_proj.weight': w,
    'o_proj.weight': w,
  });
  test.each([
    [
      [-4, -4],
      RangeError,
      /"q_proj.weight" must have a shape \[out, in\] matching its 16 values, got shape \[-4,-4\] \(each dimension must be a non-negative integer\)/,
    ],
    [[4.5, 32 / 9], RangeError, /got shape \[4.5,3.5/],
    [
      ['4', '4'],
      TypeError,
      /"q_proj.weight" must have a shape \[out, in\] matching its 16 values \(dimensions are numbers\), got shape \[the string "4", the string "4"\]/,
    ],
    [[4n, 4n], TypeError, /got shape \[bigint 4, bigint 4\]/],
  ])('shape %p', (shape, Cls, re) => {
    let error;
    try {
      attentionArgsFromStateDict(dict(shape));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Cls);
    expect(error.message).toMatch(re);
  });
});

describe('readSafetensors: deep nesting and repeated names are named', () => {
  const file = (headerText, data = new Uint8Array(0)) => {
    const header = new TextEncoder().encode(headerText);
    const bytes = new Uint8Array(8 + header.length + data.length);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    bytes.set(data, 8 + header.length);
    return bytes;
  };
  const deep = (n) => '['.repeat(n) + ']'.repeat(n);
  test.each([
    ['the whole header', deep(20000)],
    ['__metadata__', `{"__metadata__":${deep(20000)}}`],
    ['a tensor entry', `{"t":${deep(20000)}}`],
    ['dtype', `{"t":{"dtype":${deep(20000)},"shape":[1],"data_offsets":[0,4]}}`],
    ['shape', `{"t":{"dtype":"F32","shape":${deep(20000)},"data_offsets":[0,4]}}`],
    ['data_offsets', `{"t":{"dtype":"F32","shape":[1],"data_offsets":${deep(20000)}}}`],
    ['a metadata value', `{"__metadata__":{"k":${deep(20000)}}}`],
  ])('nested 20,000 deep in %s: a RangeError naming the malformed file', (_, header) => {
    expect(() => readSafetensors(file(header, new Uint8Array(4)))).toThrow(
      /^readSafetensors: malformed \.safetensors file: /,
    );
  });

  test('a tensor named twice is refused by name (JSON would keep the last silently)', () => {
    const header =
      '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}, "a" :{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
    expect(() => readSafetensors(file(header, new Uint8Array(8)))).toThrow(
      /malformed \.safetensors file: the header names "a" more than once/,
    );
  });

  test('equal keys at different depths and escaped quotes are not repeats', () => {
    const header = '{"__metadata__":{"a":"x\\"a\\":"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}';
    const { tensors, metadata } = readSafetensors(file(header, new Uint8Array(4)));
    expect(Object.keys(tensors)).toEqual(['a']);
    expect(metadata.a).toBe('x"a":');
  });
});
