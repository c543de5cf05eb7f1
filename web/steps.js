// The seed's four steps for one query token, every number as the engine returned it:
//   1. project: q = x·W_Qᵀ, k = x·W_Kᵀ, v = x·W_Vᵀ      (strips of the vectors)
//   2. score:   q·kⱼ against every key                  (raw, unscaled)
//   3. scale:   × 1/√d_k, masked keys set to −∞
//   4. softmax → weights, then the weighted sum Σⱼ wⱼ·vⱼ  (the output row)
// This module only lays the numbers out; it computes nothing but colour ranges.
import { diverging, viridis } from './colormap.js';
import { drawBars } from './bars.js';
import { drawHeatmap } from './heatmap.js';
import { el } from './dom.js';


export function formatNumber(v, digits = 3) {
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  if (Number.isNaN(v)) return 'NaN';
  const s = v.toFixed(digits);
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

function absMax(values) {
  let m = 0;
  for (const v of values) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m || 1;
}

/** A matrix of signed values (rows × cols) as a strip of coloured cells. */
function strip(values, rows, cols, rowLabels, testId) {
  const canvas = el('canvas', { class: 'strip', 'data-testid': testId });
  const m = absMax(values);
  const cellWidth = Math.max(1, Math.min(12, Math.floor(560 / cols)));
  const cellHeight = rows === 1 ? 14 : Math.max(3, Math.min(12, Math.floor(220 / rows)));
  drawHeatmap(canvas, {
    matrix: values,
    rows,
    cols,
    rowLabels,
    domain: [-m, m],
    colormap: (t) => diverging(2 * t - 1),
    cellWidth,
    cellHeight,
  });
  canvas.title = `${rows} × ${cols} values, colour range ±${m.toPrecision(3)} (blue negative, red positive)`;
  return canvas;
}

function numberRow(label, values, masked, testId) {
  const tr = el('tr', { 'data-testid': testId }, el('th', { scope: 'row', text: label }));
  Array.from(values).forEach((v, j) => {
    const td = el('td', { text: formatNumber(v), title: String(v) });
    if (masked(j)) td.className = 'masked';
    tr.append(td);
  });
  return tr;
}

/**
 * @param {HTMLElement} container   emptied and filled
 * @param {object} s
 * @param {string} s.source         e.g. 'single head' or 'head 3 of 8'
 * @param {string[]} s.tokens
 * @param {number} s.query          query index
 * @param {number} s.dK
 * @param {number} s.dV
 * @param {number} s.scale          the scale the engine applied (1/√d_k unless given)
 * @param {Float32Array} s.q        [dK]        q of the query
 * @param {Float32Array} s.K        [n, dK]     keys
 * @param {Float32Array} s.V        [n, dV]     values
 * @param {Float32Array} s.scores   [n]         raw q·kⱼ
 * @param {Float32Array} s.scaledScores [n]     scaled, −∞ where masked
 * @param {Float32Array} s.weights  [n]         softmax of the scaled scores
 * @param {Float32Array} s.output   [dV]        Σⱼ wⱼ·vⱼ
 * @param {(j: number) => boolean} s.masked
 * @param {boolean} s.causal
 */
export function renderSteps(container, s) {
  const n = s.tokens.length;
  const qTok = s.tokens[s.query];
  const keyLabels = s.tokens.map((t, j) => `${t}`);
  container.replaceChildren();
  container.dataset.query = String(s.query);

  const step = (num, title, caption, ...body) =>
    el('section', { class: 'step', 'data-step': String(num) },
      el('h4', { text: `${num}. ${title}` }),
      el('p', { class: 'caption', text: caption }),
      ...body);

  container.append(
    el('p', { class: 'steps-intro' },
      `Query token “${qTok}” (position ${s.query + 1}) in the ${s.source}. Every number below was returned by the WebAssembly engine (returnIntermediates), none is recomputed by the page.`),
  );

  container.append(step(1, 'Project to Q, K, V',
    `The embedding of each token is multiplied by three learned matrices. The query “${qTok}” asks with q (${s.dK} numbers); every token offers a key k to be matched and a value v to be passed on. Blue is negative, red positive.`,
    el('div', { class: 'strip-row' }, el('span', { class: 'strip-label', text: `q (“${qTok}”)` }), strip(s.q, 1, s.dK, [qTok], 'step-q')),
    el('div', { class: 'strip-row' }, el('span', { class: 'strip-label', text: 'K (one row per key)' }), strip(s.K, n, s.dK, keyLabels, 'step-k')),
    el('div', { class: 'strip-row' }, el('span', { class: 'strip-label', text: 'V (one row per key)' }), strip(s.V, n, s.dV, keyLabels, 'step-v')),
  ));

  const table = el('table', { class: 'numbers', 'data-testid': 'step-table' },
    el('thead', {}, el('tr', {}, el('th', { text: 'key →' }), ...keyLabels.map((t) => el('th', { text: t })))),
    el('tbody', {},
      numberRow('q·k (raw score)', s.scores, s.masked, 'row-scores'),
      numberRow(`× ${formatNumber(s.scale, 4)} (scaled)`, s.scaledScores, s.masked, 'row-scaled'),
      numberRow('softmax (weight)', s.weights, s.masked, 'row-weights'),
    ));

  container.append(step(2, 'Score every key',
    `The dot product q·kⱼ measures how well each key matches the query: large and positive means “relevant”.`,
    el('div', { class: 'table-scroll' }, table)));

  container.append(step(3, 'Scale (and mask)',
    `Scores are multiplied by 1/√d_k = ${formatNumber(s.scale, 4)} so their spread does not grow with the dimension (which would make softmax too peaked).${
      s.causal ? ' With causal on, keys after the query are masked: −∞, so softmax gives them weight 0.' : ''} See the second row of the table.`));

  const bars = el('canvas', { class: 'bars', 'data-testid': 'step-bars' });
  drawBars(bars, { values: s.weights, labels: keyLabels, max: 1, colormap: viridis, masked: s.masked });
  container.append(step(4, 'Softmax, then the weighted sum',
    `Softmax turns the scaled scores into weights ≥ 0 that sum to 1 (third row, bars). The output for “${qTok}” is Σⱼ wⱼ·vⱼ: a blend of the values, mostly of the keys it attends to.`,
    bars,
    el('div', { class: 'strip-row' }, el('span', { class: 'strip-label', text: `output (“${qTok}”)` }), strip(s.output, 1, s.dV, [qTok], 'step-output')),
  ));
}
