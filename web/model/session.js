// One conversation with the model: a KV cache per attention layer, the tokens fed so far, the
// attention maps they produced, and each layer's attention inputs (for headSteps). Feeding runs
// the decoder forward over the new tokens only; earlier tokens are read from the caches.
import { addInPlace, embedRows, linear, rmsNorm, swiglu } from './dense.js';
import { createAttentionMaps } from './attention-maps.js';
import { headSteps } from './head-steps.js';

function toIds(fn, ids, vocabSize) {
  if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
    throw new TypeError(
      `${fn}: ids must be an array or typed array of token ids, got ${ids === null ? 'null' : typeof ids}`,
    );
  }
  const out = Int32Array.from(Array.from(ids), (id) => {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new RangeError(`${fn}: token ids are integers 0 … ${vocabSize - 1}, got ${id}`);
    }
    return id;
  });
  if (out.length === 0) throw new RangeError(`${fn}: ids is empty; feed at least one token`);
  return out;
}

function checkIndex(fn, name, value, limit) {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RangeError(`${fn}: ${name} must be an integer 0 … ${limit - 1}, got ${value}`);
  }
}

/**
 * internals: { attn, config, weights, layers: [{ layer, args }], model } (layer: the prepared engine
 * layer, args: its creation arguments, reused by headSteps' one-shot call; model: the public object).
 */
export function createSession(internals, { maxLength = internals.config.maxLen } = {}, onDispose = () => {}) {
  const { attn, config: c, weights, layers } = internals;
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new RangeError(`createSession: maxLength must be a positive integer, got ${maxLength}`);
  }
  const d = c.dModel;
  const caches = [];
  try {
    for (const { layer } of layers) caches.push(layer.createKvCache({ maxLength, batch: 1 }));
  } catch (e) {
    for (const cache of caches) cache.dispose();
    throw e;
  }
  const inputs = layers.map(() => new Float32Array(maxLength * d)); // each layer's RMSNorm output, by position
  const maps = createAttentionMaps(c.nLayers, c.nHeads);
  let tokens = [];
  let logits = null; // of the last token fed
  let disposed = false;

  function alive(fn) {
    if (disposed)
      throw new Error(`session.${fn}: this session was disposed; create a new one with model.createSession`);
  }

  /** The decoder over `ids` at positions from … from + T − 1: attention weights per layer, the final hidden rows. */
  function forward(ids, from) {
    const T = ids.length;
    const x = embedRows(weights.embed, d, ids);
    const attention = [];
    layers.forEach(({ layer }, l) => {
      const w = weights.layers[l];
      const h = rmsNorm(x, T, d, w.attnNorm, c.normEps);
      inputs[l].set(h, from * d);
      const out = layer.forward({
        query: h,
        cache: caches[l],
        isCausal: true,
        needWeights: true,
        averageAttnWeights: false,
      });
      addInPlace(x, out.output);
      addInPlace(x, swiglu(rmsNorm(x, T, d, w.mlpNorm, c.normEps), T, d, w.mlp, c.ffnHidden));
      attention.push(out.weights);
    });
    return { x, attention };
  }

  /** Logits [rows, vocab] of the final hidden rows (the LM head is the embedding, transposed). */
  function head(x, rows) {
    return linear(rmsNorm(x, rows, d, weights.norm, c.normEps), rows, d, weights.embed, c.vocabSize);
  }

  const session = {
    /** The model this session runs (generate reads its vocabulary). */
    model: internals.model,
    get length() {
      return tokens.length;
    },
    get tokens() {
      return Int32Array.from(tokens);
    },
    get maxLength() {
      return maxLength;
    },
    /** The logits after the last token fed (null before any): what generate samples from. */
    get logits() {
      return logits && logits.slice();
    },
    get disposed() {
      return disposed;
    },

    /**
     * Runs the model over `ids` after the tokens fed so far. → { logits: [vocab] of the last token,
     * attention: per layer [nHeads, ids.length, length] }; with { allLogits: true } also
     * allLogits [ids.length, vocab]. An error leaves the session as it was.
     */
    feed(ids, { allLogits = false } = {}) {
      alive('feed');
      const fed = toIds('session.feed', ids, c.vocabSize);
      const from = tokens.length;
      if (from + fed.length > maxLength) {
        throw new RangeError(
          `session.feed: ${fed.length} token${fed.length === 1 ? '' : 's'} after ${from} would pass the session's maxLength ${maxLength}; truncate it or create a session with a larger maxLength`,
        );
      }
      let x, attention;
      try {
        ({ x, attention } = forward(fed, from));
      } catch (e) {
        // an engine error in a later layer must not leave earlier layers' caches ahead
        for (const cache of caches) if (cache.length > from) cache.truncate(from);
        throw e;
      }
      attention.forEach((w, l) => maps.append(l, w, from, fed.length));
      tokens = tokens.concat(Array.from(fed));
      const all = allLogits ? head(x, fed.length) : null;
      logits = all ? all.slice((fed.length - 1) * c.vocabSize) : head(x.subarray((fed.length - 1) * d), 1);
      const out = { logits: logits.slice(), attention };
      if (all) out.allLogits = all;
      return out;
    },

    /** [n, n]: the causal map of one head over every token fed (row i: keys 0 … i, zeros after). */
    attention(layer, headIndex) {
      alive('attention');
      checkIndex('session.attention', 'layer', layer, c.nLayers);
      checkIndex('session.attention', 'head', headIndex, c.nHeads);
      return maps.map(layer, headIndex);
    },

    /** The worked steps of one head for the token at position `query` (see head-steps.js). */
    headSteps(layer, headIndex, query) {
      alive('headSteps');
      checkIndex('session.headSteps', 'layer', layer, c.nLayers);
      checkIndex('session.headSteps', 'head', headIndex, c.nHeads);
      if (tokens.length === 0)
        throw new RangeError('session.headSteps: the session has no tokens yet; feed some first');
      checkIndex('session.headSteps', 'query', query, tokens.length);
      return headSteps(attn, layers[layer].args, inputs[layer], tokens.length, headIndex, query);
    },

    /**
     * Keeps the first n tokens. The logits after them are recomputed (token n − 1 is fed again), so
     * generation can continue from any point.
     */
    truncate(n) {
      alive('truncate');
      if (!Number.isInteger(n) || n < 0 || n > tokens.length) {
        throw new RangeError(
          `session.truncate: n must be an integer 0 … ${tokens.length} (the session's length), got ${n}`,
        );
      }
      if (n === tokens.length) return;
      const kept = tokens.slice(0, n);
      const keep = Math.max(0, n - 1);
      for (const cache of caches) cache.truncate(keep);
      maps.truncate(keep);
      tokens = kept.slice(0, keep);
      logits = null;
      if (n > 0) session.feed([kept[n - 1]]);
    },

    dispose() {
      if (disposed) return;
      disposed = true;
      for (const cache of caches) cache.dispose();
      tokens = [];
      logits = null;
      onDispose(session);
    },
  };
  return session;
}
