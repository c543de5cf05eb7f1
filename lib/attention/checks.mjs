// Argument checks with errors a user can act on: each names the function, the argument, what
// was expected and what was given (docs/API.md, "Errors").
//
// Hostile inputs: every argument is read once (a getter that answers differently the second time
// changes nothing), and a typed array is read through the intrinsic getters of
// %TypedArray%.prototype, never through its own properties: a subclass that overrides `length`, a
// Proxy, or an object with a typed array's prototype cannot make the checks see one size and the
// copy into the heap another. What the checks return is the wrapper's own data: fresh views
// (fixed length) of typed arrays and fresh Float32Array / Uint8Array copies of plain arrays. No
// user code runs after the checks, so a re-entrant call (a getter that calls the engine) finds no
// half-written state.

import { describe, intrinsic, typedArrayName, typedLength } from '../values.mjs';
import { floatsOfBf16, floatsOfF16 } from '../readers/half-float.mjs';

export { describe, typedArrayName, typedLength };

const lengthOf = intrinsic('length'); // 0 once the buffer is detached or shrunk past the view
const bufferOf = intrinsic('buffer');
const byteOffsetOf = intrinsic('byteOffset');
const isArray = Array.isArray;
const FLOAT_TYPED = new Set(['Float32Array', 'Float16Array', 'Float64Array']);
const textOf = (formula) => (typeof formula === 'function' ? formula() : formula);
// The prototype of the arguments read: nothing inherited, not even from an Object.prototype that
// user code changed. (Object.create(null) would do, but V8 keeps such objects as slow
// dictionaries, and every check reads them.)
const NOTHING_INHERITED = Object.freeze(Object.create(null));

// A fresh view of the same memory, of the class the engine expects, whose length no user code sets.
function freshView(value, Ctor) {
  const n = lengthOf.call(value);
  return n === 0 ? new Ctor(0) : new Ctor(bufferOf.call(value), byteOffsetOf.call(value), n);
}

// A Float16Array (where the JavaScript engine has one) as the Float32Array of its values, exactly:
// its bits are read through a Uint16Array view, so no global Float16Array is needed here, and a
// Float16Array of another realm (a frame, a vm context) converts the same way.
const widenedF16 = (value) => floatsOfF16(freshView(value, Uint16Array));
// The float arrays a tensor may be, as error messages list them.
const FLOAT_ARRAYS = 'a Float32Array, Float16Array, Float64Array or number[]';

export class Checker {
  // Reads every known argument once into a plain object; refuses unknown names, so a typo
  // (needweights) does not pass silently.
  constructor(fn, args, known) {
    if (args === null || typeof args !== 'object' || isArray(args) || typedArrayName(args)) {
      throw new TypeError(`${fn}: expected one object of named arguments, got ${describe(args)}`);
    }
    this.fn = fn;
    const keys = Object.keys(args);
    for (const name of keys) {
      if (!known.has(name) && args[name] !== undefined) {
        throw new TypeError(`${fn}: unknown argument ${name} (known: ${[...known].join(', ')})`);
      }
    }
    // A plain object: its own keys are all there is (checked above). Otherwise (a class instance,
    // an object with a prototype) every known name is read, inherited getters included.
    const proto = Object.getPrototypeOf(args);
    const names = proto === Object.prototype || proto === null ? keys : known;
    this.args = Object.create(NOTHING_INHERITED);
    for (const name of names) if (known.has(name)) this.args[name] = args[name];
  }

  typeError(name, expected, value) {
    return new TypeError(`${this.fn}: ${name} must be ${expected}, got ${describe(value)}`);
  }

  rangeError(name, expected, given) {
    return new RangeError(`${this.fn}: ${name} must be ${expected}, got ${given}`);
  }

  has(name) {
    return this.args[name] !== undefined && this.args[name] !== null;
  }

  size(name, fallback) {
    const v = this.args[name];
    if (v === undefined) {
      if (fallback === undefined) throw this.typeError(name, 'a positive integer (required)', v);
      return fallback;
    }
    if (typeof v !== 'number') throw this.typeError(name, 'a positive integer', v);
    if (!Number.isInteger(v) || v <= 0) throw this.rangeError(name, 'a positive integer', v);
    return v;
  }

  bool(name, fallback) {
    const v = this.args[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw this.typeError(name, 'a boolean', v);
    return v;
  }

  // A number the engine takes as a float32: finite there too (1e300 would become Infinity).
  float32(name, fallback) {
    const v = this.args[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'number') throw this.typeError(name, 'a number', v);
    if (!Number.isFinite(Math.fround(v))) {
      throw this.rangeError(name, 'a finite number, also in float32 (|value| ≤ 3.4028234663852886e38)', v);
    }
    return v;
  }

  // A number the engine takes as a float64 (the RoPE base): any finite number.
  float64(name, fallback) {
    const v = this.args[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'number') throw this.typeError(name, 'a number', v);
    if (!Number.isFinite(v)) throw this.rangeError(name, 'a finite number', v);
    return v;
  }

  // A plain array's elements, each read once, each a `kind` ('number' or 'boolean').
  elements(name, array, kind, Out) {
    const n = array.length;
    const out = new Out(n);
    for (let i = 0; i < n; i++) {
      const x = array[i];
      if (typeof x !== kind) throw this.typeError(`${name}[${i}]`, `a ${kind}`, x);
      out[i] = x;
    }
    return out;
  }

  // A tensor: Float32Array, Float16Array, Float64Array or number[]. Returns a Float32Array or
  // Float64Array of the wrapper's own (see the top of this file; a Float16Array's values widened
  // exactly into a fresh Float32Array), or null when absent and not required. One array
  // given for several arguments (key: x, value: x) gives one result, copied into the heap once.
  tensor(name, { required = true } = {}) {
    const v = this.args[name];
    if (v === undefined || v === null) {
      if (required) throw this.typeError(name, 'a Float32Array (required)', v);
      return null;
    }
    this.seen ??= new Map();
    if (!this.seen.has(v)) this.seen.set(v, this.readTensor(name, v));
    return this.seen.get(v);
  }

  readTensor(name, v) {
    const typed = typedArrayName(v);
    if (typed === 'Float32Array') return freshView(v, Float32Array);
    if (typed === 'Float64Array') return freshView(v, Float64Array);
    if (typed === 'Float16Array') return widenedF16(v);
    if (typed === undefined && isArray(v)) return this.elements(name, v, 'number', Float32Array);
    if (typed === undefined && typeof v === 'object') return this.tensorObject(name, v);
    throw this.typeError(name, FLOAT_ARRAYS, v);
  }

  // A tensor object { data, shape } (what readSafetensors returns for each tensor) stands for its
  // data; its shape, when given, must hold exactly as many elements. Each property is read once.
  // readSafetensors(bytes, { widen: false }) gives F16/BF16 bit patterns as a Uint16Array: with
  // that dtype, they are widened exactly too.
  tensorObject(name, v) {
    const expected = `${FLOAT_ARRAYS} (or a tensor object { data, shape } of one, or { dtype: 'F16' | 'BF16', data: Uint16Array })`;
    const data = v.data;
    const shape = v.shape;
    const dtype = v.dtype;
    const typed = typedArrayName(data);
    const bits = typed === 'Uint16Array' && (dtype === 'F16' || dtype === 'BF16');
    if (data === undefined || (!bits && !FLOAT_TYPED.has(typed) && !(typed === undefined && isArray(data)))) {
      const given = typeof dtype === 'string' ? ` of dtype ${dtype}` : '';
      const what = data === undefined ? describe(v) : `a tensor object${given} whose data is ${describe(data)}`;
      throw new TypeError(`${this.fn}: ${name} must be ${expected}, got ${what}`);
    }
    const widen = dtype === 'F16' ? floatsOfF16 : floatsOfBf16;
    const tensor = bits ? widen(freshView(data, Uint16Array)) : this.readTensor(`${name}.data`, data);
    if (shape !== undefined) {
      const dims = isArray(shape) ? Array.from(shape) : null;
      const count = dims?.every((d) => Number.isSafeInteger(d) && d >= 0) ? dims.reduce((a, b) => a * b, 1) : -1;
      if (count !== lengthOf.call(tensor)) {
        const dim = (d) => (typeof d === 'number' ? String(d) : describe(d));
        const given = dims
          ? `[${dims.map(dim).join(', ')}] for data of length ${lengthOf.call(tensor)}`
          : describe(shape);
        throw this.rangeError(
          `${name}.shape`,
          'a list of non-negative integers whose product is the length of its data',
          given,
        );
      }
    }
    return tensor;
  }

  // formula: a string, or a function that makes it (built only for the error: a call checks a
  // dozen lengths, and a small call notices the strings).
  length(name, tensor, expected, formula) {
    if (tensor !== null && lengthOf.call(tensor) !== expected) {
      // formula reads like "batch·seqLen·dModel = 2·4·8"; a bare name ("embedDim = 8") adds no step.
      const text = textOf(formula);
      const full = text.includes('·') ? `${text} = ${expected}` : text;
      throw this.rangeError(name, `of length ${full}`, `length ${lengthOf.call(tensor)}`);
    }
  }

  // A mask: Uint8Array or boolean[] (true/1 = masked), Float32Array or Float64Array (added to the
  // scores). A plain number[] is refused: 1 could mean "masked" or "add 1", and guessing is silent.
  // Returns { data, kind } with kind as the engine names it ('boolean' or 'additive'), or null.
  mask(name) {
    const v = this.args[name];
    if (v === undefined || v === null) return null;
    this.masks ??= new Map();
    if (!this.masks.has(name)) this.masks.set(name, this.readMask(name));
    return this.masks.get(name);
  }

  readMask(name) {
    const v = this.args[name];
    if (v === undefined || v === null) return null;
    const typed = typedArrayName(v);
    if (typed === 'Uint8Array') return { data: freshView(v, Uint8Array), kind: 'boolean' };
    if (typed === 'Float32Array') return { data: freshView(v, Float32Array), kind: 'additive' };
    if (typed === 'Float64Array') return { data: freshView(v, Float64Array), kind: 'additive' };
    if (typed === 'Float16Array') return { data: widenedF16(v), kind: 'additive' };
    const expected =
      'a Uint8Array or boolean[] (masked where true) or a Float32Array, Float16Array or Float64Array (added to the scores)';
    if (typed === undefined && isArray(v)) {
      const n = v.length;
      const data = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const x = v[i];
        if (typeof x !== 'boolean') {
          throw new TypeError(
            `${this.fn}: ${name} must be ${expected}, got an Array whose element ${i} is ${describe(x)}`,
          );
        }
        data[i] = x ? 1 : 0;
      }
      return { data, kind: 'boolean' };
    }
    throw this.typeError(name, expected, v);
  }

  // A size the caller may give or leave to be inferred from a tensor's length.
  inferred(name, tensorName, length, per, formula) {
    const given = this.args[name];
    if (given !== undefined) {
      const size = this.size(name);
      if (size * per !== length) {
        throw this.rangeError(
          tensorName,
          `of length ${name}·${textOf(formula).split(' = ')[0]} = ${size * per} (${name} = ${size})`,
          `length ${length}`,
        );
      }
      return size;
    }
    if (length === 0 || length % per !== 0) {
      throw this.rangeError(
        tensorName,
        `of length ${name}·${textOf(formula)}, a positive multiple of ${per} (${name} is inferred from it)`,
        `length ${length}`,
      );
    }
    return length / per;
  }
}
