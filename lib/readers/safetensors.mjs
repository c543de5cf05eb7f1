// readSafetensors: the tensors of a .safetensors file (Hugging Face's format: an 8-byte little-endian
// header length N, N bytes of JSON header, then the raw tensor bytes) as fresh typed arrays. Plain
// JavaScript, no engine: a model's weights can be read before, or without, createAttention.
//
// The file may come from anywhere, so nothing in it is trusted: every size and offset is checked
// against the buffer before anything is read or allocated (nothing larger than the file is ever
// allocated), and each failure is a RangeError naming the tensor and what is wrong.
import { describe } from '../values.mjs';
import { floatsOfBf16, floatsOfF16 } from './half-float.mjs';

const FN = 'readSafetensors';
// The reference implementation (safetensors' Rust crate) refuses headers over 100 MB too.
const MAX_HEADER_BYTES = 100_000_000;
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

// Each dtype: its element size and how its little-endian bytes (host order by now) become the
// array returned. Floating point becomes Float32Array (what the engine takes); integers and bool
// stay as they are, so buffers such as position_ids or num_batches_tracked still load.
const DTYPES = {
  F16: [2, (buffer) => floatsOfF16(new Uint16Array(buffer))],
  BF16: [2, (buffer) => floatsOfBf16(new Uint16Array(buffer))],
  F32: [4, (buffer) => new Float32Array(buffer)],
  F64: [8, (buffer) => new Float32Array(new Float64Array(buffer))],
  I8: [1, (buffer) => new Int8Array(buffer)],
  U8: [1, (buffer) => new Uint8Array(buffer)],
  BOOL: [1, (buffer) => new Uint8Array(buffer)],
  I16: [2, (buffer) => new Int16Array(buffer)],
  U16: [2, (buffer) => new Uint16Array(buffer)],
  I32: [4, (buffer) => new Int32Array(buffer)],
  U32: [4, (buffer) => new Uint32Array(buffer)],
  I64: [8, (buffer) => new BigInt64Array(buffer)],
  U64: [8, (buffer) => new BigUint64Array(buffer)],
};
const DTYPE_NAMES = Object.keys(DTYPES).join(', ');
// With { widen: false }, F16 and BF16 keep their 16-bit values: F16 as a Float16Array where the
// JavaScript engine has one (its elements are the values), else as a Uint16Array of the bit
// patterns; BF16 always as a Uint16Array of its bit patterns (JavaScript has no bfloat16 array).
const Float16 = typeof globalThis.Float16Array === 'function' ? globalThis.Float16Array : Uint16Array;
const OWN_FORMAT = {
  F16: (buffer) => new Float16(buffer),
  BF16: (buffer) => new Uint16Array(buffer),
};

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (proto, key) => Reflect.getOwnPropertyDescriptor(proto, key).get;
const VIEW_GETTERS = [TypedArrayPrototype, DataView.prototype].map((proto) =>
  ['buffer', 'byteOffset', 'byteLength'].map((key) => getter(proto, key)),
);
const BUFFER_LENGTHS = [ArrayBuffer, globalThis.SharedArrayBuffer]
  .filter(Boolean)
  .map((C) => getter(C.prototype, 'byteLength'));

// A getter applied to what is not its kind throws; that is how a real view or buffer is told apart
// from an impostor (a Proxy, an object with a typed array's prototype) across realms.
function tryGet(get, value) {
  try {
    return get.call(value);
  } catch {
    return undefined;
  }
}

// The file's bytes as a Uint8Array of our own, read through intrinsic getters only (a subclass
// that misreports byteLength cannot make the checks and the reads see different sizes).
function bytesOf(value) {
  const expected = 'an ArrayBuffer or an ArrayBufferView (Uint8Array, Buffer, DataView) of a .safetensors file';
  if (value !== null && typeof value === 'object') {
    for (const [bufferOf, byteOffsetOf, byteLengthOf] of VIEW_GETTERS) {
      const buffer = tryGet(bufferOf, value);
      if (buffer !== undefined)
        return readable(() => new Uint8Array(buffer, byteOffsetOf.call(value), byteLengthOf.call(value)));
    }
    for (const byteLengthOf of BUFFER_LENGTHS) {
      const length = tryGet(byteLengthOf, value);
      if (length !== undefined) return readable(() => new Uint8Array(value, 0, length));
    }
  }
  throw new TypeError(`${FN}: bytes must be ${expected}, got ${describe(value)}`);
}

// A view of detached memory cannot be made (a DataView's getters throw then too).
function readable(view) {
  try {
    return view();
  } catch {
    throw new TypeError(`${FN}: bytes must be readable, got a detached ArrayBuffer or a view of one`);
  }
}

const quote = (name) => JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
// A header value as the error shows it. A hostile header may nest thousands of levels deep, past
// what JSON.stringify's recursion survives: the error then says so instead of overflowing the stack.
function shown(value) {
  let text;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? '[…] (an array nested too deep to show)' : '{…} (an object nested too deep to show)';
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isCount = (v) => Number.isSafeInteger(v) && v >= 0;
const malformed = (what) => new RangeError(`${FN}: malformed .safetensors file: ${what}`);

function readHeader(bytes) {
  if (bytes.length < 8) {
    throw malformed(`a file starts with its 8-byte header length, but this one has ${bytes.length} bytes`);
  }
  const declared = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (declared > BigInt(MAX_HEADER_BYTES)) {
    throw malformed(
      `the header length (bytes 0–7) is ${declared} bytes, more than the format's limit of ${MAX_HEADER_BYTES} (not a .safetensors file?)`,
    );
  }
  const length = Number(declared);
  if (length < 2) throw malformed(`the header length (bytes 0–7) is ${length} bytes, too short for a JSON object`);
  if (8 + length > bytes.length) {
    throw malformed(
      `the header length (bytes 0–7) is ${length} bytes, but only ${bytes.length - 8} follow (a truncated file?)`,
    );
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(8, 8 + length));
  } catch {
    throw malformed(`the header (bytes 8–${8 + length - 1}) is not valid UTF-8`);
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw malformed(`the header (bytes 8–${8 + length - 1}) is not JSON (${e.message})`);
  }
  if (!isPlainObject(header)) {
    throw malformed(`the header must be a JSON object of tensors, got ${shown(header)}`);
  }
  const repeated = repeatedTopLevelKey(text);
  if (repeated !== null) throw malformed(`the header names ${quote(repeated)} more than once`);
  return { header, dataStart: 8 + length };
}

// JSON.parse keeps the last of two equal keys, so a tensor named twice would lose its first entry
// unchecked. This walks the header's text (valid JSON by now) and returns the first key of the
// outermost object that appears twice, or null. Iterative: a deeply nested header costs no stack.
function repeatedTopLevelKey(text) {
  const keys = new Set();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (next < text.length && ' \t\n\r'.includes(text[next])) next++;
      if (depth === 1 && text[next] === ':') {
        const key = JSON.parse(text.slice(i, end + 1));
        if (keys.has(key)) return key;
        keys.add(key);
      }
      i = end;
    }
  }
  return null;
}

function readMetadata(value) {
  const metadata = Object.create(null);
  if (value === undefined) return metadata;
  if (!isPlainObject(value)) throw malformed(`__metadata__ must be an object of strings, got ${shown(value)}`);
  for (const [key, text] of Object.entries(value)) {
    if (typeof text !== 'string') throw malformed(`__metadata__[${quote(key)}] must be a string, got ${shown(text)}`);
    metadata[key] = text;
  }
  return metadata;
}

// Checks one header entry against the data section; returns where its bytes are.
function describeTensor(name, info, dataLength) {
  const where = `tensor ${quote(name)}`;
  if (!isPlainObject(info))
    throw malformed(`${where} must be an object { dtype, shape, data_offsets }, got ${shown(info)}`);
  const { dtype, shape, data_offsets: offsets } = info;
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPES, dtype)) {
    throw malformed(`${where} has the unknown dtype ${shown(dtype)} (known: ${DTYPE_NAMES})`);
  }
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw malformed(`${where}: shape must be a list of non-negative integers, got ${shown(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    throw malformed(`${where}: data_offsets must be [begin, end], two non-negative integers, got ${shown(offsets)}`);
  }
  const [begin, end] = offsets;
  if (begin > end) throw malformed(`${where}: data_offsets [${begin}, ${end}] are reversed (begin > end)`);
  if (end > dataLength) {
    throw malformed(
      `${where}: data_offsets [${begin}, ${end}] reach past the data, which has ${dataLength} bytes (a truncated file?)`,
    );
  }
  const [size] = DTYPES[dtype];
  const span = end - begin;
  // Multiplied with an early stop, so a huge shape never rounds into a false match.
  let count = shape.includes(0) ? 0 : 1;
  for (const dim of shape) if (count <= span) count *= dim;
  if (count * size !== span) {
    throw malformed(
      `${where}: shape [${shape}] of ${dtype} takes ${count <= span ? count * size : 'more than ' + span} bytes, but data_offsets [${begin}, ${end}] hold ${span}`,
    );
  }
  return { name, dtype, shape: shape.slice(), begin, end };
}

function refuseOverlaps(entries) {
  const filled = entries.filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < filled.length; i++) {
    const [a, b] = [filled[i - 1], filled[i]];
    if (b.begin < a.end) {
      throw malformed(
        `tensors ${quote(a.name)} [${a.begin}, ${a.end}] and ${quote(b.name)} [${b.begin}, ${b.end}] overlap`,
      );
    }
  }
}

// A fresh, aligned copy of the tensor's bytes in host order, ready to be viewed as its dtype.
function hostOrderCopy(bytes, begin, end, size) {
  const copy = bytes.slice(begin, end);
  if (!LITTLE_ENDIAN_HOST && size > 1) {
    for (let i = 0; i < copy.length; i += size) copy.subarray(i, i + size).reverse();
  }
  return copy.buffer;
}

// The options object: absent, or { widen } with widen a boolean. Read once; unknown names refused
// (a typo such as { widen_: false } would otherwise widen silently).
function readOptions(options) {
  if (options === undefined || options === null) return { widen: true };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${FN}: options must be an object { widen }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'widen' && options[key] !== undefined)
      throw new TypeError(`${FN}: unknown option ${key} (known: widen)`);
  }
  const widen = options.widen;
  if (widen === undefined) return { widen: true };
  if (typeof widen !== 'boolean') {
    throw new TypeError(
      `${FN}: options.widen must be a boolean (true: F16/BF16 as Float32Array), got ${describe(widen)}`,
    );
  }
  return { widen };
}

/**
 * The tensors and metadata of a .safetensors file. F16 and BF16 tensors become Float32Array
 * (exactly), unless options.widen is false: then F16 is a Float16Array where the JavaScript engine
 * has one, else a Uint16Array of its bit patterns, and BF16 a Uint16Array of its bit patterns.
 * @param {{ widen?: boolean }} [options]
 * @returns {{ tensors: Record<string, { dtype: string, shape: number[], data: ArrayLike<number|bigint> }>,
 *   metadata: Record<string, string> }} both objects without a prototype (a tensor may be named "__proto__")
 */
export function readSafetensors(bytes, options) {
  const file = bytesOf(bytes);
  const { widen } = readOptions(options);
  const { header, dataStart } = readHeader(file);
  const dataLength = file.length - dataStart;
  const metadata = readMetadata(header.__metadata__);
  const entries = Object.entries(header)
    .filter(([name]) => name !== '__metadata__')
    .map(([name, info]) => describeTensor(name, info, dataLength));
  refuseOverlaps(entries);
  const tensors = Object.create(null);
  for (const { name, dtype, shape, begin, end } of entries) {
    const [size, widened] = DTYPES[dtype];
    const decode = (!widen && OWN_FORMAT[dtype]) || widened;
    tensors[name] = { dtype, shape, data: decode(hostOrderCopy(file, dataStart + begin, dataStart + end, size)) };
  }
  return { tensors, metadata };
}
