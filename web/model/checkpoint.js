// What the model's folder holds (models/tang-poems/, a Hugging Face `llama` checkpoint), checked
// once: the configuration from config.json, the vocabulary from tokenizer.json (one token per
// character) and every tensor by its transformers name, with its shape. Files of another model fail
// here, naming what is wrong, rather than running and computing something else.

const FN = 'createPoemModel';

// config.json's keys → model.config's names.
const CONFIG_KEYS = {
  vocab_size: 'vocabSize',
  hidden_size: 'dModel',
  num_hidden_layers: 'nLayers',
  num_attention_heads: 'nHeads',
  num_key_value_heads: 'nKvHeads',
  head_dim: 'headDim',
  intermediate_size: 'ffnHidden',
  rope_theta: 'ropeBase',
  rms_norm_eps: 'normEps',
  max_position_embeddings: 'maxLen',
};
const INTEGER_KEYS = new Set([
  'vocabSize',
  'dModel',
  'nLayers',
  'nHeads',
  'nKvHeads',
  'headDim',
  'ffnHidden',
  'maxLen',
]);

export const POEM_START = '<s>';
export const LINE_BREAK = '\n';

function readConfig(raw) {
  if (raw === null || typeof raw !== 'object')
    throw new TypeError(`${FN}: config must be the parsed config.json, got ${raw === null ? 'null' : typeof raw}`);
  const config = {};
  for (const [key, name] of Object.entries(CONFIG_KEYS)) {
    const v = raw?.[key];
    const ok = INTEGER_KEYS.has(name)
      ? Number.isInteger(v) && v > 0
      : typeof v === 'number' && v > 0 && Number.isFinite(v);
    if (!ok)
      throw new RangeError(
        `${FN}: config.${key} must be a positive ${INTEGER_KEYS.has(name) ? 'integer' : 'number'}, got ${JSON.stringify(v)}`,
      );
    config[name] = v;
  }
  if (config.nHeads % config.nKvHeads !== 0) {
    throw new RangeError(
      `${FN}: config.num_attention_heads (${config.nHeads}) must be a multiple of num_key_value_heads (${config.nKvHeads})`,
    );
  }
  if (config.headDim % 2 !== 0)
    throw new RangeError(`${FN}: config.head_dim must be even for RoPE, got ${config.headDim}`);
  return Object.freeze(config);
}

function readVocab(tokenizer, vocabSize) {
  const ids = tokenizer?.model?.vocab;
  if (ids === null || typeof ids !== 'object')
    throw new TypeError(`${FN}: tokenizer must be the parsed tokenizer.json, with model.vocab`);
  const vocab = [];
  for (const [token, id] of Object.entries(ids)) vocab[id] = token;
  if (vocab.length !== vocabSize || Object.keys(ids).length !== vocabSize) {
    throw new RangeError(
      `${FN}: tokenizer.json's vocabulary has ${Object.keys(ids).length} tokens (ids up to ${vocab.length - 1}), config.vocab_size says ${vocabSize}`,
    );
  }
  if (vocab[0] !== POEM_START || vocab[1] !== LINE_BREAK) {
    throw new RangeError(
      `${FN}: tokenizer.json's vocabulary must start with ${JSON.stringify(POEM_START)} and ${JSON.stringify(LINE_BREAK)}, got ${JSON.stringify(vocab.slice(0, 2))}`,
    );
  }
  return Object.freeze(vocab.slice());
}

/** Every tensor the model needs: name → shape. */
function expectedShapes(c) {
  const shapes = { 'model.embed_tokens.weight': [c.vocabSize, c.dModel], 'model.norm.weight': [c.dModel] };
  for (let l = 0; l < c.nLayers; l++) {
    const p = `model.layers.${l}.`;
    Object.assign(shapes, {
      [`${p}input_layernorm.weight`]: [c.dModel],
      [`${p}self_attn.q_proj.weight`]: [c.nHeads * c.headDim, c.dModel],
      [`${p}self_attn.k_proj.weight`]: [c.nKvHeads * c.headDim, c.dModel],
      [`${p}self_attn.v_proj.weight`]: [c.nKvHeads * c.headDim, c.dModel],
      [`${p}self_attn.o_proj.weight`]: [c.dModel, c.nHeads * c.headDim],
      [`${p}post_attention_layernorm.weight`]: [c.dModel],
      [`${p}mlp.gate_proj.weight`]: [c.ffnHidden, c.dModel],
      [`${p}mlp.up_proj.weight`]: [c.ffnHidden, c.dModel],
      [`${p}mlp.down_proj.weight`]: [c.dModel, c.ffnHidden],
    });
  }
  return shapes;
}

function checkTensors(tensors, c) {
  if (tensors === null || typeof tensors !== 'object') {
    throw new TypeError(
      `${FN}: tensors must be readSafetensors(bytes).tensors, got ${tensors === null ? 'null' : typeof tensors}`,
    );
  }
  const shapes = expectedShapes(c);
  const missing = Object.keys(shapes).filter((n) => !(n in tensors));
  const unknown = Object.keys(tensors).filter((n) => !(n in shapes));
  if (missing.length || unknown.length) {
    const parts = [];
    if (missing.length) parts.push(`missing ${missing.map((n) => JSON.stringify(n)).join(', ')}`);
    if (unknown.length) parts.push(`not of this model ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
    throw new TypeError(`${FN}: the tensors do not match config.json: ${parts.join('; ')}`);
  }
  for (const [name, shape] of Object.entries(shapes)) {
    const t = tensors[name];
    if (!(t?.data instanceof Float32Array)) {
      throw new TypeError(
        `${FN}: tensor ${JSON.stringify(name)} must hold a Float32Array (a floating-point dtype), got ${t?.dtype ?? typeof t}`,
      );
    }
    const same = Array.isArray(t.shape) && t.shape.length === shape.length && t.shape.every((d, i) => d === shape[i]);
    if (!same)
      throw new RangeError(`${FN}: tensor ${JSON.stringify(name)} must have shape [${shape}], got [${t.shape}]`);
  }
}

/**
 * { config, vocab, weights } from the parsed config.json and tokenizer.json and readSafetensors'
 * tensors. weights: embed, norm and per layer { attnNorm, mlpNorm, mlp: { gate, up, down } } as
 * Float32Arrays (the attention projections go to the engine through attentionArgsFromStateDict).
 */
export function readPoemWeights(tensors, configJson, tokenizer) {
  const config = readConfig(configJson);
  const vocab = readVocab(tokenizer, config.vocabSize);
  checkTensors(tensors, config);
  const w = (name) => tensors[name].data;
  const layers = [];
  for (let l = 0; l < config.nLayers; l++) {
    const p = `model.layers.${l}.`;
    layers.push({
      attnNorm: w(`${p}input_layernorm.weight`),
      mlpNorm: w(`${p}post_attention_layernorm.weight`),
      mlp: {
        gate: w(`${p}mlp.gate_proj.weight`),
        up: w(`${p}mlp.up_proj.weight`),
        down: w(`${p}mlp.down_proj.weight`),
      },
    });
  }
  return {
    config,
    vocab,
    weights: { embed: w('model.embed_tokens.weight'), norm: w('model.norm.weight'), layers },
  };
}
