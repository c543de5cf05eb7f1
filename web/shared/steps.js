// The worked example's four steps for one query token, every number as the engine returned it:
//   1. project: q = x·W_Qᵀ, k = x·W_Kᵀ, v = x·W_Vᵀ      (strips of the vectors)
//   2. score:   q·kⱼ against every key                  (raw, unscaled)
//   3. scale:   × 1/√d_k, masked keys set to −∞
//   4. softmax → weights, then the weighted sum Σⱼ wⱼ·vⱼ  (the output row)
// This module only lays the numbers out; it computes nothing but colour ranges.
// The average of several heads has no Q, K, V or scores of its own: for it (s.average) the
// view says so and shows the averaged weights only.
import { diverging } from './colormap.js';
import { drawBars } from './bars.js';
import { drawStrip, stripCellAt } from './strip.js';
import { weightRGB } from '../../viz/index.mjs';
import { el } from './dom.js';
import { qkBlock, weightedValuesBlock } from './steps-detail.js';
import { bindStepPlayer } from './steps-play.js';

// The player bound to each steps container, disposed (its timer) when the container is drawn again.
const players = new WeakMap();

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

/**
 * A matrix of signed values (rows × cols) as a strip of coloured cells, with a readout of
 * the value under the pointer, or under the keyboard cursor (the strip is focusable; arrow
 * keys move, Home/End jump along the row).
 */
function strip(values, rows, cols, rowLabels, testId, { name, width }) {
  const canvas = el('canvas', { class: 'strip', 'data-testid': testId, tabindex: '0' });
  const readout = el('output', { class: 'readout', 'data-testid': `${testId}-readout`, 'aria-live': 'polite' });
  const m = absMax(values);
  // A short vector (the readable sizes) gets cells big enough to see each value's colour.
  const cellWidth = Math.max(0.25, Math.min(cols <= 32 ? 24 : 12, (width - 50) / cols));
  const cellHeight = rows === 1 ? 18 : Math.max(3, Math.min(rows <= 16 ? 16 : 12, Math.floor(220 / rows)));
  const opts = { values, rows, cols, rowLabels, colour: (v) => diverging(v / m), cellWidth, cellHeight };
  const layout = drawStrip(canvas, opts);
  const range = `colour range ±${m.toPrecision(3)} (blue negative, red positive)`;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute(
    'aria-label',
    `${name}: ${rows} × ${cols} values, ${range}. Focus and use the arrow keys to read values.`,
  );
  const show = (i, j) => {
    const row = rows === 1 ? '' : ` · row ${i + 1} “${rowLabels[i]}”`;
    readout.textContent = `${name}${row} · dim ${j + 1} of ${cols}: ${formatNumber(values[i * cols + j], 4)}`;
    readout.dataset.value = String(values[i * cols + j]);
  };
  let cursor = { i: 0, j: 0 };
  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    const hit = stripCellAt(layout, e.clientX - r.left, e.clientY - r.top);
    if (hit) show(hit.i, hit.j);
  });
  canvas.addEventListener('focus', () => {
    drawStrip(canvas, { ...opts, cursor });
    show(cursor.i, cursor.j);
  });
  canvas.addEventListener('blur', () => drawStrip(canvas, opts));
  canvas.addEventListener('keydown', (e) => {
    const d = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
      Home: [0, -cols],
      End: [0, cols],
    }[e.key];
    if (!d) return;
    e.preventDefault();
    cursor = {
      i: Math.max(0, Math.min(rows - 1, cursor.i + d[0])),
      j: Math.max(0, Math.min(cols - 1, cursor.j + d[1])),
    };
    drawStrip(canvas, { ...opts, cursor });
    show(cursor.i, cursor.j);
  });
  readout.textContent = `${name}: point at or focus the strip to read a value (${range}).`;
  return el('div', { class: 'strip-box' }, canvas, readout);
}

function numberRow(label, values, masked, testId, stage) {
  const tr = el(
    'tr',
    { 'data-testid': testId, ...(stage ? { 'data-stage': String(stage) } : {}) },
    el('th', { scope: 'row', text: label }),
  );
  Array.from(values).forEach((v, j) => {
    const td = el('td', { text: formatNumber(v), title: String(v), style: `--k: ${j}` });
    if (masked(j)) td.className = 'masked';
    tr.append(td);
  });
  return tr;
}

/**
 * @param {HTMLElement} container   emptied and filled
 * @param {object} s
 * @param {string} s.source         e.g. 'single head', 'head 3 of 8' or 'average of the 8 heads'
 * @param {string[]} s.tokens
 * @param {number} s.query          query index
 * @param {[number, number]} s.domain   colour scale of the weights (that of the view they come from)
 * @param {Float32Array} s.weights  [n]         softmax of the scaled scores (or the heads' average)
 * @param {(j: number) => boolean} s.masked
 * @param {boolean} s.causal
 * @param {boolean} [s.average]     the heads' average: no q, K, V, scores or output exist
 * @param {number} [s.numHeads]     with s.average
 * @param {number} s.dK             (not with s.average, nor the rest)
 * @param {number} s.dV
 * @param {number} s.scale          the scale the engine applied (1/√d_k unless given)
 * @param {Float32Array} s.q        [dK]        q of the query
 * @param {Float32Array} s.K        [n, dK]     keys
 * @param {Float32Array} s.V        [n, dV]     values
 * @param {Float32Array} s.scores   [n]         raw q·kⱼ
 * @param {Float32Array} s.scaledScores [n]     scaled, −∞ where masked
 * @param {Float32Array} s.output   [dV]        Σⱼ wⱼ·vⱼ
 */
export function renderSteps(container, s) {
  const n = s.tokens.length;
  const qTok = s.tokens[s.query];
  const keyLabels = s.tokens.map((t) => `${t}`);
  const width = Math.max(240, Math.min(720, container.clientWidth || 560));
  const stripWidth = width >= 600 ? width - 160 : width;
  players.get(container)?.dispose();
  players.delete(container);
  container.replaceChildren();
  container.dataset.query = String(s.query);
  container.dataset.source = s.source;

  const step = (num, title, caption, ...body) =>
    el(
      'section',
      { class: 'step', 'data-step': String(num), ...(num === 3 ? { 'data-stage': '2' } : {}) },
      el('h3', { text: num ? `${num}. ${title}` : title }),
      el('p', { class: 'caption', text: caption }),
      ...body,
    );
  const stripRow = (label, ...args) =>
    el(
      'div',
      { class: 'strip-row' },
      el('span', { class: 'strip-label', text: label }),
      strip(...args, { name: label, width: stripWidth }),
    );
  const weightBars = () => {
    const bars = el('canvas', {
      class: 'bars',
      'data-testid': 'step-bars',
      'data-stage': '3',
      role: 'img',
      'aria-label': `weights of query ${qTok} in the ${s.source}`,
    });
    drawBars(bars, {
      values: s.weights,
      labels: keyLabels,
      max: s.domain[1],
      colour: weightRGB,
      masked: s.masked,
      maxWidth: width,
    });
    return bars;
  };
  const table = (...rows) =>
    el(
      'div',
      { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': `numbers of query ${qTok}` },
      el(
        'table',
        { class: 'numbers', 'data-testid': 'step-table' },
        el(
          'thead',
          {},
          el('tr', {}, el('th', { text: 'key →' }), ...keyLabels.map((t) => el('th', { scope: 'col', text: t }))),
        ),
        el('tbody', {}, ...rows),
      ),
    );

  if (s.average) {
    container.append(
      el(
        'p',
        { class: 'steps-intro', 'data-testid': 'steps-average' },
        `Query token “${qTok}” (position ${s.query + 1}) in the ${s.source}. The average has no single Q, K or V: ` +
          `each head has its own, and the average is taken over the heads' softmax weights. So only the averaged weights are shown; ` +
          'pick a head in “in” to see its four steps.',
      ),
      step(
        0,
        'Averaged weights',
        `The mean over the ${s.numHeads} heads of each head's weight for this query and key; rows still sum to 1.`,
        table(numberRow('mean weight', s.weights, s.masked, 'row-weights')),
        weightBars(),
      ),
    );
    return;
  }

  const play = el('button', { type: 'button', 'data-testid': 'steps-play' }, 'Play the four steps');
  const next = el('button', { type: 'button', 'data-testid': 'steps-next' }, 'Next step');
  const all = el('button', { type: 'button', 'data-testid': 'steps-all' }, 'Show all');
  const status = el('p', { class: 'steps-status', 'data-testid': 'steps-status', 'aria-live': 'polite' });
  container.append(
    el(
      'p',
      { class: 'steps-intro' },
      `Query token “${qTok}” (position ${s.query + 1}) in the ${s.source}. Every number below was returned by the WebAssembly engine (returnIntermediates), except the q∘k products and the weighted value rows, which the page multiplies out from the engine's q, K, V and weights to show where a score and the output come from.`,
    ),
    el(
      'div',
      { class: 'buttons steps-player', role: 'group', 'aria-label': 'step through the four steps' },
      play,
      next,
      all,
    ),
    status,
  );

  container.append(
    step(
      1,
      'Project to Q, K, V',
      `The embedding of each token is multiplied by three learned matrices. The query “${qTok}” asks with q (${s.dK} numbers); every token offers a key k to be matched and a value v to be passed on. Blue is negative, red positive; point at a strip or focus it for a value.`,
      stripRow(`q (“${qTok}”)`, s.q, 1, s.dK, [qTok], 'step-q'),
      stripRow('K (one row per key)', s.K, n, s.dK, keyLabels, 'step-k'),
      stripRow('V (one row per key)', s.V, n, s.dV, keyLabels, 'step-v'),
    ),
  );

  container.append(
    step(
      2,
      'Score every key',
      `The dot product q·kⱼ measures how well each key matches the query: large and positive means “relevant”.`,
      el('div', { 'data-stage': '1' }, qkBlock(s, qTok)),
      table(
        numberRow('q·k (raw score)', s.scores, s.masked, 'row-scores', 1),
        numberRow(`× ${formatNumber(s.scale, 4)} (scaled)`, s.scaledScores, s.masked, 'row-scaled', 2),
        numberRow('softmax (weight)', s.weights, s.masked, 'row-weights', 3),
      ),
    ),
  );

  container.append(
    step(
      3,
      'Scale (and mask)',
      `Scores are multiplied by 1/√d_k = ${formatNumber(s.scale, 4)} so their spread does not grow with the dimension (which would make softmax too peaked).${
        s.causal ? ' With causal on, keys after the query are masked: −∞, so softmax gives them weight 0.' : ''
      } See the second row of the table.`,
    ),
  );

  container.append(
    step(
      4,
      'Softmax, then the weighted sum',
      `Softmax turns the scaled scores into weights ≥ 0 that sum to 1 (third row, bars, on the colour scale of the heatmap they come from). The output for “${qTok}” is Σⱼ wⱼ·vⱼ: a blend of the values, mostly of the keys it attends to.`,
      weightBars(),
      el('div', { 'data-stage': '4' }, weightedValuesBlock(s)),
      el('div', { 'data-stage': '4' }, stripRow(`output (“${qTok}”)`, s.output, 1, s.dV, [qTok], 'step-output')),
    ),
  );
  players.set(container, bindStepPlayer(container, { play, next, all, status }));
}
