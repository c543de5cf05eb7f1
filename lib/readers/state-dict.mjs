// attentionArgsFromStateDict: the weights of one attention module of a PyTorch state_dict (or the
// tensors of readSafetensors) as the arguments createMultiHeadAttention / multiHeadAttention take.
// Plain JavaScript, no engine. Strict on purpose: a name under the prefix that maps to nothing is an
// error, because a weight silently left out gives a layer that runs and computes something else.
import { describe, typedArrayName, typedLength } from '../values.mjs';
import { floatsOfBf16, floatsOfF16 } from './half-float.mjs';

const FN = 'attentionArgsFromStateDict';

// Both naming schemes users have: torch.nn.MultiheadAttention's, and Hugging Face / LLaMA's
// q_proj / k_proj / v_proj / o_proj Linear layers (some models name the output out_proj).
const ARGUMENT_OF = {
  in_proj_weight: 'inProjWeight',
  in_proj_bias: 'inProjBias',
  q_proj_weight: 'qProjWeight',
  k_proj_weight: 'kProjWeight',
  v_proj_weight: 'vProjWeight',
  'q_proj.weight': 'qProjWeight',
  'k_proj.weight': 'kProjWeight',
  'v_proj.weight': 'vProjWeight',
  'o_proj.weight': 'outProjWeight',
  'out_proj.weight': 'outProjWeight',
  'q_proj.bias': 'qProjBias',
  'k_proj.bias': 'kProjBias',
  'v_proj.bias': 'vProjBias',
  'o_proj.bias': 'outProjBias',
  'out_proj.bias': 'outProjBias',
};
// nn.MultiheadAttention(add_bias_kv=True) appends a learned key and value to every sequence.
const UNSUPPORTED = new Set(['bias_k', 'bias_v']);

const listed = (names, most = 8) =>
  names
    .slice(0, most)
    .map((n) => JSON.stringify(n))
    .join(', ') + (names.length > most ? `, … (${names.length} in all)` : '');

// The tensor under `name` as a Float32Array: a Float32Array as it is (no copy: the engine copies
// weights into WebAssembly memory when a layer is created), a Float64Array or number[] converted.
function floats(name, entry) {
  const wrapped = entry !== null && typeof entry === 'object' && !Array.isArray(entry) && !typedArrayName(entry);
  const data = wrapped ? entry.data : entry;
  const typed = typedArrayName(data);
  let out;
  if (typed === 'Float32Array') out = data;
  else if (typed === 'Float64Array' || typed === 'Float16Array')
    out = new Float32Array(data); // F16: exact
  else if (typed === 'Uint16Array' && wrapped && (entry.dtype === 'F16' || entry.dtype === 'BF16'))
    out = (entry.dtype === 'F16' ? floatsOfF16 : floatsOfBf16)(data); // readSafetensors(…, { widen: false })
  else if (typed === undefined && Array.isArray(data) && data.every((x) => typeof x === 'number'))
    out = Float32Array.from(data);
  else {
    const what =
      wrapped && typeof entry.dtype === 'string' ? `dtype ${entry.dtype} (${describe(data)})` : describe(data);
    throw new TypeError(
      `${FN}: ${JSON.stringify(name)} must be a floating-point tensor (Float32Array, Float16Array, Float64Array, number[], or { data } of one), got ${what}`,
    );
  }
  const shape = wrapped ? entry.shape : undefined;
  if (shape !== undefined) checkShape(name, shape, typedLength(out));
  return out;
}

// When the state dict says a shape, a weight must be a matrix and a bias a vector of that many values.
// Each dimension a non-negative integer number: [-4, -4] or ['4', '4'] multiply to 16 too, and a
// BigInt cannot be multiplied with a number at all.
function checkShape(name, shape, length) {
  const rank = /bias$/.test(name) ? 1 : 2;
  const expected = `${rank === 1 ? 'a shape [n]' : 'a shape [out, in]'} matching its ${length} values`;
  const dims = Array.isArray(shape) ? Array.from(shape) : null;
  if (dims === null || !dims.every((d) => typeof d === 'number')) {
    const given = dims === null ? describe(shape) : `shape [${dims.map(describe).join(', ')}]`;
    throw new TypeError(`${FN}: ${JSON.stringify(name)} must have ${expected} (dimensions are numbers), got ${given}`);
  }
  const integers = dims.every((d) => Number.isSafeInteger(d) && d >= 0);
  if (dims.length !== rank || !integers || dims.reduce((a, b) => a * b, 1) !== length) {
    const why = integers ? '' : ' (each dimension must be a non-negative integer)';
    throw new RangeError(
      `${FN}: ${JSON.stringify(name)} must have ${expected}, got shape ${JSON.stringify(dims)}${why}`,
    );
  }
}

/**
 * Weight arguments of createMultiHeadAttention from the tensors whose names start with `prefix`.
 * @param {Record<string, Float32Array | Float64Array | number[] | { data: any, shape?: number[] }>} stateDict
 * @param {string} [prefix] e.g. 'model.layers.0.self_attn.' (with its trailing dot)
 */
export function attentionArgsFromStateDict(stateDict, prefix = '') {
  if (stateDict === null || typeof stateDict !== 'object' || Array.isArray(stateDict) || typedArrayName(stateDict)) {
    throw new TypeError(
      `${FN}: stateDict must be an object of named tensors (a state_dict, or readSafetensors(…).tensors), got ${describe(stateDict)}`,
    );
  }
  if (stateDict instanceof Map) {
    throw new TypeError(
      `${FN}: stateDict must be an object of named tensors, got a Map (pass Object.fromEntries(map))`,
    );
  }
  if (typeof prefix !== 'string') throw new TypeError(`${FN}: prefix must be a string, got ${describe(prefix)}`);
  const all = Object.keys(stateDict);
  const names = all.filter((n) => n.startsWith(prefix));
  if (names.length === 0) {
    throw new TypeError(
      `${FN}: no tensor name starts with the prefix ${JSON.stringify(prefix)}; ` +
        (all.length ? `the state dict has ${listed(all, 5)}` : 'the state dict is empty'),
    );
  }
  const unsupported = names.filter((n) => UNSUPPORTED.has(n.slice(prefix.length)));
  if (unsupported.length) {
    throw new TypeError(
      `${FN}: ${listed(unsupported)}: nn.MultiheadAttention's add_bias_kv (bias_k, bias_v) is not supported by the engine`,
    );
  }
  const unknown = names.filter((n) => !Object.hasOwn(ARGUMENT_OF, n.slice(prefix.length)));
  if (unknown.length) {
    const dot =
      prefix && !prefix.endsWith('.') && unknown.some((n) => n[prefix.length] === '.')
        ? `; a module's prefix ends with its dot, as in ${JSON.stringify(`${prefix}.`)}`
        : '';
    throw new TypeError(
      `${FN}: unrecognised tensor names under the prefix ${JSON.stringify(prefix)}: ${listed(unknown)} ` +
        `(recognised after the prefix: ${Object.keys(ARGUMENT_OF).join(', ')}; remove other tensors or narrow the prefix${dot})`,
    );
  }
  const args = {};
  const source = {};
  for (const name of names) {
    const argument = ARGUMENT_OF[name.slice(prefix.length)];
    if (argument in args) {
      throw new TypeError(
        `${FN}: both ${JSON.stringify(source[argument])} and ${JSON.stringify(name)} give ${argument}; keep one`,
      );
    }
    args[argument] = floats(name, stateDict[name]);
    source[argument] = name;
  }
  // Every attention module has one, and the engine needs it: its absence means a wrong prefix.
  if (!args.outProjWeight) {
    throw new TypeError(
      `${FN}: no output projection (out_proj.weight or o_proj.weight) under the prefix ${JSON.stringify(prefix)}; found ${listed(names)}`,
    );
  }
  return args;
}
