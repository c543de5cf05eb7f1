// The Tang-poem character model (models/tang-poems/, a Hugging Face `llama` checkpoint) on the
// package's loadModel: every token runs in the engine, embedding to logits. What this file adds is
// what the demo needs around the model: the character vocabulary (labels, and the characters a
// prompt may use), the most likely next tokens, sessions that remember their tokens, and the
// worked steps of one head (head-steps.js, from the hidden states model.forward gives).
import { createSession } from './session.js';
import { topTokens } from './sampling.js';

export const POEM_START = '<s>';

const FN = 'openPoemModel';

function describeChar(ch) {
  const cp = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `${JSON.stringify(ch)} (U+${cp})`;
}

function checkPackage(pkg) {
  for (const name of ['loadModel', 'readSafetensors', 'attentionArgsFromStateDict']) {
    if (typeof pkg?.[name] !== 'function')
      throw new TypeError(`${FN}: pkg must be the package's module (with ${name}), got ${typeof pkg?.[name]} ${name}`);
  }
}

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);

/** Each token's own text, as the tokenizer writes it ('<s>' kept): labels, and the known characters. */
function readVocab(model, config) {
  const vocab = Object.freeze(
    Array.from({ length: config.vocabSize }, (_, id) => model.decode([id], { skipSpecialTokens: false })),
  );
  if (vocab[0] !== POEM_START) {
    throw new RangeError(`${FN}: token 0 must be the poem start ${POEM_START}, got ${JSON.stringify(vocab[0])}`);
  }
  return vocab;
}

/** What the head steps need of each layer: its attention arguments and its input norm's weight. */
function layerInternals(pkg, file, config, configJson) {
  const layerArgs = Array.from({ length: config.numLayers }, (_, l) => ({
    ...pkg.attentionArgsFromStateDict(file.tensors, `model.layers.${l}.self_attn.`),
    embedDim: config.hiddenSize,
    numHeads: config.numHeads,
    numKvHeads: config.numKvHeads,
    headDim: config.headDim,
    rope: { base: configJson.rope_theta },
  }));
  const inputNorms = Array.from(
    { length: config.numLayers },
    (_, l) => file.tensors[`model.layers.${l}.input_layernorm.weight`].data,
  );
  // transformers' LlamaConfig default when config.json leaves it out
  const normEps = configJson.rms_norm_eps ?? 1e-6;
  return { layerArgs, inputNorms, normEps };
}

/**
 * Int32Array of ids: the poem start, then one id per character (tokenizer.json's encoding). A
 * RangeError names every character the model does not know (the tokenizer would drop them),
 * and a typed '<s>' is three characters, not the poem start.
 */
function encodePoem(model, known, text) {
  if (typeof text !== 'string') throw new TypeError(`encode: text must be a string, got ${typeof text}`);
  const chars = Array.from(text);
  const unknown = [...new Set(chars.filter((ch) => !known.has(ch)))];
  if (unknown.length) {
    throw new RangeError(
      `encode: ${unknown.length === 1 ? 'a character is' : `${unknown.length} characters are`} not in the model's vocabulary: ${unknown.map(describeChar).join(', ')}`,
    );
  }
  const ids = model.encode(text);
  if (ids.length !== chars.length + 1 || ids[0] !== 0)
    throw new Error(`encode: tokenizer.json gave ${ids.length} ids for ${chars.length} characters and the poem start`);
  return ids;
}

/** The public model over loadModel's: vocabulary, encoding, candidates, sessions and disposal. */
function poemModel(internals, vocab) {
  const { model } = internals;
  const known = new Set(vocab.slice(1));
  const sessions = new Set();
  let disposed = false;
  const poem = {
    config: internals.config,
    vocab,
    /** loadModel's model itself (its forward, generate, sessions). */
    model,
    get disposed() {
      return disposed || model.disposed;
    },
    encode: (text) => encodePoem(model, known, text),
    /** The text of ids; the poem start is left out (it only marks where a poem begins). */
    decode: (ids) => model.decode(ids),
    /** A token's own text: '<s>', '\n' or its character (labels for charts and lists). */
    tokenText(id) {
      if (!Number.isInteger(id) || id < 0 || id >= vocab.length)
        throw new RangeError(`tokenText: token ids are integers 0 … ${vocab.length - 1}, got ${id}`);
      return vocab[id];
    },
    /** topTokens with this model's vocabulary for the text. */
    topTokens: (logits, k, temperature = 1) => topTokens(logits, k, temperature, vocab),
    /** A new sequence: the engine's KV caches for maxLength tokens (default config.maxPositions). */
    createSession(options) {
      if (poem.disposed) throw new Error('model.createSession: this model was disposed; open it again');
      const session = createSession(internals, options, (s) => sessions.delete(s));
      sessions.add(session);
      return session;
    },
    /** Frees the model and its sessions (the engine stays the caller's). */
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const s of [...sessions]) s.dispose();
      model.dispose();
    },
  };
  return poem;
}

/**
 * The poem model of a folder's files: openPoemModel(pkg, attn, { config, tokenizer, weights }) with
 * config.json and tokenizer.json parsed and weights the bytes of model.safetensors (or their
 * readSafetensors result). pkg: the package's module (loadModel, readSafetensors,
 * attentionArgsFromStateDict). → a Promise of { config, vocab, model, encode, decode, tokenText,
 * topTokens, createSession, dispose, disposed }; config is loadModel's model.config, model the model.
 */
export async function openPoemModel(pkg, attn, { config: configJson, tokenizer, weights } = {}) {
  checkPackage(pkg);
  // The tensors stay here too: head steps need each layer's attention weights and input norm.
  const file = isBytes(weights) ? pkg.readSafetensors(weights) : weights;
  const model = await pkg.loadModel(attn, { config: configJson, weights: file, tokenizer });
  try {
    const config = model.config;
    const vocab = readVocab(model, config);
    const internals = { attn, model, config, ...layerInternals(pkg, file, config, configJson) };
    internals.poem = poemModel(internals, vocab);
    return internals.poem;
  } catch (e) {
    model.dispose();
    throw e;
  }
}
