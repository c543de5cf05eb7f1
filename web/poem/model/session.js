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
 * Each layer's input rows [tokens, width] (the residual stream before its RMSNorm) for every token
 * fed: grown as tokens come, rows past the session's length left over from before a truncate.
 */
class LayerInputs {
  constructor(numLayers, width) {
    this.width = width;
    this.rows = Array.from({ length: numLayers }, () => new Float32Array(0));
  }

  /** hiddenStates[l] ([count, width]) as the rows from `from` on. */
  keep(hiddenStates, from, count) {
    const E = this.width;
    this.rows = this.rows.map((rows, l) => {
      let kept = rows;
      if (kept.length < (from + count) * E) {
        kept = new Float32Array(Math.max((from + count) * E, 2 * rows.length));
        kept.set(rows.subarray(0, from * E));
      }
      kept.set(hiddenStates[l], from * E);
      return kept;
    });
  }
}

class PoemSession {
  #internals;
  #session;
  #tokens = [];
  #logits = null; // after the last token fed
  #disposed = false;
  #inputs;
  #everyLayer;
  #onDispose;

  constructor(internals, maxLength, onDispose) {
    const c = internals.config;
    this.#session = internals.model.createSession({ maxLength }); // checks maxLength
    this.#internals = internals;
    this.#onDispose = onDispose;
    this.#inputs = new LayerInputs(c.numLayers, c.hiddenSize);
    this.#everyLayer = { layers: Array.from({ length: c.numLayers }, (_, l) => l) };
    /** The model this session runs (generate reads its vocabulary). */
    this.model = internals.poem;
  }

  #alive(fn) {
    if (this.#disposed || this.#session.disposed)
      throw new Error(`session.${fn}: this session was disposed; create a new one with model.createSession`);
  }

  get length() {
    return this.#tokens.length;
  }
  get tokens() {
    return Int32Array.from(this.#tokens);
  }
  get maxLength() {
    return this.#session.maxLength;
  }
  /** The logits after the last token fed (null before any): what generate samples from. */
  get logits() {
    return this.#logits && this.#logits.slice();
  }
  get disposed() {
    return this.#disposed || this.#session.disposed;
  }

  /**
   * Runs the model over `ids` after the tokens fed so far → { logits: [vocab] of the last token,
   * attention: per layer [numHeads, ids.length, length] }; with { allLogits: true } also allLogits
   * [ids.length, vocab]. loadModel's forward checks the ids and the room left; an error leaves the
   * session as it was.
   */
  feed(ids, { allLogits = false } = {}) {
    this.#alive('feed');
    const out = this.#internals.model.forward(ids, {
      session: this.#session,
      attention: true,
      logits: allLogits ? 'all' : 'last',
      hiddenStates: this.#everyLayer,
    });
    const count = ids.length;
    this.#inputs.keep(out.hiddenStates, this.#tokens.length, count);
    this.#tokens = this.#tokens.concat(Array.from(ids));
    this.#logits = allLogits ? out.logits.slice((count - 1) * this.#internals.config.vocabSize) : out.logits;
    const result = { logits: this.#logits.slice(), attention: out.attention };
    if (allLogits) result.allLogits = out.logits;
    return result;
  }

  /**
   * The worked steps of one head for the token at position `query` over every token fed (see
   * head-steps.js), from the layer's input kept as the tokens were fed: its RMSNorm is what the
   * layer's attention read.
   */
  headSteps(layer, head, query) {
    this.#alive('headSteps');
    const { attn, config: c, layerArgs, inputNorms, normEps } = this.#internals;
    checkIndex('session.headSteps', 'layer', layer, c.numLayers);
    checkIndex('session.headSteps', 'head', head, c.numHeads);
    if (this.#tokens.length === 0)
      throw new RangeError('session.headSteps: the session has no tokens yet; feed some first');
    checkIndex('session.headSteps', 'query', query, this.#tokens.length);
    const n = this.#tokens.length;
    const inputs = attentionInput(this.#inputs.rows[layer], inputNorms[layer], normEps, n, c.hiddenSize);
    return headSteps(attn, layerArgs[layer], inputs, n, head, query);
  }

  /**
   * Keeps the first n tokens. The logits after them are recomputed (token n − 1 is fed again), so
   * generation can continue from any point.
   */
  truncate(n) {
    this.#alive('truncate');
    const tokens = this.#tokens;
    if (!Number.isInteger(n) || n < 0 || n > tokens.length) {
      throw new RangeError(
        `session.truncate: n must be an integer 0 … ${tokens.length} (the session's length), got ${n}`,
      );
    }
    if (n === tokens.length) return;
    const kept = tokens.slice(0, n);
    const keep = Math.max(0, n - 1);
    this.#session.truncate(keep);
    this.#tokens = kept.slice(0, keep);
    this.#logits = null;
    if (n > 0) this.feed([kept[n - 1]]);
  }

  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#session.dispose();
    this.#tokens = [];
    this.#logits = null;
    this.#inputs.rows = [];
    this.#onDispose(this);
  }
}

/**
 * internals: { attn, model (loadModel's), config (model.config), layerArgs (each layer's attention
 * arguments, for the one-shot head steps), inputNorms (each layer's input RMSNorm weight), normEps,
 * poem (the public model) }.
 */
export function createSession(internals, { maxLength = internals.config.maxPositions } = {}, onDispose = () => {}) {
  return new PoemSession(internals, maxLength, onDispose);
}
