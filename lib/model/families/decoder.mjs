// The llama-shaped decoders: pre-norm RMSNorm, RoPE, grouped-query attention, a SwiGLU MLP, a final
// norm and an LM head (tied or not), as transformers' modeling code runs them. The model types differ
// only in a row of TYPES; a new llama-shaped type is a new row there (plus its fixture).

// Which layers a sliding window hides keys in: { window, from } (every layer from `from` on).
const WINDOWS = {
  none: () => ({ window: null, from: 0 }),
  // Mistral: every layer; its default window is 4096, an explicit null turns it off.
  everyLayer: (keys) => ({
    window: keys.isNull('sliding_window') ? null : keys.size('sliding_window', 4096),
    from: 0,
  }),
  // Qwen2: only with use_sliding_window, and from layer max_window_layers on (transformers' layer_types).
  fromMaxWindowLayers: (keys) =>
    keys.flag('use_sliding_window', false)
      ? { window: keys.size('sliding_window'), from: keys.value('max_window_layers', 28) }
      : { window: null, from: 0 },
};

// transformers' LlamaConfig, MistralConfig and Qwen2Config: maxPositions is max_position_embeddings
// when config.json leaves it out; qkvBias, Q, K and V projections with a bias even without
// attention_bias.
// prettier-ignore
const TYPES = {
  llama:   { maxPositions: 2048,      windows: WINDOWS.none,                qkvBias: false },
  mistral: { maxPositions: 4096 * 32, windows: WINDOWS.everyLayer,          qkvBias: false },
  qwen2:   { maxPositions: 32768,     windows: WINDOWS.fromMaxWindowLayers, qkvBias: true },
};

// head_dim (given, or hidden / heads), and RoPE's rotated entries: transformers' dim =
// int(head_dim · partial_rotary_factor), rotated as pairs (i, i + dim/2).
function headShape(keys, hiddenSize, numHeads, numKvHeads) {
  const headDim = keys.has('head_dim') ? keys.size('head_dim') : hiddenSize / numHeads;
  if (!Number.isInteger(headDim))
    throw keys.rangeError(
      `hidden_size (${hiddenSize}) must be a multiple of num_attention_heads (${numHeads}) when head_dim is not given`,
    );
  if (numHeads % numKvHeads !== 0)
    throw keys.rangeError(
      `num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`,
    );
  const factor = keys.positive('partial_rotary_factor', 1);
  const ropeDim = Math.floor(headDim * factor);
  if (factor > 1 || ropeDim < 2 || ropeDim % 2 !== 0) {
    throw keys.rangeError(
      `partial_rotary_factor ${factor} × head_dim ${headDim} must give an even number of rotated entries from 2 to head_dim, got ${ropeDim}`,
    );
  }
  return { headDim, ropeDim };
}

/** config.json (through config.mjs's key readers) → the runtime's description of the model. */
function readConfig(keys, modelType) {
  const type = TYPES[modelType];
  const hiddenSize = keys.size('hidden_size');
  const numHeads = keys.size('num_attention_heads');
  const numKvHeads = keys.size('num_key_value_heads', numHeads);
  const { headDim, ropeDim } = headShape(keys, hiddenSize, numHeads, numKvHeads);
  const numLayers = keys.size('num_hidden_layers');
  const { window, from } = type.windows(keys);
  const attentionBias = keys.flag('attention_bias', false);
  return {
    numLayers,
    hiddenSize,
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: keys.size('intermediate_size'),
    vocabSize: keys.size('vocab_size'),
    maxPositions: keys.size('max_position_embeddings', type.maxPositions),
    causal: true,
    norm: { kind: 'rms', placement: 'pre', eps: keys.positive('rms_norm_eps', 1e-6) },
    activation: keys.activation('hidden_act', 'silu'),
    mlp: 'gated',
    positions: 'rope',
    rope: { base: keys.positive('rope_theta', 10000), dim: ropeDim, scaling: keys.ropeScaling() },
    slidingWindow: window,
    layerWindows: Array.from({ length: numLayers }, (_, i) => (window !== null && i >= from ? window : null)),
    biases: { qkv: attentionBias || type.qkvBias, output: attentionBias, mlp: keys.flag('mlp_bias', false) },
    tieWordEmbeddings: keys.flag('tie_word_embeddings', false),
    typeVocabSize: 0,
    attentionScale: 1 / Math.sqrt(headDim),
  };
}

/** The checkpoint's tensors by their names (`open` finds the prefix, checkpoint.mjs's Lookup). */
function planTensors(c, open) {
  const at = open(c.modelType, 'embed_tokens.weight', ['model.', '']);
  const E = c.hiddenSize;
  const qOut = c.numHeads * c.headDim;
  const kvOut = c.numKvHeads * c.headDim;
  const tokens = at.tensor('embed_tokens.weight', [c.vocabSize, E]);
  const layers = Array.from({ length: c.numLayers }, (_, i) => {
    const p = `layers.${i}.`;
    return {
      inputNorm: at.norm(p + 'input_layernorm', E, false),
      q: at.linear(p + 'self_attn.q_proj', qOut, E, c.biases.qkv),
      k: at.linear(p + 'self_attn.k_proj', kvOut, E, c.biases.qkv),
      v: at.linear(p + 'self_attn.v_proj', kvOut, E, c.biases.qkv),
      o: at.linear(p + 'self_attn.o_proj', E, qOut, c.biases.output),
      postAttentionNorm: at.norm(p + 'post_attention_layernorm', E, false),
      gate: at.linear(p + 'mlp.gate_proj', c.intermediateSize, E, c.biases.mlp),
      up: at.linear(p + 'mlp.up_proj', c.intermediateSize, E, c.biases.mlp),
      down: at.linear(p + 'mlp.down_proj', E, c.intermediateSize, c.biases.mlp),
    };
  });
  const finalNorm = at.norm('norm', E, false);
  const lmHead = c.tieWordEmbeddings
    ? { weight: tokens, bias: null, tied: true, transform: null }
    : { weight: at.tensor('lm_head.weight', [c.vocabSize, E], false), bias: null, tied: false, transform: null };
  return { embeddings: { tokens, positions: null, tokenTypes: null, norm: null }, layers, finalNorm, lmHead };
}

export const family = { modelTypes: Object.keys(TYPES), readConfig, planTensors };
