// One sequence of the poem model: a session of loadModel's model (the KV caches of every layer, in
// the engine), the tokens fed so far and the logits after the last one. Feeding runs the model over
// the new tokens only and returns the attention of every layer and head; it also keeps each layer's
// input for every token (the forward's hidden states, copied out as the engine computes them), from
// which the worked steps of one head are recomputed on request (head-steps.js) without running the
// model again.
import { attentionInput, headSteps } from './head-steps.js';

function checkIndex(fn, name, value, limit) {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RangeError(`${fn}: ${name} must be an integer 0 … ${limit - 1}, got ${value}`);
  }
}

/**
 * internals: { attn, model (loadModel's), config (model.config), layerArgs (each layer's attention
 * arguments, for the one-shot head steps), inputNorms (each layer's input RMSNorm weight), normEps,
 * poem (the public model) }.
 */
export function createSession(internals, { maxLength = internals.config.maxPositions } = {}, onDispose = () => {}) {
  const { attn, model, config: c, layerArgs, inputNorms, normEps } = internals;
  const session = model.createSession({ maxLength }); // checks maxLength
  let tokens = [];
  let logits = null; // after the last token fed
  let disposed = false;
  // Layer l's input rows [tokens, hiddenSize] (the residual stream before its RMSNorm), for every
  // token fed: grown as tokens come, rows past `tokens.length` left over from before a truncate.
  const everyLayer = { layers: Array.from({ length: c.numLayers }, (_, l) => l) };
  let layerInputs = Array.from({ length: c.numLayers }, () => new Float32Array(0));

  function keepLayerInputs(hiddenStates, from, count) {
    const E = c.hiddenSize;
    layerInputs = layerInputs.map((rows, l) => {
      let kept = rows;
      if (kept.length < (from + count) * E) {
        kept = new Float32Array(Math.max((from + count) * E, 2 * rows.length));
        kept.set(rows.subarray(0, from * E));
      }
      kept.set(hiddenStates[l], from * E);
      return kept;
    });
  }

  function alive(fn) {
    if (disposed || session.disposed)
      throw new Error(`session.${fn}: this session was disposed; create a new one with model.createSession`);
  }

  const poemSession = {
    /** The model this session runs (generate reads its vocabulary). */
    model: internals.poem,
    get length() {
      return tokens.length;
    },
    get tokens() {
      return Int32Array.from(tokens);
    },
    get maxLength() {
      return session.maxLength;
    },
    /** The logits after the last token fed (null before any): what generate samples from. */
    get logits() {
      return logits && logits.slice();
    },
    get disposed() {
      return disposed || session.disposed;
    },

    /**
     * Runs the model over `ids` after the tokens fed so far → { logits: [vocab] of the last token,
     * attention: per layer [numHeads, ids.length, length] }; with { allLogits: true } also allLogits
     * [ids.length, vocab]. loadModel's forward checks the ids and the room left; an error leaves the
     * session as it was.
     */
    feed(ids, { allLogits = false } = {}) {
      alive('feed');
      const out = model.forward(ids, {
        session,
        attention: true,
        logits: allLogits ? 'all' : 'last',
        hiddenStates: everyLayer,
      });
      const count = ids.length;
      keepLayerInputs(out.hiddenStates, tokens.length, count);
      tokens = tokens.concat(Array.from(ids));
      logits = allLogits ? out.logits.slice((count - 1) * c.vocabSize) : out.logits;
      const result = { logits: logits.slice(), attention: out.attention };
      if (allLogits) result.allLogits = out.logits;
      return result;
    },

    /**
     * The worked steps of one head for the token at position `query` over every token fed (see
     * head-steps.js), from the layer's input kept as the tokens were fed: its RMSNorm is what the
     * layer's attention read.
     */
    headSteps(layer, head, query) {
      alive('headSteps');
      checkIndex('session.headSteps', 'layer', layer, c.numLayers);
      checkIndex('session.headSteps', 'head', head, c.numHeads);
      if (tokens.length === 0)
        throw new RangeError('session.headSteps: the session has no tokens yet; feed some first');
      checkIndex('session.headSteps', 'query', query, tokens.length);
      const n = tokens.length;
      const inputs = attentionInput(layerInputs[layer], inputNorms[layer], normEps, n, c.hiddenSize);
      return headSteps(attn, layerArgs[layer], inputs, n, head, query);
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
      session.truncate(keep);
      tokens = kept.slice(0, keep);
      logits = null;
      if (n > 0) poemSession.feed([kept[n - 1]]);
    },

    dispose() {
      if (disposed) return;
      disposed = true;
      session.dispose();
      tokens = [];
      logits = null;
      layerInputs = [];
      onDispose(poemSession);
    },
  };
  return poemSession;
}
