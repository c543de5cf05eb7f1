// Token-by-token continuation of a session: choose the next token from the last logits, feed it,
// report it with the candidates it was chosen from and its attention rows, repeat. The choice is the
// model's createSampler (the chooser model.generate uses: temperature, then top-k, then a seeded
// draw), so a seed gives the same poem here as in model.generate.

const POEM_START_ID = 0;

/**
 * A generator yielding { id, text, position, top, attention, logits } per new token: text is the token's
 * own text, position its index in the session, top the topCount most likely candidates it was drawn
 * from ([{ id, text, prob }], at the sampling temperature, or 1 when greedy), attention its rows
 * from session.feed (per layer [numHeads, 1, position + 1]), logits those it was chosen from (a copy),
 * temperature the one it was drawn at (0: greedy). It stops after maxNew tokens, when the
 * session is full, or (stopAtPoemStart) when the model picks the poem start, which is then neither
 * yielded nor fed; the generator's return value says which: { stop: 'maxNew' | 'maxLength' |
 * 'poemStart', top } (top: the candidates of the step that stopped, or null). Options are checked
 * when generate is called, not at the first next(). The generator's setSampling({ temperature, topK })
 * changes them from the next token on.
 */
export function generate(
  session,
  { maxNew = Infinity, temperature = 0, topK = 0, seed, stopAtPoemStart = true, topCount = 10 } = {},
) {
  if (session === null || typeof session !== 'object' || typeof session.feed !== 'function' || !session.model) {
    throw new TypeError('generate: session must come from model.createSession()');
  }
  if (!(maxNew === Infinity || (Number.isInteger(maxNew) && maxNew >= 0))) {
    throw new RangeError(`generate: maxNew must be an integer ≥ 0 (or Infinity), got ${maxNew}`);
  }
  if (!Number.isInteger(topCount) || topCount < 1)
    throw new RangeError(`generate: topCount must be a positive integer, got ${topCount}`);
  if (session.length === 0) {
    throw new RangeError('generate: the session is empty; feed the prompt first (starting with the poem start, id 0)');
  }
  const model = session.model;
  let next = model.model.createSampler({ temperature, topK, seed });
  let topTemperature = temperature > 0 ? temperature : 1;
  let made = 0;

  const it = (function* steps() {
    for (; made < maxNew; made++) {
      if (session.length >= session.maxLength) return { stop: 'maxLength', top: null };
      const logits = session.logits;
      const id = next(logits);
      const top = model.topTokens(logits, topCount, topTemperature);
      if (stopAtPoemStart && id === POEM_START_ID) return { stop: 'poemStart', top };
      const { attention } = session.feed([id]);
      yield { id, text: model.tokenText(id), position: session.length - 1, top, attention, logits, temperature };
    }
    return { stop: 'maxNew', top: null };
  })();
  /**
   * New sampling settings from the next token on (the page's live temperature). The sampler is made
   * again, seeded with seed + the tokens made so far: the same changes at the same steps give the
   * same poem.
   */
  it.setSampling = ({ temperature: t = temperature, topK: k = topK } = {}) => {
    if (!(typeof t === 'number' && Number.isFinite(t) && t >= 0))
      throw new RangeError(`setSampling: temperature must be a finite number ≥ 0, got ${t}`);
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`setSampling: topK must be an integer ≥ 0, got ${k}`);
    temperature = t;
    topK = k;
    next = model.model.createSampler({ temperature, topK, seed: seed === undefined ? undefined : seed + made });
    topTemperature = temperature > 0 ? temperature : 1;
  };
  return it;
}
