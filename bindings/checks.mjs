// Argument checks with errors a user can act on: each names the function, the argument, what
// was expected and what was given (API.md, "Errors").

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an Array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) {
    const name = value.constructor.name;
    return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name} of length ${value.length}`;
  }
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 20 ? value.slice(0, 20) + '…' : value)}`;
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'nothing (undefined)';
  return `${typeof value} ${String(value)}`;
}

export class Checker {
  constructor(fn, args) {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new TypeError(`${fn}: expected one object of named arguments, got ${describe(args)}`);
    }
    this.fn = fn;
    this.args = args;
  }

  typeError(name, expected, value) {
    return new TypeError(`${this.fn}: ${name} must be ${expected}, got ${describe(value)}`);
  }

  rangeError(name, expected, given) {
    return new RangeError(`${this.fn}: ${name} must be ${expected}, got ${given}`);
  }

  // Rejects names the function does not know, so a typo (needweights) does not pass silently.
  onlyKnown(known) {
    for (const name of Object.keys(this.args)) {
      if (!known.has(name) && this.args[name] !== undefined) {
        throw new TypeError(`${this.fn}: unknown argument ${name} (known: ${[...known].join(', ')})`);
      }
    }
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

  number(name, fallback) {
    const v = this.args[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'number') throw this.typeError(name, 'a number', v);
    if (!Number.isFinite(v)) throw this.rangeError(name, 'a finite number', v);
    return v;
  }

  // A tensor: Float32Array, Float64Array or number[]. Returns it unchanged (copied into the heap later).
  tensor(name, { required = true } = {}) {
    const v = this.args[name];
    if (v === undefined || v === null) {
      if (required) throw this.typeError(name, 'a Float32Array (required)', v);
      return null;
    }
    if (v instanceof Float32Array || v instanceof Float64Array) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] !== 'number') throw this.typeError(`${name}[${i}]`, 'a number', v[i]);
      }
      return v;
    }
    throw this.typeError(name, 'a Float32Array, Float64Array or number[]', v);
  }

  length(name, tensor, expected, formula) {
    if (tensor !== null && tensor.length !== expected) {
      // formula reads like "batch·seqLen·dModel = 2·4·8"; a bare name ("embedDim = 8") adds no step.
      const full = formula.includes('·') ? `${formula} = ${expected}` : formula;
      throw this.rangeError(name, `of length ${full}`, `length ${tensor.length}`);
    }
  }

  // A mask: Uint8Array or boolean[] (true/1 = masked), Float32Array or Float64Array (added to the
  // scores). A plain number[] is refused: 1 could mean "masked" or "add 1", and guessing is silent.
  // Returns { data, kind } or null.
  mask(name) {
    const v = this.args[name];
    if (v === undefined || v === null) return null;
    if (v instanceof Uint8Array) return { data: v, kind: 'bool' };
    if (v instanceof Float32Array || v instanceof Float64Array) return { data: v, kind: 'float' };
    if (Array.isArray(v) && v.every((b) => typeof b === 'boolean')) return { data: Uint8Array.from(v, Number), kind: 'bool' };
    throw this.typeError(name, 'a Uint8Array or boolean[] (masked where true) or a Float32Array (added to the scores)', v);
  }

  // A size the caller may give or leave to be inferred from a tensor's length.
  inferred(name, tensorName, length, per, perFormula) {
    const given = this.args[name];
    if (given !== undefined) {
      const size = this.size(name);
      if (size * per !== length) {
        throw this.rangeError(tensorName, `of length ${name}·${perFormula.split(' = ')[0]} = ${size * per} (${name} = ${size})`, `length ${length}`);
      }
      return size;
    }
    if (length === 0 || length % per !== 0) {
      throw this.rangeError(tensorName, `of length ${name}·${perFormula}, a positive multiple of ${per} (${name} is inferred from it)`, `length ${length}`);
    }
    return length / per;
  }
}
