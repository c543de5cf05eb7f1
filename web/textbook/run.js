// Read-only questions about one textbook computation (a "run": settings, tokens, the engine's
// results): which views it has, which cells are masked, the matrix and colour scale of each view, and the numbers
// of the four steps for one query. Pure functions; nothing is drawn or computed anew.
//
// Views are named by key: 'self' (single-head self-attention), 'head:<h>' (head h of
// multi-head attention, from 0) and 'average' (the heads' average, PyTorch's default).
//
// Colour scales, one per view group (documented in web/README.md): every weight drawn from the
// single head (heatmap, row bars, step bars) maps [0, largest single-head weight] onto viridis;
// every weight drawn from multi-head attention (each head, the average, their bars) maps
// [0, largest weight over all heads and the average]. So a weight has one colour per view.
import { isKeyMasked } from '../shared/package-entry.js';

function maxOf(values) {
  let m = 0;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** The views of a run, in page order: [{ key, label, group }]. */
export function viewsOf(run) {
  if (!run) return [];
  const out = [];
  if (run.results.self) out.push({ key: 'self', label: 'the single head', group: 'self' });
  if (run.results.mhaHeads) {
    for (let h = 0; h < run.settings.numHeads; h++)
      out.push({ key: `head:${h}`, label: `head ${h + 1}`, group: 'mha' });
    if (run.results.mhaAverage)
      out.push({ key: 'average', label: `the average of ${run.settings.numHeads} heads`, group: 'mha' });
  }
  return out;
}

export const groupOf = (key) => (key === 'self' ? 'self' : 'mha');

/** masked(i, j) for the heatmaps, or undefined when the run masks nothing (nothing to hatch). */
export const maskedCells = (run) => (run.settings.isCausal ? (i, j) => isKeyMasked(run.settings, i, j) : undefined);

/** The n × n weights of a view, or null. */
export function matrixOf(run, key) {
  if (!run) return null;
  const n = run.n;
  const { self, mhaHeads, mhaAverage } = run.results;
  if (key === 'self') return self ? self.weights : null;
  if (key === 'average') return mhaAverage ? mhaAverage.weights : null;
  if (key.startsWith('head:') && mhaHeads) {
    const h = Number(key.slice(5));
    if (h >= 0 && h < run.settings.numHeads) return mhaHeads.weights.subarray(h * n * n, (h + 1) * n * n);
  }
  return null;
}

const scales = new WeakMap(); // run.results → { self, mha }: a scan of every weight, done once per run

/** The colour scale of a view group: { domain: [0, max], label }. */
export function scaleOf(run, group) {
  let known = scales.get(run.results);
  if (!known) scales.set(run.results, (known = {}));
  if (!known[group]) known[group] = computeScale(run, group);
  return known[group];
}

function computeScale(run, group) {
  const { self, mhaHeads, mhaAverage } = run.results;
  if (group === 'self') {
    const max = self ? maxOf(self.weights) : 0;
    return { domain: [0, max > 0 ? max : 1], label: 'attention weight: 0 … largest single-head weight' };
  }
  const max = Math.max(mhaHeads ? maxOf(mhaHeads.weights) : 0, mhaAverage ? maxOf(mhaAverage.weights) : 0);
  return { domain: [0, max > 0 ? max : 1], label: 'attention weight: 0 … largest over all heads and the average' };
}

/**
 * The numbers of the four steps for query i in a view, as the engine returned them, or null
 * without intermediates. For 'average': { average: true, weights, … } only, since the average
 * of the heads' weights has no Q, K, V or scores of its own.
 */
export function stepsData(run, key, i) {
  const s = run.settings;
  const common = {
    tokens: run.tokens,
    query: i,
    masked: (j) => isKeyMasked(s, i, j),
    causal: s.isCausal,
    domain: scaleOf(run, groupOf(key)).domain,
  };
  if (key === 'average') return averageSteps(run, i, common);
  if (key === 'self') return selfSteps(run, i, common);
  return headSteps(run, Number(key.slice(5)), i, common);
}

function averageSteps(run, i, common) {
  const n = run.n;
  const avg = run.results.mhaAverage;
  if (!avg) return null;
  return {
    ...common,
    average: true,
    source: `average of the ${run.settings.numHeads} heads`,
    numHeads: run.settings.numHeads,
    weights: avg.weights.subarray(i * n, (i + 1) * n),
  };
}

function selfSteps(run, i, common) {
  const n = run.n;
  const r = run.results.self;
  const it = r?.intermediates;
  if (!it) return null;
  const dK = run.settings.dModel;
  const dV = r.output.length / n;
  return {
    ...common,
    source: 'single head',
    dK,
    dV,
    scale: 1 / Math.sqrt(dK),
    q: it.q.subarray(i * dK, (i + 1) * dK),
    K: it.k,
    V: it.v,
    scores: it.scores.subarray(i * n, (i + 1) * n),
    scaledScores: it.scaledScores.subarray(i * n, (i + 1) * n),
    weights: r.weights.subarray(i * n, (i + 1) * n),
    output: r.output.subarray(i * dV, (i + 1) * dV),
  };
}

function headSteps(run, h, i, common) {
  const n = run.n;
  const s = run.settings;
  const r = run.results.mhaHeads;
  const it = r?.intermediates;
  if (!it) return null;
  const head = headIntermediates(run, h);
  const d = head.d;
  const base = (h * n + i) * n;
  return {
    ...common,
    source: `head ${h + 1} of ${s.numHeads}`,
    dK: d,
    dV: d,
    scale: 1 / Math.sqrt(d),
    q: head.q.subarray(i * d, (i + 1) * d),
    K: head.k,
    V: head.v,
    scores: it.scores.subarray(base, base + n),
    scaledScores: it.scaledScores.subarray(base, base + n),
    weights: r.weights.subarray(base, base + n),
    output: it.attnOutput.subarray(i * s.dModel + h * d, i * s.dModel + (h + 1) * d),
  };
}

/** Head h's own q, k, v ([n, d] each, gathered from the engine's [n, d_model] projections) and its scores. */
export function headIntermediates(run, h) {
  const n = run.n;
  const E = run.settings.dModel;
  const d = E / run.settings.numHeads;
  const it = run.results.mhaHeads.intermediates;
  const gather = (m) => {
    const out = new Float32Array(n * d);
    for (let j = 0; j < n; j++) out.set(m.subarray(j * E + h * d, j * E + (h + 1) * d), j * d);
    return out;
  };
  return {
    d,
    q: gather(it.q),
    k: gather(it.k),
    v: gather(it.v),
    scores: it.scores.subarray(h * n * n, (h + 1) * n * n),
    scaledScores: it.scaledScores.subarray(h * n * n, (h + 1) * n * n),
  };
}
