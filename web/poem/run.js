// One run of the poem model as the page holds it: the tokens (prompt, then generated), each
// layer's and head's causal attention rows as they arrive, and the top next tokens of every
// step. Plain data and pure updates; knows nothing of the worker or of drawing.
//
//   let run = createPoemRun({ id, nLayers, nHeads, nKvHeads, kvHeads, capacity });
//   run = addPrompt(run, { ids, texts, top, attention });       // attention [L] of [H, n, n]
//   run = addToken(run, { token: { id, text, top }, attention, ms }); // attention [L] of [H, 1, n + 1]
//   matrixOf(run, layer, head)   // Float32Array [n, n], row i = query i over keys 0 … n−1

import { topTokens } from './model/sampling.js';

// Attention weights are probabilities: every map of the model shares the scale 0 … 1, so a
// colour means the same weight in every layer and head.
export const WEIGHT_DOMAIN = [0, 1];

/** How a token reads in a label: the line break and the poem start made visible. */
export function tokenLabel(text) {
  if (text === '\n') return '↵';
  if (text === '' || text === '<s>') return '⟨s⟩';
  return text;
}

/**
 * @param {{ id: number, nLayers: number, nHeads: number, nKvHeads: number, kvHeads?: number[],
 *   capacity: number, vocab?: string[], temperature?: number }} o
 *   kvHeads: each query head's K/V head, as the model worker computed them (the package's kvHeadOf)
 *   capacity: the most tokens the run can hold (prompt + new tokens); temperature: the one the
 *   candidates are listed at, from each step's logits (null: as the worker listed them)
 */
export function createPoemRun({
  id,
  nLayers,
  nHeads,
  nKvHeads,
  kvHeads = null,
  capacity,
  vocab = null,
  temperature = null,
}) {
  return {
    vocab, // the tokens' texts, to name the candidates listed at another temperature
    id,
    nLayers,
    nHeads,
    nKvHeads,
    capacity,
    kvHeads,
    n: 0,
    promptLength: 0,
    ids: [],
    texts: [],
    // top[i]: the most probable tokens at position i, i.e. the distribution token i was drawn
    // from (null for the prompt's own tokens); top[n] is the next token's, not drawn yet.
    top: [],
    // rows[l * nHeads + h]: capacity × capacity, row-major, row i filled up to column i.
    rows: Array.from({ length: nLayers * nHeads }, () => new Float32Array(capacity * capacity)),
    // logits[i]: those token i was chosen from (logits[n]: the next token's), so the candidates can be
    // listed at any temperature; `temperature` is the one `top` was computed at (null: the worker's).
    logits: [],
    temperature,
    tokenMs: [], // the worker's time for each generated token
    drawnAt: [], // drawnAt[i]: the temperature token i was drawn at (0: greedy; null for the prompt)
    done: false,
    reason: '',
  };
}

function storeRows(run, attention, first, count) {
  const { nLayers, nHeads, capacity } = run;
  for (let l = 0; l < nLayers; l++) {
    const a = attention[l];
    const keys = a.length / (nHeads * count);
    for (let h = 0; h < nHeads; h++) {
      const target = run.rows[l * nHeads + h];
      for (let r = 0; r < count; r++) {
        const from = (h * count + r) * keys;
        target.set(a.subarray(from, from + keys), (first + r) * capacity);
      }
    }
  }
}

/** The prompt, fed at once: its tokens, its attention, the top of the first new token. */
export function addPrompt(run, { ids, texts, top, attention, logits = null }) {
  const n = ids.length;
  if (n > run.capacity) throw new RangeError(`the prompt has ${n} tokens; the run holds ${run.capacity}`);
  storeRows(run, attention, 0, n);
  const tops = Array(n + 1).fill(null);
  tops[n] = logits && run.temperature !== null ? topFrom(run, logits, run.temperature, top.length) : top;
  const all = Array(n + 1).fill(null);
  all[n] = logits;
  return { ...run, n, promptLength: n, ids: [...ids], texts: [...texts], top: tops, logits: all };
}

/** One generated token: its attention row, the distribution it was drawn from, the worker's time for it. */
export function addToken(run, { token, attention, ms, logits = null }) {
  const i = run.n;
  if (i >= run.capacity) throw new RangeError(`the run holds ${run.capacity} tokens`);
  storeRows(run, attention, i, 1);
  const top = run.top.slice(0, i);
  const all = run.logits.slice(0, i);
  all[i] = logits;
  top[i] = logits && run.temperature !== null ? topFrom(run, logits, run.temperature, token.top.length) : token.top;
  const tokenMs = typeof ms === 'number' ? [...run.tokenMs, ms] : run.tokenMs;
  const drawnAt = run.drawnAt.slice(0, i);
  drawnAt[i] = token.temperature ?? null;
  return {
    ...run,
    drawnAt,
    n: i + 1,
    ids: [...run.ids, token.id],
    texts: [...run.texts, token.text],
    top,
    logits: all,
    tokenMs,
  };
}

/**
 * The run ended; `top` (when the model stopped at a new poem) is the next token's distribution,
 * `logits` the model's after the last token (the next token's candidates at any temperature).
 */
export function finishRun(run, reason, top = null, logits = null) {
  const tops = run.top.slice(0, run.n + 1);
  const all = run.logits.slice(0, run.n + 1);
  if (logits) all[run.n] = logits;
  if (top) tops[run.n] = top;
  else if (logits && run.temperature !== null) tops[run.n] = topFrom(run, logits, run.temperature, 8);
  return { ...run, done: true, reason, top: tops, logits: all };
}

function topFrom(run, logits, temperature, count) {
  return topTokens(logits, count, temperature, run.vocab);
}

/**
 * The candidates of every step listed again at `temperature` (1 for greedy: the model's own
 * distribution), from the logits each step kept: the live temperature's bars. `vocab` names them.
 */
export function withTemperature(run, temperature, vocab, count) {
  const r = { ...run, vocab: vocab ?? run.vocab, temperature };
  r.top = run.top.map((t, i) => (run.logits[i] ? topFrom(r, run.logits[i], temperature, t?.length ?? count) : t));
  return r;
}

/** Head h of layer l as an n × n matrix (a fresh copy). */
export function matrixOf(run, layer, head) {
  const { n, capacity } = run;
  const src = run.rows[layer * run.nHeads + head];
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(src.subarray(i * capacity, i * capacity + n), i * n);
  return out;
}

/** The distribution shown for position i: the one its token was drawn from, or the next one. */
export function topAt(run, i) {
  return run.top[i] ?? null;
}

/** The labels of the run's tokens. */
export const labelsOf = (run) => run.texts.map(tokenLabel);

/**
 * The four steps of one head for query i, shaped for steps.js, from the worker's headSteps
 * { q, keys, values, scores, scaledScores, weights, output, masked } (keys over the tokens so far;
 * masked[j]: whether the query may not see key j, the package's isKeyMasked as the worker applied it).
 */
export function stepsOf(run, { layer, head }, query, s) {
  const n = s.weights.length;
  const dK = s.q.length;
  return {
    source: `layer ${layer + 1}, head ${head + 1}`,
    tokens: labelsOf(run).slice(0, n),
    query,
    domain: WEIGHT_DOMAIN,
    masked: (j) => s.masked?.[j] === true,
    causal: true,
    dK,
    dV: s.output.length,
    scale: s.scale ?? 1 / Math.sqrt(dK),
    q: s.q,
    K: s.keys,
    V: s.values,
    scores: s.scores,
    scaledScores: s.scaledScores,
    weights: s.weights,
    output: s.output,
  };
}
