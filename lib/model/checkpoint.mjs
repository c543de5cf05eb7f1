// A checkpoint's tensors, by their Hugging Face names, → the plan a model runtime loads: what the
// embeddings, each layer and the head need, each tensor found and its shape checked against the
// config. Plain JavaScript, no engine. Weights come as one safetensors file's bytes, an array of
// shards (bytes or readSafetensors results), a readSafetensors result, or a sharded index with its
// files. Which names a family reads is in its file under families/; a missing or misshapen tensor
// is a TypeError naming it.
//
// Layouts are kept as stored: nn.Linear `[out, in]` ('out,in'), GPT-2's Conv1D `[in, out]`
// ('in,out', its c_attn fused as q | k | v along `out`). Nothing is copied or converted here, but
// 16-bit tensors read with readSafetensors(bytes, { widen: false }), widened exactly as the plan takes them.
import { floatsOfBf16, floatsOfF16 } from '../readers/half-float.mjs';
import { readSafetensors } from '../readers/safetensors.mjs';
import { describe, typedArrayName } from '../values.mjs';
import { readModelConfig } from './config.mjs';
import { familyOf } from './families/registry.mjs';

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

// ---------------------------------------------------------------- tensors by name (families/*.mjs name them)

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
  constructor(tensors, prefix, used = new Set()) {
    this.tensors = tensors;
    this.prefix = prefix;
    this.used = used;
  }

  /** Whether any tensor's name starts with `prefix` (not under this lookup's own). */
  anyUnder(prefix) {
    return Object.keys(this.tensors).some((n) => n.startsWith(prefix));
  }

  /** A lookup of the same tensors under another prefix, whose uses count as this one's. */
  under(prefix) {
    return new Lookup(this.tensors, prefix, this.used);
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

// A Lookup of the family's tensors: under the first prefix with which `probe` is there.
function openUnder(tensors, family, probe, prefixes) {
  const prefix = prefixes.find((p) => Object.hasOwn(tensors, p + probe));
  if (prefix === undefined) {
    throw new TypeError(
      `${FN}: tensor ${JSON.stringify(prefixes[0] + probe)} is missing (a ${family} checkpoint has it, ` +
        `with or without the prefix ${JSON.stringify(prefixes[0])})`,
    );
  }
  return new Lookup(tensors, prefix);
}

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
  let at;
  const open = (family, probe, prefixes) => (at = openUnder(tensors, family, probe, prefixes));
  const plan = familyOf(c.modelType).planTensors(c, open);
  const unused = Object.keys(tensors)
    .filter((n) => !at.used.has(n))
    .sort();
  return { config: c, ...plan, unused };
}
