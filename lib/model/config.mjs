// readModelConfig: a Hugging Face config.json (parsed) → the normalised description a model runtime
// builds its layer graph from, with transformers' defaults for every key a checkpoint may leave out.
// Plain JavaScript, no engine. What each family reads is in its file under families/ (semantics of
// transformers' modeling code); this file has the readers of config.json's keys they share.
import { describe } from '../values.mjs';
import { SUPPORTED_MODEL_TYPES, familyOf } from './families/registry.mjs';

export { SUPPORTED_MODEL_TYPES };
const FN = 'readModelConfig';
/** The contract's model.config: these keys of readModelConfig's result, in this order, and no others. */
export const CONFIG_KEYS = Object.freeze([
  'modelType',
  'numLayers',
  'hiddenSize',
  'numHeads',
  'numKvHeads',
  'headDim',
  'vocabSize',
  'maxPositions',
  'causal',
]);
const ROPE_KINDS = ['default', 'linear', 'llama3'];
// transformers' ACT2FN names → the kernels that compute them (gelu_new and gelu_pytorch_tanh are
// one formula; `gelu` is the exact erf form).
const ACTIVATIONS = {
  silu: 'silu',
  swish: 'silu',
  gelu: 'gelu_erf',
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
};

const has = (object, key) => Object.hasOwn(object, key) && object[key] !== null && object[key] !== undefined;

function read(config, key, fallback) {
  return has(config, key) ? config[key] : fallback;
}

function size(config, key, fallback) {
  const value = read(config, key, fallback);
  if (value === undefined) throw new TypeError(`${FN}: config.json has no ${key}`);
  if (typeof value !== 'number') throw new TypeError(`${FN}: config.${key} must be a number, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`${FN}: config.${key} must be a positive integer, got ${value}`);
  return value;
}

function positive(config, key, fallback, where = 'config') {
  const value = read(config, key, fallback);
  if (typeof value !== 'number') throw new TypeError(`${FN}: ${where}.${key} must be a number, got ${describe(value)}`);
  if (!(value > 0) || !Number.isFinite(value))
    throw new RangeError(`${FN}: ${where}.${key} must be a positive finite number, got ${value}`);
  return value;
}

function flag(config, key, fallback) {
  const value = read(config, key, fallback);
  if (typeof value !== 'boolean')
    throw new TypeError(`${FN}: config.${key} must be true or false, got ${describe(value)}`);
  return value;
}

function activation(config, key, fallback) {
  const name = read(config, key, fallback);
  if (!Object.hasOwn(ACTIVATIONS, name)) {
    throw new RangeError(
      `${FN}: config.${key} ${JSON.stringify(name)} is not supported: one of ${Object.keys(ACTIVATIONS).join(', ')}`,
    );
  }
  return ACTIVATIONS[name];
}

// eos_token_id may be one id or a list (Llama 3 has several).
function tokenIds(config, key) {
  const value = read(config, key, []);
  const ids = Array.isArray(value) ? value : [value];
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 0)
      throw new RangeError(`${FN}: config.${key} must be a token id or a list of them, got ${JSON.stringify(value)}`);
  }
  return ids;
}

/** rope_scaling (key `rope_type`, or the older `type`) → null or its parameters; `default` is none. */
function ropeScaling(config) {
  const scaling = read(config, 'rope_scaling', null);
  if (scaling === null) return null;
  if (typeof scaling !== 'object' || Array.isArray(scaling))
    throw new TypeError(`${FN}: config.rope_scaling must be an object or null, got ${describe(scaling)}`);
  const kind = read(scaling, 'rope_type', read(scaling, 'type', 'default'));
  if (!ROPE_KINDS.includes(kind)) {
    throw new RangeError(
      `${FN}: config.rope_scaling kind ${JSON.stringify(kind)} is not supported: one of ${ROPE_KINDS.join(', ')}`,
    );
  }
  const sub = (key) => positive(scaling, key, undefined, 'config.rope_scaling');
  if (kind === 'default') return null;
  if (kind === 'linear') return { kind, factor: sub('factor') };
  const scaled = {
    kind,
    factor: sub('factor'),
    lowFreqFactor: sub('low_freq_factor'),
    highFreqFactor: sub('high_freq_factor'),
    originalMaxPositions: sub('original_max_position_embeddings'),
  };
  if (!(scaled.highFreqFactor > scaled.lowFreqFactor)) {
    throw new RangeError(
      `${FN}: config.rope_scaling.high_freq_factor (${scaled.highFreqFactor}) must exceed low_freq_factor (${scaled.lowFreqFactor})`,
    );
  }
  return scaled;
}

/** The readers of one config.json's keys that a family's readConfig is given (families/*.mjs). */
function keyReaders(config) {
  return {
    has: (key) => has(config, key),
    isNull: (key) => config[key] === null,
    value: (key, fallback) => read(config, key, fallback),
    size: (key, fallback) => size(config, key, fallback),
    positive: (key, fallback) => positive(config, key, fallback),
    flag: (key, fallback) => flag(config, key, fallback),
    activation: (key, fallback) => activation(config, key, fallback),
    ropeScaling: () => ropeScaling(config),
    rangeError: (text) => new RangeError(`${FN}: ${text}`),
  };
}

/**
 * @param {object} config the parsed config.json
 * @returns the contract's `{ modelType, numLayers, hiddenSize, numHeads, numKvHeads, headDim,
 *   vocabSize, maxPositions, causal }` and what the runtime needs besides (norm, activation, mlp,
 *   positions, rope, windows, biases, tied embeddings, token types, attention scale, eos/bos ids).
 */
export function readModelConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TypeError(`${FN}: config must be the parsed config.json (an object), got ${describe(config)}`);
  }
  const modelType = config.model_type;
  const family = familyOf(modelType);
  if (family === undefined) {
    throw new RangeError(
      `${FN}: config.model_type ${JSON.stringify(modelType)} is not supported: one of ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  }
  return {
    modelType,
    ...family.readConfig(keyReaders(config), modelType),
    eosTokenIds: tokenIds(config, 'eos_token_id'),
    bosTokenId: read(config, 'bos_token_id', null),
  };
}

/**
 * RoPE's inverse frequencies (modeling_rope_utils: the default ones, then the linear or llama3
 * rescaling), in float64: rope.dim / 2 of them; entry i rotates the pair (i, i + dim/2) of a head by
 * position · invFreq[i].
 */
export function ropeInverseFrequencies(rope) {
  const { base, dim, scaling } = rope;
  const freq = Float64Array.from({ length: dim / 2 }, (_, i) => 1 / base ** ((2 * i) / dim));
  if (scaling === null) return freq;
  if (scaling.kind === 'linear') return freq.map((f) => f / scaling.factor);
  // llama3: long wavelengths slowed by `factor`, short ones kept, the band between blended.
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxPositions: context } = scaling;
  return freq.map((f) => {
    const wavelength = (2 * Math.PI) / f;
    if (wavelength < context / high) return f;
    if (wavelength > context / low) return f / factor;
    const smooth = (context / wavelength - low) / (high - low);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}
