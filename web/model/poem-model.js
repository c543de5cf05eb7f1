// The Tang-poem character model (models/tang-poems/model.py) on the wasm-attention engine: its
// attention layers are prepared engine layers, everything else is plain JavaScript (dense.js).
// The model holds the weights; sessions (session.js) hold what a sequence of tokens left behind.
import { attentionArgsFromStateDict } from '../../dist/index.mjs';
import { readPoemWeights } from './checkpoint.js';
import { createVocabulary } from './vocab.js';
import { createSession } from './session.js';
import { topTokens } from './sampling.js';

function checkEngine(attn) {
  if (attn === null || typeof attn !== 'object' || typeof attn.createMultiHeadAttention !== 'function') {
    throw new TypeError('createPoemModel: attn must be an engine from createAttention()');
  }
}

/**
 * The model of models/tang-poems/: createPoemModel(attn, { tensors: readSafetensors(bytes).tensors,
 * config, tokenizer }) with config.json and tokenizer.json parsed.
 * → { config, vocab, encode, decode, tokenText, topTokens, createSession, dispose, disposed }
 */
export function createPoemModel(attn, { tensors, config: configJson, tokenizer } = {}) {
  checkEngine(attn);
  const { config, vocab, weights } = readPoemWeights(tensors, configJson, tokenizer);
  const layers = [];
  try {
    for (let l = 0; l < config.nLayers; l++) {
      const args = {
        ...attentionArgsFromStateDict(tensors, `model.layers.${l}.self_attn.`),
        embedDim: config.dModel,
        numHeads: config.nHeads,
        numKvHeads: config.nKvHeads,
        headDim: config.headDim,
        rope: { base: config.ropeBase },
      };
      layers.push({ layer: attn.createMultiHeadAttention(args), args });
    }
  } catch (e) {
    for (const { layer } of layers) layer.dispose();
    throw e;
  }
  const { encode, decode, tokenText } = createVocabulary(vocab);
  const sessions = new Set();
  let disposed = false;
  const internals = { attn, config, weights, layers, model: null };

  const model = {
    config,
    vocab,
    encode,
    decode,
    tokenText,
    get disposed() {
      return disposed;
    },
    /** topTokens with this model's vocabulary for the text. */
    topTokens(logits, k, temperature = 1) {
      return topTokens(logits, k, temperature, vocab);
    },
    /** A new sequence: one KV cache per layer, room for maxLength tokens. */
    createSession(options) {
      if (disposed)
        throw new Error('model.createSession: this model was disposed; create a new one with createPoemModel');
      const session = createSession(internals, options, (s) => sessions.delete(s));
      sessions.add(session);
      return session;
    },
    /** Frees the engine layers and every session's caches (the engine itself stays the caller's). */
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const s of [...sessions]) s.dispose();
      for (const { layer } of layers) layer.dispose();
    },
  };
  internals.model = model;
  return model;
}
