// What a model file holds, checked once: the configuration and vocabulary from the safetensors
// `__metadata__` (JSON strings written by models/tang-poems/train.py) and every tensor by its
// PyTorch state_dict name, with its shape. A file of another model fails here, naming what is
// wrong, rather than running and computing something else.

const FN = 'createPoemModel';

// metadata.config's keys (model.py's CONFIG plus vocab_size) → model.config's names.
const CONFIG_KEYS = {
  vocab_size: 'vocabSize',
  d_model: 'dModel',
  n_layers: 'nLayers',
  n_heads: 'nHeads',
  n_kv_heads: 'nKvHeads',
  head_dim: 'headDim',
  ffn_hidden: 'ffnHidden',
  rope_base: 'ropeBase',
  norm_eps: 'normEps',
  max_len: 'maxLen',
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

function parseJson(metadata, key) {
  const text = metadata[key];
  if (typeof text !== 'string')
    throw new TypeError(
      `${FN}: metadata.${key} must be a JSON string (the model file's __metadata__), got ${typeof text}`,
    );
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new TypeError(`${FN}: metadata.${key} is not JSON (${e.message})`);
  }
}

function readConfig(metadata) {
  const raw = parseJson(metadata, 'config');
  const config = {};
  for (const [key, name] of Object.entries(CONFIG_KEYS)) {
    const v = raw?.[key];
    const ok = INTEGER_KEYS.has(name)
      ? Number.isInteger(v) && v > 0
      : typeof v === 'number' && v > 0 && Number.isFinite(v);
    if (!ok)
      throw new RangeError(
        `${FN}: metadata.config.${key} must be a positive ${INTEGER_KEYS.has(name) ? 'integer' : 'number'}, got ${JSON.stringify(v)}`,
      );
    config[name] = v;
  }
  if (config.nHeads % config.nKvHeads !== 0) {
    throw new RangeError(
      `${FN}: metadata.config.n_heads (${config.nHeads}) must be a multiple of n_kv_heads (${config.nKvHeads})`,
    );
  }
  if (config.headDim % 2 !== 0)
    throw new RangeError(`${FN}: metadata.config.head_dim must be even for RoPE, got ${config.headDim}`);
  return Object.freeze(config);
}

function readVocab(metadata, vocabSize) {
  const vocab = parseJson(metadata, 'vocab');
  if (!Array.isArray(vocab) || !vocab.every((t) => typeof t === 'string' && t !== '')) {
    throw new TypeError(`${FN}: metadata.vocab must be a JSON list of non-empty strings`);
  }
  if (vocab.length !== vocabSize) {
    throw new RangeError(
      `${FN}: metadata.vocab has ${vocab.length} tokens, metadata.config.vocab_size says ${vocabSize}`,
    );
  }
  if (vocab[0] !== POEM_START || vocab[1] !== LINE_BREAK) {
    throw new RangeError(
      `${FN}: metadata.vocab must start with ${JSON.stringify(POEM_START)} and ${JSON.stringify(LINE_BREAK)}, got ${JSON.stringify(vocab.slice(0, 2))}`,
    );
  }
  return Object.freeze(vocab.slice());
}

/** Every tensor the model needs: name → shape. */
function expectedShapes(c) {
  const shapes = { 'embed.weight': [c.vocabSize, c.dModel], 'norm.weight': [c.dModel] };
  for (let l = 0; l < c.nLayers; l++) {
    const p = `layers.${l}.`;
    Object.assign(shapes, {
      [`${p}attn_norm.weight`]: [c.dModel],
      [`${p}attn.q_proj.weight`]: [c.nHeads * c.headDim, c.dModel],
      [`${p}attn.k_proj.weight`]: [c.nKvHeads * c.headDim, c.dModel],
      [`${p}attn.v_proj.weight`]: [c.nKvHeads * c.headDim, c.dModel],
      [`${p}attn.o_proj.weight`]: [c.dModel, c.nHeads * c.headDim],
      [`${p}mlp_norm.weight`]: [c.dModel],
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
    throw new TypeError(`${FN}: the tensors do not match metadata.config: ${parts.join('; ')}`);
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
 * { config, vocab, weights } from readSafetensors' result. weights: embed, norm and per layer
 * { attnNorm, mlpNorm, mlp: { gate, up, down } } as Float32Arrays (the attention projections go to
 * the engine through attentionArgsFromStateDict).
 */
export function readPoemWeights(tensors, metadata) {
  if (metadata === null || typeof metadata !== 'object') {
    throw new TypeError(
      `${FN}: metadata must be readSafetensors(bytes).metadata, got ${metadata === null ? 'null' : typeof metadata}`,
    );
  }
  const config = readConfig(metadata);
  const vocab = readVocab(metadata, config.vocabSize);
  checkTensors(tensors, config);
  const w = (name) => tensors[name].data;
  const layers = [];
  for (let l = 0; l < config.nLayers; l++) {
    const p = `layers.${l}.`;
    layers.push({
      attnNorm: w(`${p}attn_norm.weight`),
      mlpNorm: w(`${p}mlp_norm.weight`),
      mlp: {
        gate: w(`${p}mlp.gate_proj.weight`),
        up: w(`${p}mlp.up_proj.weight`),
        down: w(`${p}mlp.down_proj.weight`),
      },
    });
  }
  return { config, vocab, weights: { embed: w('embed.weight'), norm: w('norm.weight'), layers } };
}
