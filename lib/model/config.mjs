// readModelConfig: a Hugging Face config.json (parsed) → the normalised description a model runtime
// builds its layer graph from, with transformers' defaults for every key a checkpoint may leave out.
// Plain JavaScript, no engine. Families and their semantics follow transformers' modeling code:
//   llama, mistral, qwen2  pre-norm RMSNorm, RoPE, grouped-query attention, SwiGLU MLP
//   gpt2                   learned positions, pre-norm LayerNorm, Conv1D weights, tied head
//   bert                   post-norm LayerNorm encoder, token types, masked-LM head
import { describe } from '../values.mjs';

const FN = 'readModelConfig';
export const SUPPORTED_MODEL_TYPES = ['llama', 'mistral', 'qwen2', 'gpt2', 'bert'];
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

// transformers' LlamaConfig, MistralConfig and Qwen2Config defaults.
const DEFAULT_MAX_POSITIONS = { llama: 2048, mistral: 4096 * 32, qwen2: 32768 };

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

function decoderConfig(config, modelType) {
  const hiddenSize = size(config, 'hidden_size');
  const numHeads = size(config, 'num_attention_heads');
  const numKvHeads = size(config, 'num_key_value_heads', numHeads);
  const headDim = has(config, 'head_dim') ? size(config, 'head_dim') : hiddenSize / numHeads;
  if (!Number.isInteger(headDim))
    throw new RangeError(
      `${FN}: hidden_size (${hiddenSize}) must be a multiple of num_attention_heads (${numHeads}) when head_dim is not given`,
    );
  if (numHeads % numKvHeads !== 0)
    throw new RangeError(
      `${FN}: num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`,
    );
  const factor = positive(config, 'partial_rotary_factor', 1);
  // transformers: dim = int(head_dim · partial_rotary_factor), rotated as pairs (i, i + dim/2).
  const ropeDim = Math.floor(headDim * factor);
  if (factor > 1 || ropeDim < 2 || ropeDim % 2 !== 0) {
    throw new RangeError(
      `${FN}: partial_rotary_factor ${factor} × head_dim ${headDim} must give an even number of rotated entries from 2 to head_dim, got ${ropeDim}`,
    );
  }
  const numLayers = size(config, 'num_hidden_layers');
  // Mistral windows every layer; Qwen2 only with use_sliding_window, and only from layer
  // max_window_layers on (transformers' layer_types); Llama never.
  let window = null;
  let windowFrom = 0;
  // MistralConfig's default window is 4096; an explicit null turns it off.
  if (modelType === 'mistral') window = config.sliding_window === null ? null : size(config, 'sliding_window', 4096);
  if (modelType === 'qwen2' && flag(config, 'use_sliding_window', false)) {
    window = size(config, 'sliding_window');
    windowFrom = read(config, 'max_window_layers', 28);
  }
  const attentionBias = flag(config, 'attention_bias', false);
  return {
    numLayers,
    hiddenSize,
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: size(config, 'intermediate_size'),
    vocabSize: size(config, 'vocab_size'),
    maxPositions: size(config, 'max_position_embeddings', DEFAULT_MAX_POSITIONS[modelType]),
    causal: true,
    norm: { kind: 'rms', placement: 'pre', eps: positive(config, 'rms_norm_eps', 1e-6) },
    activation: activation(config, 'hidden_act', 'silu'),
    mlp: 'gated',
    positions: 'rope',
    rope: { base: positive(config, 'rope_theta', 10000), dim: ropeDim, scaling: ropeScaling(config) },
    slidingWindow: window,
    layerWindows: Array.from({ length: numLayers }, (_, i) => (window !== null && i >= windowFrom ? window : null)),
    biases: {
      qkv: attentionBias || modelType === 'qwen2',
      output: attentionBias,
      mlp: flag(config, 'mlp_bias', false),
    },
    tieWordEmbeddings: flag(config, 'tie_word_embeddings', false),
    typeVocabSize: 0,
    attentionScale: 1 / Math.sqrt(headDim),
  };
}

// GPT-2 and BERT share one layout (learned positions, LayerNorm, a plain MLP, a bias on every linear
// layer, no window); they differ in their config.json's key names and defaults, tabled here.
// prettier-ignore
const LEARNED_POSITIONS = {
  gpt2: { hidden: 'n_embd', heads: 'n_head', layers: 'n_layer', inner: 'n_inner', positions: 'n_positions',
    eps: ['layer_norm_epsilon', 1e-5], act: ['activation_function', 'gelu_new'], placement: 'pre', causal: true },
  bert: { hidden: 'hidden_size', heads: 'num_attention_heads', layers: 'num_hidden_layers', inner: 'intermediate_size',
    positions: 'max_position_embeddings', eps: ['layer_norm_eps', 1e-12], act: ['hidden_act', 'gelu'], placement: 'post',
    causal: false },
};

function learnedPositionsConfig(config, family) {
  const keys = LEARNED_POSITIONS[family];
  const hiddenSize = size(config, keys.hidden);
  const numHeads = size(config, keys.heads);
  if (hiddenSize % numHeads !== 0) {
    throw new RangeError(`${FN}: ${keys.hidden} (${hiddenSize}) must be a multiple of ${keys.heads} (${numHeads})`);
  }
  const gpt2 = family === 'gpt2';
  if (gpt2 && flag(config, 'scale_attn_by_inverse_layer_idx', false)) {
    throw new RangeError(`${FN}: config.scale_attn_by_inverse_layer_idx is not supported`);
  }
  if (!gpt2) {
    const kind = read(config, 'position_embedding_type', 'absolute');
    if (kind !== 'absolute')
      throw new RangeError(
        `${FN}: config.position_embedding_type ${JSON.stringify(kind)} is not supported: only "absolute"`,
      );
  }
  const headDim = hiddenSize / numHeads;
  const numLayers = size(config, keys.layers);
  return {
    numLayers,
    hiddenSize,
    numHeads,
    numKvHeads: numHeads,
    headDim,
    intermediateSize: gpt2 ? size(config, keys.inner, 4 * hiddenSize) : size(config, keys.inner),
    vocabSize: size(config, 'vocab_size'),
    maxPositions: size(config, keys.positions),
    causal: keys.causal,
    norm: { kind: 'layer', placement: keys.placement, eps: positive(config, ...keys.eps) },
    activation: activation(config, ...keys.act),
    mlp: 'plain',
    positions: 'learned',
    rope: null,
    slidingWindow: null,
    layerWindows: Array(numLayers).fill(null),
    biases: { qkv: true, output: true, mlp: true },
    tieWordEmbeddings: flag(config, 'tie_word_embeddings', true),
    typeVocabSize: gpt2 ? 0 : size(config, 'type_vocab_size', 2),
    attentionScale: !gpt2 || flag(config, 'scale_attn_weights', true) ? 1 / Math.sqrt(headDim) : 1,
  };
}

const FAMILIES = {
  llama: decoderConfig,
  mistral: decoderConfig,
  qwen2: decoderConfig,
  gpt2: (config) => learnedPositionsConfig(config, 'gpt2'),
  bert: (config) => learnedPositionsConfig(config, 'bert'),
};

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
  if (!Object.hasOwn(FAMILIES, modelType)) {
    throw new RangeError(
      `${FN}: config.model_type ${JSON.stringify(modelType)} is not supported: one of ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  }
  const family = FAMILIES[modelType](config, modelType);
  return {
    modelType,
    ...family,
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
