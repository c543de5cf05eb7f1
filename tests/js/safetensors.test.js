'use strict';
// readSafetensors: every dtype, F16/BF16 exact over all 65,536 bit patterns, every kind of input
// bytes, and corrupt files (each malformation, every truncation, random damage) refused with a
// RangeError that says what is wrong, never a crash, a hang or a wrong success.
const fs = require('fs');
const { readSafetensors } = require('wasm-attention');
const { fileOf, encodeFile, littleEndian, loadSafetensorsFixture, SAFETENSORS_DIR } = require('./safetensors-file');

const FIXTURES = fs
  .readdirSync(SAFETENSORS_DIR)
  .filter((f) => f.endsWith('.safetensors'))
  .map((f) => f.replace(/\.safetensors$/, ''));

describe('the committed PyTorch files', () => {
  test('there are F32, F16 and BF16 files', () => {
    const dtypes = new Set();
    for (const name of FIXTURES)
      for (const t of Object.values(readSafetensors(loadSafetensorsFixture(name).bytes).tensors)) dtypes.add(t.dtype);
    expect([...dtypes].sort()).toEqual(['BF16', 'F16', 'F32', 'I64']);
  });

  test('names, dtypes, shapes, metadata and an I64 buffer (position_ids) read as PyTorch wrote them', () => {
    const { tensors, metadata } = readSafetensors(loadSafetensorsFixture('mha-in-proj-f32').bytes);
    expect({ ...metadata }).toEqual({ format: 'pt' });
    const summary = Object.fromEntries(
      Object.entries(tensors).map(([k, t]) => [k, [t.dtype, t.shape, t.data.constructor.name, t.data.length]]),
    );
    expect(summary).toEqual({
      'encoder.layers.0.self_attn.in_proj_weight': ['F32', [48, 16], 'Float32Array', 768],
      'encoder.layers.0.self_attn.in_proj_bias': ['F32', [48], 'Float32Array', 48],
      'encoder.layers.0.self_attn.out_proj.weight': ['F32', [16, 16], 'Float32Array', 256],
      'encoder.layers.0.self_attn.out_proj.bias': ['F32', [16], 'Float32Array', 16],
      'encoder.layers.0.norm1.weight': ['F32', [16], 'Float32Array', 16],
      'encoder.position_ids': ['I64', [1, 8], 'BigInt64Array', 8],
    });
    expect([...tensors['encoder.position_ids'].data]).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n]);
    expect([...tensors['encoder.layers.0.norm1.weight'].data]).toEqual(Array(16).fill(1));
  });
});

describe('dtypes', () => {
  const file = encodeFile({
    f32: { dtype: 'F32', shape: [2, 2], bytes: littleEndian([1.5, -0, Infinity, NaN], 4, 'setFloat32') },
    f64: { dtype: 'F64', shape: [3], bytes: littleEndian([1 / 3, 1e300, -5e-324], 8, 'setFloat64') },
    i8: { dtype: 'I8', shape: [2], bytes: littleEndian([-128, 127], 1, 'setInt8') },
    u8: { dtype: 'U8', shape: [2], bytes: littleEndian([0, 255], 1, 'setUint8') },
    bool: { dtype: 'BOOL', shape: [3], bytes: littleEndian([1, 0, 1], 1, 'setUint8') },
    i16: { dtype: 'I16', shape: [2], bytes: littleEndian([-32768, 32767], 2, 'setInt16') },
    u16: { dtype: 'U16', shape: [2], bytes: littleEndian([1, 65535], 2, 'setUint16') },
    i32: { dtype: 'I32', shape: [2], bytes: littleEndian([-(2 ** 31), 2 ** 31 - 1], 4, 'setInt32') },
    u32: { dtype: 'U32', shape: [1], bytes: littleEndian([2 ** 32 - 1], 4, 'setUint32') },
    i64: { dtype: 'I64', shape: [2], bytes: littleEndian([-(2n ** 63n), 2n ** 63n - 1n], 8, 'setBigInt64') },
    u64: { dtype: 'U64', shape: [1], bytes: littleEndian([2n ** 64n - 1n], 8, 'setBigUint64') },
    f16: { dtype: 'F16', shape: [1, 3], bytes: littleEndian([0x3c00, 0xc000, 0x0001], 2, 'setUint16') },
    bf16: { dtype: 'BF16', shape: [2], bytes: littleEndian([0x3f80, 0xc0a0], 2, 'setUint16') },
    empty: { dtype: 'F32', shape: [0, 4], bytes: new Uint8Array(0) },
    scalar: { dtype: 'F32', shape: [], bytes: littleEndian([7], 4, 'setFloat32') },
  });
  const { tensors, metadata } = readSafetensors(file);

  test.each([
    ['f32', 'Float32Array', [1.5, -0, Infinity, NaN]],
    ['f64', 'Float32Array', [Math.fround(1 / 3), Infinity, -0]], // rounded to float32, as the engine takes it
    ['i8', 'Int8Array', [-128, 127]],
    ['u8', 'Uint8Array', [0, 255]],
    ['bool', 'Uint8Array', [1, 0, 1]],
    ['i16', 'Int16Array', [-32768, 32767]],
    ['u16', 'Uint16Array', [1, 65535]],
    ['i32', 'Int32Array', [-(2 ** 31), 2 ** 31 - 1]],
    ['u32', 'Uint32Array', [2 ** 32 - 1]],
    ['i64', 'BigInt64Array', [-(2n ** 63n), 2n ** 63n - 1n]],
    ['u64', 'BigUint64Array', [2n ** 64n - 1n]],
    ['f16', 'Float32Array', [1, -2, 2 ** -24]],
    ['bf16', 'Float32Array', [1, -5]],
    ['empty', 'Float32Array', []],
    ['scalar', 'Float32Array', [7]],
  ])('%s → %s %j', (name, type, values) => {
    expect(tensors[name].data.constructor.name).toBe(type);
    expect([...tensors[name].data]).toEqual(values); // toEqual tells -0 from 0 and matches NaN
  });

  test('dtype and shape are reported as written; no metadata gives {}', () => {
    expect([tensors.f16.dtype, tensors.f16.shape, tensors.empty.shape, tensors.scalar.shape]).toEqual([
      'F16',
      [1, 3],
      [0, 4],
      [],
    ]);
    expect(Object.keys(metadata)).toEqual([]);
  });
});

describe('F16 and BF16 are exact for all 65,536 bit patterns', () => {
  const patterns = Array.from({ length: 65536 }, (_, h) => h);
  // The value computed in double from the fields, then rounded once (exact: every one fits float32).
  function reference(h, exponentBits, mantissaBits) {
    const sign = h >> (exponentBits + mantissaBits) ? -1 : 1;
    const e = (h >> mantissaBits) & ((1 << exponentBits) - 1);
    const m = h & ((1 << mantissaBits) - 1);
    const bias = (1 << (exponentBits - 1)) - 1;
    if (e === (1 << exponentBits) - 1) return m ? NaN : sign * Infinity;
    if (e === 0) return sign * m * 2 ** (1 - bias - mantissaBits);
    return sign * (1 + m / 2 ** mantissaBits) * 2 ** (e - bias);
  }

  test.each([
    ['F16', 5, 10],
    ['BF16', 8, 7],
  ])('%s', (dtype, exponentBits, mantissaBits) => {
    const file = encodeFile({ all: { dtype, shape: [65536], bytes: littleEndian(patterns, 2, 'setUint16') } });
    const got = readSafetensors(file).tensors.all.data;
    const bits = new Uint32Array(got.buffer); // read as numbers, a NaN could be quietened on the way
    const wrong = [];
    for (const h of patterns) {
      const want = Math.fround(reference(h, exponentBits, mantissaBits));
      // NaN keeps its sign and payload, as PyTorch's conversion does.
      const ok = Number.isNaN(want)
        ? bits[h] ===
          (((h >> (exponentBits + mantissaBits)) << 31) |
            0x7f800000 |
            ((h & ((1 << mantissaBits) - 1)) << (23 - mantissaBits))) >>>
            0
        : Object.is(got[h], want);
      if (!ok && wrong.length < 5) wrong.push(`0x${h.toString(16)}: got ${got[h]}, expected ${want}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('input bytes', () => {
  const { bytes } = loadSafetensorsFixture('qwen-bias-bf16');
  const want = readSafetensors(bytes);
  const plain = (r) => Object.entries(r.tensors).map(([k, t]) => [k, t.dtype, t.shape, [...t.data]]);

  test.each([
    ['an ArrayBuffer', () => new Uint8Array(bytes).buffer],
    [
      'a Uint8Array at an odd offset of a larger buffer',
      () => {
        const big = new Uint8Array(bytes.length + 10);
        big.set(bytes, 3);
        return big.subarray(3, 3 + bytes.length);
      },
    ],
    [
      'a DataView at an odd offset',
      () => {
        const big = new Uint8Array(bytes.length + 10);
        big.set(bytes, 5);
        return new DataView(big.buffer, 5, bytes.length);
      },
    ],
    [
      'a Float64Array over the bytes (any ArrayBufferView)',
      () => {
        const buffer = new ArrayBuffer(Math.ceil(bytes.length / 8) * 8);
        new Uint8Array(buffer).set(bytes);
        return new Float64Array(buffer);
      },
    ],
    [
      'a SharedArrayBuffer',
      () => {
        const shared = new SharedArrayBuffer(bytes.length);
        new Uint8Array(shared).set(bytes);
        return shared;
      },
    ],
    [
      'a Uint8Array subclass that misreports its byteLength and length',
      () => {
        class Liar extends Uint8Array {
          get byteLength() {
            return 1e9;
          }
          get length() {
            return 3;
          }
        }
        const liar = new Liar(bytes.length);
        liar.set(bytes);
        return liar;
      },
    ],
  ])('%s gives what the Node Buffer gives', (_, make) => {
    const input = make();
    // The Float64Array has zero padding after the last tensor: unused bytes are allowed.
    expect(plain(readSafetensors(input))).toEqual(plain(want));
  });

  test('the arrays are fresh: changing the file afterwards changes nothing, and no two share memory', () => {
    const copy = new Uint8Array(bytes);
    const { tensors } = readSafetensors(copy);
    const before = plain({ tensors });
    copy.fill(0x7f);
    expect(plain({ tensors })).toEqual(before);
    const buffers = Object.values(tensors).map((t) => t.data.buffer);
    expect(new Set(buffers).size).toBe(buffers.length);
    expect(buffers).not.toContain(copy.buffer);
  });

  test('the tensors and metadata objects have no prototype, so a tensor may be named "__proto__"', () => {
    const file = fileOf(
      '{"__metadata__":{"constructor":"x"},"__proto__":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
      [9],
    );
    const { tensors, metadata } = readSafetensors(file);
    expect(Object.getPrototypeOf(tensors)).toBeNull();
    expect(Object.getPrototypeOf(metadata)).toBeNull();
    expect(Object.keys(tensors)).toEqual(['__proto__']);
    expect([...tensors.__proto__.data]).toEqual([9]); // eslint-disable-line no-proto
    expect(metadata.constructor).toBe('x');
  });

  test.each([
    ['a number', 42, /got number 42/],
    ['a string', 'model.safetensors', /got the string "model.safetensors"/],
    ['null', null, /got null/],
    ['nothing', undefined, /got nothing \(undefined\)/],
    ['an Array', [1, 2, 3], /got an Array/],
    ['a plain object', { byteLength: 8 }, /got an object/],
    ['a Proxy of a Uint8Array', new Proxy(new Uint8Array(16), {}), /got an object posing as a typed array/],
  ])('%s is a TypeError naming bytes and what it takes', (_, value, given) => {
    expect(() => readSafetensors(value)).toThrow(TypeError);
    expect(() => readSafetensors(value)).toThrow(
      /^readSafetensors: bytes must be an ArrayBuffer or an ArrayBufferView/,
    );
    expect(() => readSafetensors(value)).toThrow(given);
  });

  test('a detached buffer is a TypeError that says so', () => {
    const buffer = new ArrayBuffer(16);
    const views = [new Uint8Array(buffer), new DataView(buffer)];
    structuredClone(buffer, { transfer: [buffer] });
    for (const value of [buffer, ...views]) {
      expect(() => readSafetensors(value)).toThrow(TypeError);
      expect(() => readSafetensors(value)).toThrow(
        /^readSafetensors: bytes must be readable, got a detached ArrayBuffer or a view of one$/,
      );
    }
  });
});

describe('malformed files are RangeErrors that say what is wrong and where', () => {
  const f32 = (shape, begin, end) => ({ dtype: 'F32', shape, data_offsets: [begin, end] });
  const data16 = new Uint8Array(16);
  const cases = [
    ['fewer than 8 bytes', new Uint8Array(5), /8-byte header length, but this one has 5 bytes/],
    [
      'an absurd header length (2^63)',
      fileOf({}, [], 2n ** 63n),
      /header length \(bytes 0–7\) is 9223372036854775808 bytes, more than the format's limit/,
    ],
    [
      'a header length past the file',
      fileOf({}, [], 1000),
      /header length \(bytes 0–7\) is 1000 bytes, but only 2 follow/,
    ],
    ['a header length of 0', fileOf('', []), /header length \(bytes 0–7\) is 0 bytes, too short/],
    ['a header that is not JSON', fileOf('{"a": ', []), /the header \(bytes 8–13\) is not JSON/],
    ['a header that is a JSON array', fileOf([], []), /header must be a JSON object of tensors, got \[\]/],
    ['a header that is JSON null', fileOf('null', []), /header must be a JSON object of tensors, got null/],
    [
      'a tensor described by a number',
      fileOf({ w: 3 }, []),
      /tensor "w" must be an object \{ dtype, shape, data_offsets \}, got 3/,
    ],
    [
      'an unknown dtype',
      fileOf({ w: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }, [0]),
      /tensor "w" has the unknown dtype "F8_E4M3" \(known: F16, BF16, F32, F64/,
    ],
    [
      'no dtype',
      fileOf({ w: { shape: [1], data_offsets: [0, 4] } }, data16),
      /tensor "w" has the unknown dtype undefined/,
    ],
    [
      'a shape that is not a list',
      fileOf({ w: f32(4, 0, 16) }, data16),
      /tensor "w": shape must be a list of non-negative integers, got 4/,
    ],
    [
      'a negative dimension',
      fileOf({ w: f32([-2, -2], 0, 16) }, data16),
      /shape must be a list of non-negative integers, got \[-2,-2\]/,
    ],
    [
      'a fractional dimension',
      fileOf({ w: f32([2.5], 0, 10) }, data16),
      /shape must be a list of non-negative integers, got \[2.5\]/,
    ],
    [
      'a dimension as a string',
      fileOf({ w: f32(['4'], 0, 16) }, data16),
      /shape must be a list of non-negative integers, got \["4"\]/,
    ],
    [
      'no data_offsets',
      fileOf({ w: { dtype: 'F32', shape: [4] } }, data16),
      /tensor "w": data_offsets must be \[begin, end\], two non-negative integers, got undefined/,
    ],
    [
      'three data_offsets',
      fileOf({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 8, 16] } }, data16),
      /data_offsets must be \[begin, end\].*got \[0,8,16\]/,
    ],
    ['a negative offset', fileOf({ w: f32([1], -4, 0) }, data16), /data_offsets must be \[begin, end\].*got \[-4,0\]/],
    ['reversed data_offsets', fileOf({ w: f32([1], 8, 4) }, data16), /tensor "w": data_offsets \[8, 4\] are reversed/],
    [
      'data_offsets past the data',
      fileOf({ w: f32([8], 0, 32) }, data16),
      /tensor "w": data_offsets \[0, 32\] reach past the data, which has 16 bytes/,
    ],
    [
      'a shape that does not match the bytes',
      fileOf({ w: f32([2, 3], 0, 16) }, data16),
      /tensor "w": shape \[2,3\] of F32 takes 24 bytes, but data_offsets \[0, 16\] hold 16/,
    ],
    [
      'a shape too large to hold',
      fileOf({ w: f32([2 ** 52, 2 ** 52], 0, 16) }, data16),
      /shape \[4503599627370496,4503599627370496\] of F32 takes more than 16 bytes/,
    ],
    [
      'overlapping tensors',
      fileOf({ a: f32([2], 0, 8), b: f32([3], 4, 16) }, data16),
      /tensors "a" \[0, 8\] and "b" \[4, 16\] overlap/,
    ],
    [
      'one tensor twice',
      fileOf({ a: f32([4], 0, 16), b: f32([4], 0, 16) }, data16),
      /tensors "a" \[0, 16\] and "b" \[0, 16\] overlap/,
    ],
    [
      '__metadata__ that is not an object',
      fileOf({ __metadata__: ['pt'] }, []),
      /__metadata__ must be an object of strings, got \["pt"\]/,
    ],
    [
      'a __metadata__ value that is not a string',
      fileOf({ __metadata__: { format: 'pt', step: 3 } }, []),
      /__metadata__\["step"\] must be a string, got 3/,
    ],
  ];

  test.each(cases)('%s', (_, file, message) => {
    let error;
    try {
      readSafetensors(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toMatch(/^readSafetensors: malformed \.safetensors file: /);
    expect(error.message).toMatch(message);
  });

  test('an invalid UTF-8 header is named as such', () => {
    const file = fileOf('', []);
    const bad = new Uint8Array([...file.subarray(0, 8), 0x7b, 0xc3, 0x28, 0x7d]);
    new DataView(bad.buffer).setUint32(0, 4, true);
    expect(() => readSafetensors(bad)).toThrow(
      /^readSafetensors: malformed \.safetensors file: the header \(bytes 8–11\) is not valid UTF-8$/,
    );
  });

  test('zero-element tensors may sit anywhere, even at the same offset as others; gaps and padding are allowed', () => {
    const file = fileOf({ a: f32([0], 4, 4), b: f32([1], 4, 8), c: f32([2, 0], 16, 16), d: f32([1], 12, 16) }, data16);
    const { tensors } = readSafetensors(file);
    expect(Object.values(tensors).map((t) => t.data.length)).toEqual([0, 1, 0, 1]);
  });

  test('a file cut at every byte position is refused with a RangeError', () => {
    const { bytes } = loadSafetensorsFixture('qwen-bias-bf16');
    const unexpected = [];
    for (let n = 0; n < bytes.length; n++) {
      try {
        readSafetensors(bytes.subarray(0, n));
        unexpected.push(`${n} bytes: read without an error`);
      } catch (e) {
        if (!(e instanceof RangeError) || !/^readSafetensors: malformed/.test(e.message))
          unexpected.push(`${n} bytes: ${e}`);
      }
      if (unexpected.length >= 5) break;
    }
    expect(unexpected).toEqual([]);
  });

  test('random damage to a file gives a RangeError or a read within the file, nothing else', () => {
    const { bytes } = loadSafetensorsFixture('mha-in-proj-f32');
    const headerEnd = 8 + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    let seed = 7;
    const random = (n) => (seed = (seed * 16807) % 2147483647) % n;
    const unexpected = [];
    let refused = 0;
    for (let trial = 0; trial < 3000 && unexpected.length < 5; trial++) {
      const damaged = new Uint8Array(bytes);
      for (let k = 1 + random(3); k > 0; k--) damaged[random(headerEnd)] = random(256); // damage the length or the header
      try {
        const { tensors } = readSafetensors(damaged);
        const total = Object.values(tensors).reduce((n, t) => n + t.data.byteLength, 0);
        // Each dtype's array is no larger than its bytes (F16/BF16 widen to 4 bytes each; 2× at most).
        if (total > 2 * (bytes.length - headerEnd))
          unexpected.push(`trial ${trial}: ${total} bytes of tensors from a smaller file`);
      } catch (e) {
        if (e instanceof RangeError && /^readSafetensors: malformed/.test(e.message)) refused++;
        else unexpected.push(`trial ${trial}: ${e}`);
      }
    }
    expect(unexpected).toEqual([]);
    expect(refused).toBeGreaterThan(1000);
  });
});

describe('{ widen: false } keeps F16 and BF16 in their own format', () => {
  const MODELS = require('path').join(__dirname, '..', 'fixtures', 'models');
  // The file's own bytes of each tensor, located through its header (read here, not by the reader).
  function rawTensors(bytes) {
    const headerLength = Number(Buffer.from(bytes).readBigUInt64LE(0));
    const header = JSON.parse(
      Buffer.from(bytes)
        .subarray(8, 8 + headerLength)
        .toString('utf8'),
    );
    delete header.__metadata__;
    return Object.entries(header).map(
      ([
        name,
        {
          dtype,
          data_offsets: [begin, end],
        },
      ]) => [name, dtype, bytes.subarray(8 + headerLength + begin, 8 + headerLength + end)],
    );
  }
  const bitsOf = (data) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const F16_ARRAY = typeof Float16Array === 'function' ? 'Float16Array' : 'Uint16Array';

  test.each([
    ['llama-bias-partial-linear-f16', 'F16', F16_ARRAY],
    ['qwen2-bias-tied-bf16', 'BF16', 'Uint16Array'],
  ])('%s: every %s tensor is a %s holding the file’s bytes; widened, the same as the default', (model, dtype, kind) => {
    const bytes = new Uint8Array(fs.readFileSync(require('path').join(MODELS, model, 'model.safetensors')));
    const own = readSafetensors(bytes, { widen: false }).tensors;
    const widened = readSafetensors(bytes).tensors;
    const explicit = readSafetensors(bytes, { widen: true }).tensors;
    const raw = rawTensors(bytes);
    expect(raw.filter(([, d]) => d === dtype).length).toBeGreaterThan(5);
    for (const [name, fileDtype, fileBytes] of raw) {
      const t = own[name];
      expect([name, t.dtype, t.shape]).toEqual([name, fileDtype, widened[name].shape]);
      expect(bitsOf(explicit[name].data)).toEqual(bitsOf(widened[name].data));
      if (fileDtype !== dtype) {
        expect(bitsOf(t.data)).toEqual(bitsOf(widened[name].data)); // other dtypes as before
        continue;
      }
      expect(t.data.constructor.name).toBe(kind);
      expect(Buffer.from(bitsOf(t.data)).equals(Buffer.from(fileBytes))).toBe(true);
      expect(widened[name].data.constructor.name).toBe('Float32Array');
      // The widened values are the 16-bit values: F16 widened by the reader's own exact conversion,
      // BF16 as the top half of a float32.
      const halves = new Uint16Array(
        fileBytes.buffer.slice(fileBytes.byteOffset, fileBytes.byteOffset + fileBytes.length),
      );
      const top = Uint32Array.from(halves, (h) => h << 16);
      if (dtype === 'BF16') expect(new Uint32Array(widened[name].data.buffer)).toEqual(top);
    }
  });

  test.each([
    [
      { widen: 0 },
      TypeError,
      'readSafetensors: options.widen must be a boolean (true: F16/BF16 as Float32Array), got number 0',
    ],
    [{ widen: 'false' }, TypeError, 'options.widen must be a boolean'],
    [{ widne: false }, TypeError, 'readSafetensors: unknown option widne (known: widen)'],
    ['widen', TypeError, 'readSafetensors: options must be an object { widen }, got the string "widen"'],
    [[false], TypeError, 'readSafetensors: options must be an object { widen }, got an Array'],
    [false, TypeError, 'readSafetensors: options must be an object { widen }, got boolean false'],
  ])('options %p → %p', (options, Type, message) => {
    const file = encodeFile({ x: { dtype: 'F16', shape: [1], bytes: littleEndian([0x3c00], 2, 'setUint16') } });
    expect(() => readSafetensors(file, options)).toThrow(Type);
    expect(() => readSafetensors(file, options)).toThrow(message);
  });

  test('absent options, null, {} and { widen: undefined } widen as before', () => {
    const file = encodeFile({
      x: { dtype: 'BF16', shape: [2], bytes: littleEndian([0x3f80, 0xc000], 2, 'setUint16') },
    });
    for (const options of [undefined, null, {}, { widen: undefined }])
      expect(readSafetensors(file, options).tensors.x.data).toEqual(Float32Array.of(1, -2));
    expect(readSafetensors(file, { widen: false }).tensors.x.data).toEqual(Uint16Array.of(0x3f80, 0xc000));
  });
});
