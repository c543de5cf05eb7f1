// A checkpoint's tensors, by their Hugging Face names, → the plan a model runtime loads: what the
// embeddings, each layer and the head need, each tensor found and its shape checked against the
// config. Plain JavaScript, no engine. Weights come as one safetensors file's bytes, an array of
// shards (bytes or readSafetensors results), a readSafetensors result, or a sharded index with its
// files. A missing or misshapen tensor is a TypeError naming it.
//
// Layouts are kept as stored: nn.Linear `[out, in]` ('out,in'), GPT-2's Conv1D `[in, out]`
// ('in,out', its c_attn fused as q | k | v along `out`). Nothing is copied or converted here, but
// 16-bit tensors read with readSafetensors(bytes, { widen: false }), widened exactly as the plan takes them.
import { floatsOfBf16, floatsOfF16 } from '../readers/half-float.mjs';
import { readSafetensors } from '../readers/safetensors.mjs';
import { describe, typedArrayName } from '../values.mjs';
import { readModelConfig } from './config.mjs';

const FN = 'checkpoint';
const FLOAT_DTYPES = ['F32', 'F16', 'BF16', 'F64'];

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const isBytes = (value) =>
  typedArrayName(value) !== undefined || value instanceof ArrayBuffer || value instanceof DataView;

function tensorsOf(value, label) {
  if (isBytes(value)) return readSafetensors(value).tensors;
  if (isObject(value) && isObject(value.tensors)) return value.tensors;
  throw new TypeError(
    `${FN}: ${label} must be the bytes of a .safetensors file or the result of readSafetensors, got ${describe(value)}`,
  );
}

/**
 * Every tensor of the checkpoint, by name, from one file, several shards or a readSafetensors result.
 * A name found in two shards is a TypeError (which one would be meant?).
 */
export function collectTensors(weights) {
  const parts = Array.isArray(weights)
    ? weights.map((w, i) => tensorsOf(w, `weights[${i}]`))
    : [tensorsOf(weights, 'weights')];
  if (parts.length === 0) throw new TypeError(`${FN}: weights is an empty array: give at least one shard`);
  const all = Object.create(null);
  for (const tensors of parts) {
    for (const name of Object.keys(tensors)) {
      if (Object.hasOwn(all, name))
        throw new TypeError(`${FN}: tensor ${JSON.stringify(name)} is in more than one shard`);
      all[name] = tensors[name];
    }
  }
  return all;
}

/**
 * The shard files a model.safetensors.index.json lists, each once, in the order first named: what a
 * loader fetches from the model's folder or URL. Names that leave the folder are refused.
 */
export function shardFiles(index) {
  if (!isObject(index) || !isObject(index.weight_map)) {
    throw new TypeError(
      `${FN}: model.safetensors.index.json must be an object with a weight_map object, got ${describe(index)}`,
    );
  }
  const files = [];
  for (const [name, file] of Object.entries(index.weight_map)) {
    if (typeof file !== 'string' || file === '' || file.startsWith('/') || file.split(/[\\/]/).includes('..')) {
      throw new TypeError(
        `${FN}: weight_map gives tensor ${JSON.stringify(name)} the file ${JSON.stringify(file)}: a file name inside the model's folder was expected`,
      );
    }
    if (!files.includes(file)) files.push(file);
  }
  if (files.length === 0) throw new TypeError(`${FN}: the index's weight_map is empty`);
  return files;
}

/**
 * A sharded checkpoint's tensors: `shards` maps each file the index names to its bytes (or its
 * readSafetensors result); each tensor the index lists must be in the file it names.
 */
export function readShardedCheckpoint(index, shards) {
  const files = shardFiles(index);
  if (!isObject(shards))
    throw new TypeError(`${FN}: shards must map each shard's file name to its bytes, got ${describe(shards)}`);
  const byFile = {};
  for (const file of files) {
    if (!Object.hasOwn(shards, file))
      throw new TypeError(`${FN}: shard ${JSON.stringify(file)}, named by the index, was not given`);
    byFile[file] = tensorsOf(shards[file], `shard ${JSON.stringify(file)}`);
  }
  for (const [name, file] of Object.entries(index.weight_map)) {
    if (!Object.hasOwn(byFile[file], name))
      throw new TypeError(`${FN}: tensor ${JSON.stringify(name)} is missing from ${file}, where the index puts it`);
  }
  return collectTensors(files.map((file) => ({ tensors: byFile[file] })));
}

// ---------------------------------------------------------------- the families' tensor names

// readSafetensors(bytes, { widen: false }) keeps F16 as a Float16Array (where there is one) and
// F16/BF16 bit patterns in a Uint16Array: the plan gets their exact float32 values (what the engine
// is given), one tensor at a time, so the checkpoint's own arrays stay as the user gave them.
function widened(t) {
  const typed = typedArrayName(t.data);
  if (typed === 'Float16Array') return { ...t, data: new Float32Array(t.data) }; // exact
  if (typed !== 'Uint16Array') return t;
  if (t.dtype === 'F16') return { ...t, data: floatsOfF16(t.data) };
  if (t.dtype === 'BF16') return { ...t, data: floatsOfBf16(t.data) };
  return t;
}

/** Looks tensors up under a prefix, checks them, and remembers which names were used. */
class Lookup {
  constructor(tensors, prefix) {
    this.tensors = tensors;
    this.prefix = prefix;
    this.used = new Set();
  }

  // Older BERT checkpoints name LayerNorm parameters gamma/beta; transformers renames them on load.
  find(name) {
    const aliases = [
      name,
      name.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma'),
      name.replace(/LayerNorm\.bias$/, 'LayerNorm.beta'),
    ];
    return aliases.find((n) => Object.hasOwn(this.tensors, n));
  }

  has(name, prefixed = true) {
    return this.find(prefixed ? this.prefix + name : name) !== undefined;
  }

  tensor(name, shape, prefixed = true) {
    const full = prefixed ? this.prefix + name : name;
    const found = this.find(full);
    if (found === undefined)
      throw new TypeError(`${FN}: tensor ${JSON.stringify(full)} is missing (expected shape [${shape.join(', ')}])`);
    const t = this.tensors[found];
    if (!isObject(t) || !Array.isArray(t.shape) || !FLOAT_DTYPES.includes(t.dtype)) {
      throw new TypeError(
        `${FN}: tensor ${JSON.stringify(full)} must be a floating-point tensor (${FLOAT_DTYPES.join(', ')}), got ${isObject(t) ? t.dtype : describe(t)}`,
      );
    }
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new TypeError(
        `${FN}: tensor ${JSON.stringify(full)} has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}]`,
      );
    }
    this.used.add(found);
    return widened(t);
  }

  // weight [out, in] (or [in, out]) and an optional bias [out]
  linear(name, outF, inF, bias, layout = 'out,in') {
    const shape = layout === 'out,in' ? [outF, inF] : [inF, outF];
    return {
      weight: this.tensor(`${name}.weight`, shape),
      bias: bias ? this.tensor(`${name}.bias`, [outF]) : null,
      layout,
    };
  }

  norm(name, size, bias) {
    return { weight: this.tensor(`${name}.weight`, [size]), bias: bias ? this.tensor(`${name}.bias`, [size]) : null };
  }
}

function prefixOf(tensors, family, probe, prefixes) {
  const prefix = prefixes.find((p) => Object.hasOwn(tensors, p + probe));
  if (prefix === undefined) {
    throw new TypeError(
      `${FN}: tensor ${JSON.stringify(prefixes[0] + probe)} is missing (a ${family} checkpoint has it, ` +
        `with or without the prefix ${JSON.stringify(prefixes[0])})`,
    );
  }
  return prefix;
}

function decoderPlan(c, tensors) {
  const at = new Lookup(tensors, prefixOf(tensors, c.modelType, 'embed_tokens.weight', ['model.', '']));
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
  return {
    at,
    plan: { embeddings: { tokens, positions: null, tokenTypes: null, norm: null }, layers, finalNorm, lmHead },
  };
}

function gpt2Plan(c, tensors) {
  const at = new Lookup(tensors, prefixOf(tensors, 'gpt2', 'wte.weight', ['transformer.', '']));
  const E = c.hiddenSize;
  const conv = (name, outF, inF) => at.linear(name, outF, inF, true, 'in,out');
  const tokens = at.tensor('wte.weight', [c.vocabSize, E]);
  const positions = at.tensor('wpe.weight', [c.maxPositions, E]);
  const layers = Array.from({ length: c.numLayers }, (_, i) => {
    const p = `h.${i}.`;
    return {
      inputNorm: at.norm(p + 'ln_1', E, true),
      qkv: conv(p + 'attn.c_attn', 3 * E, E),
      o: conv(p + 'attn.c_proj', E, E),
      postAttentionNorm: at.norm(p + 'ln_2', E, true),
      up: conv(p + 'mlp.c_fc', c.intermediateSize, E),
      down: conv(p + 'mlp.c_proj', E, c.intermediateSize),
    };
  });
  const finalNorm = at.norm('ln_f', E, true);
  const lmHead = c.tieWordEmbeddings
    ? { weight: tokens, bias: null, tied: true, transform: null }
    : { weight: at.tensor('lm_head.weight', [c.vocabSize, E], false), bias: null, tied: false, transform: null };
  return { at, plan: { embeddings: { tokens, positions, tokenTypes: null, norm: null }, layers, finalNorm, lmHead } };
}

function bertMlmHead(c, at, tokens) {
  const E = c.hiddenSize;
  const names = Object.keys(at.tensors);
  if (!names.some((n) => n.startsWith('cls.predictions.'))) return null;
  const head = new Lookup(at.tensors, 'cls.predictions.');
  const transform = {
    dense: head.linear('transform.dense', E, E, true),
    norm: head.norm('transform.LayerNorm', E, true),
  };
  // The decoder bias is saved as cls.predictions.bias, cls.predictions.decoder.bias, or both (tied).
  const biasName = head.has('bias') || !head.has('decoder.bias') ? 'bias' : 'decoder.bias';
  const bias = head.tensor(biasName, [c.vocabSize]);
  const tied = !head.has('decoder.weight');
  if (tied && !c.tieWordEmbeddings) head.tensor('decoder.weight', [c.vocabSize, E]); // throws: named as missing
  const weight = tied ? tokens : head.tensor('decoder.weight', [c.vocabSize, E]);
  for (const name of head.used) at.used.add(name);
  return { weight, bias, tied, transform };
}

function bertPlan(c, tensors) {
  const at = new Lookup(tensors, prefixOf(tensors, 'bert', 'embeddings.word_embeddings.weight', ['bert.', '']));
  const E = c.hiddenSize;
  const e = 'embeddings.';
  const embeddings = {
    tokens: at.tensor(e + 'word_embeddings.weight', [c.vocabSize, E]),
    positions: at.tensor(e + 'position_embeddings.weight', [c.maxPositions, E]),
    tokenTypes: at.tensor(e + 'token_type_embeddings.weight', [c.typeVocabSize, E]),
    norm: at.norm(e + 'LayerNorm', E, true),
  };
  const layers = Array.from({ length: c.numLayers }, (_, i) => {
    const p = `encoder.layer.${i}.`;
    return {
      q: at.linear(p + 'attention.self.query', E, E, true),
      k: at.linear(p + 'attention.self.key', E, E, true),
      v: at.linear(p + 'attention.self.value', E, E, true),
      o: at.linear(p + 'attention.output.dense', E, E, true),
      attentionNorm: at.norm(p + 'attention.output.LayerNorm', E, true),
      up: at.linear(p + 'intermediate.dense', c.intermediateSize, E, true),
      down: at.linear(p + 'output.dense', E, c.intermediateSize, true),
      outputNorm: at.norm(p + 'output.LayerNorm', E, true),
    };
  });
  return { at, plan: { embeddings, layers, finalNorm: null, lmHead: bertMlmHead(c, at, embeddings.tokens) } };
}

const PLANS = { llama: decoderPlan, mistral: decoderPlan, qwen2: decoderPlan, gpt2: gpt2Plan, bert: bertPlan };

/**
 * @param {object} config readModelConfig's result, or the parsed config.json itself
 * @param weights what collectTensors takes, or its result ({ name: tensor })
 * @returns {{ config, embeddings, layers, finalNorm, lmHead, unused: string[] }} each tensor as
 *   readSafetensors gives it ({ dtype, shape, data }); lmHead null for a BERT without its MLM head;
 *   `unused` the checkpoint's names the plan does not read (buffers, a pooler, a tied copy).
 */
export function planCheckpoint(config, weights) {
  const c = isObject(config) && typeof config.modelType === 'string' ? config : readModelConfig(config);
  const tensors =
    isObject(weights) && !isBytes(weights) && !isObject(weights.tensors) ? weights : collectTensors(weights);
  const { at, plan } = PLANS[c.modelType](c, tensors);
  const unused = Object.keys(tensors)
    .filter((n) => !at.used.has(n))
    .sort();
  return { config: c, ...plan, unused };
}
