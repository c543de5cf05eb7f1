// The arguments of a model's calls (forward, createSession, generate), checked before anything runs:
// each error names the call, the argument, what was expected and what was given, and nothing has
// changed when it is thrown (a session keeps its length).
import { Checker, describe, typedArrayName, typedLength } from '../attention/checks.mjs';

const INTEGER_ARRAYS = ['Int32Array', 'Uint32Array', 'Int16Array', 'Uint16Array', 'Int8Array', 'Uint8Array'];
export const FORWARD_OPTIONS = new Set(['session', 'attention', 'logits', 'tokenTypeIds', 'hiddenStates']);
export const SESSION_OPTIONS = new Set(['maxLength', 'kvDtype']);
export const GENERATE_OPTIONS = new Set([
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'stopAtEos',
  'session',
  'onToken',
  'attention',
]);
// What model.createSampler takes: generate's sampling options, checked alike (samplingOptions).
export const SAMPLER_OPTIONS = new Set(['temperature', 'topK', 'topP', 'seed']);
export const LOAD_OPTIONS = new Set(['dtype', 'onProgress', 'signal', 'fetch', 'fetchOptions']);
const LOGITS = ['all', 'last', 'none'];
const REDUCED_DTYPES = ['f16', 'bf16', 'int8'];

/** A Checker over an options object that may be absent. */
export function optionsOf(fn, options, known) {
  return new Checker(fn, options === undefined || options === null ? {} : options, known);
}

/**
 * Token ids (Int32Array, number[], or another integer typed array) as a fresh Int32Array, each an
 * integer in [0, limit): `limitName` names the limit and `outside` says what an id past it is not.
 */
export function tokenIds(fn, name, value, limit, limitName = 'vocabSize', outside = 'in the vocabulary') {
  const typed = typedArrayName(value);
  if (!Array.isArray(value) && !INTEGER_ARRAYS.includes(typed)) {
    throw new TypeError(`${fn}: ${name} must be an Int32Array or an array of integers, got ${describe(value)}`);
  }
  const n = typed ? typedLength(value) : value.length;
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const id = value[i];
    if (typeof id !== 'number') throw new TypeError(`${fn}: ${name}[${i}] must be an integer, got ${describe(id)}`);
    if (!Number.isInteger(id) || id < 0 || id >= limit) {
      throw new RangeError(
        `${fn}: ${name}[${i}] = ${id} is not ${outside}: ${name} must hold integers from 0 to ${limitName} − 1 = ${limit - 1}`,
      );
    }
    ids[i] = id;
  }
  return ids;
}

/** An integer list's entries, each once, each in [0, limit). */
function indexList(c, name, value, limit, what) {
  if (!Array.isArray(value)) throw c.typeError(name, `an array of ${what} indices`, value);
  if (value.length === 0) throw c.rangeError(name, `a non-empty array of ${what} indices`, '[]');
  const seen = new Set();
  return value.map((x, i) => {
    if (typeof x !== 'number') throw c.typeError(`${name}[${i}]`, `a ${what} index`, x);
    if (!Number.isInteger(x) || x < 0 || x >= limit) {
      throw c.rangeError(`${name}[${i}]`, `an integer from 0 to ${limit - 1} (the model's ${what}s)`, x);
    }
    if (seen.has(x)) throw c.rangeError(name, `${what} indices each listed once`, `${x} twice`);
    seen.add(x);
    return x;
  });
}

/**
 * attention: false | true | { layers, heads } (either list may be left out: every layer, every head)
 * → null or { layers, heads } for the engine.
 */
export function attentionSelection(c, config) {
  const value = c.args.attention;
  if (value === undefined || value === false || value === null) return null;
  const all = (n) => Array.from({ length: n }, (_, i) => i);
  if (value === true) return { layers: all(config.numLayers), heads: all(config.numHeads) };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw c.typeError('attention', 'true, false or { layers: number[], heads: number[] }', value);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'layers' && key !== 'heads' && value[key] !== undefined) {
      throw new TypeError(`${c.fn}: attention has an unknown key ${key} (known: layers, heads)`);
    }
  }
  const { layers, heads } = value;
  return {
    layers:
      layers === undefined
        ? all(config.numLayers)
        : indexList(c, 'attention.layers', layers, config.numLayers, 'layer'),
    heads: heads === undefined ? all(config.numHeads) : indexList(c, 'attention.heads', heads, config.numHeads, 'head'),
  };
}

/**
 * hiddenStates: false | true | { layers } → null or the entries to copy out, each in 0 … numLayers
 * (entry l is layer l's input; numLayers the final hidden states), as transformers'
 * output_hidden_states numbers them. `layers` left out: every entry.
 */
export function hiddenStatesSelection(c, config) {
  const value = c.args.hiddenStates;
  if (value === undefined || value === false || value === null) return null;
  const every = Array.from({ length: config.numLayers + 1 }, (_, i) => i);
  if (value === true) return every;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw c.typeError('hiddenStates', 'true, false or { layers: number[] }', value);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'layers' && value[key] !== undefined) {
      throw new TypeError(`${c.fn}: hiddenStates has an unknown key ${key} (known: layers)`);
    }
  }
  const { layers } = value;
  if (layers === undefined) return every;
  return indexList(c, 'hiddenStates.layers', layers, config.numLayers + 1, 'hidden state');
}

/** logits: 'all' (default) | 'last' | 'none'. */
export function logitsChoice(c) {
  const value = c.args.logits;
  if (value === undefined) return 'all';
  if (typeof value !== 'string') throw c.typeError('logits', "'all', 'last' or 'none'", value);
  if (!LOGITS.includes(value)) throw c.rangeError('logits', "'all', 'last' or 'none'", JSON.stringify(value));
  return value;
}

/**
 * A weight or cache dtype: 'f32' is what this version stores. The reduced ones ('f16', 'bf16',
 * 'int8') are named as not yet stored, so a caller knows the option exists and what to use.
 */
export function storageDtype(c, name, fallback = 'f32') {
  const value = c.args[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw c.typeError(name, "'f32'", value);
  if (value === 'f32') return value;
  if (REDUCED_DTYPES.includes(value)) {
    throw c.rangeError(
      name,
      `'f32': this version stores 'f32' only (${REDUCED_DTYPES.map((d) => `'${d}'`).join(', ')} come with reduced precision, a later version)`,
      `'${value}'`,
    );
  }
  throw c.rangeError(name, "'f32'", JSON.stringify(value));
}

/** A function option, or undefined. */
export function callback(c, name) {
  const value = c.args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw c.typeError(name, 'a function', value);
  return value;
}

/** An integer ≥ 0. */
export function count(c, name, fallback) {
  const value = c.args[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw c.typeError(name, 'an integer ≥ 0', value);
  if (!Number.isSafeInteger(value) || value < 0) throw c.rangeError(name, 'an integer ≥ 0', value);
  return value;
}

/** A number in a range (`ok`), described by `expected`. */
export function number(c, name, fallback, ok, expected) {
  const value = c.args[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw c.typeError(name, expected, value);
  if (!ok(value)) throw c.rangeError(name, expected, value);
  return value;
}

/**
 * temperature, topK, topP and seed, as generate and model.createSampler take them (lib/model/sampling.mjs's
 * createSampler reads the result).
 */
export function samplingOptions(c) {
  return {
    temperature: number(c, 'temperature', 0, (t) => t >= 0 && Number.isFinite(t), 'a finite number ≥ 0'),
    topK: count(c, 'topK', 0),
    topP: number(c, 'topP', 1, (p) => p > 0 && p <= 1, 'a number in (0, 1]'),
    seed: number(c, 'seed', undefined, Number.isSafeInteger, 'an integer'),
  };
}
