// Two tables of the four steps that show where a number comes from: q∘kⱼ, the elementwise
// products of the query and one key that sum to their score, and the value rows vⱼ weighted by
// the softmax, the rows that make the output, each shaded by its weight. The products and the
// shading are the page's arithmetic on the engine's q, K, V and weights (the engine returns the
// scores, not the products); the tables say so.
import { el } from './dom.js';

const format = (v, digits = 3) => {
  if (v === -Infinity) return '−∞';
  const s = v.toFixed(digits);
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
};

// At most this many dimensions are written out as numbers; wider vectors show their first ones.
export const SHOWN_DIMS = 16;
// At most this many value rows are listed (the heaviest, in token order); the rest are summed up.
export const SHOWN_ROWS = 16;

/** The elementwise products q∘kⱼ of key j (a Float64Array of dK). */
export function qkProducts(q, K, j) {
  const dK = q.length;
  const out = new Float64Array(dK);
  for (let d = 0; d < dK; d++) out[d] = q[d] * K[j * dK + d];
  return out;
}

/** The unmasked key with the largest weight: the one worth explaining first. */
export function strongestKey(weights, masked) {
  let best = -1;
  for (let j = 0; j < weights.length; j++) if (!masked(j) && (best < 0 || weights[j] > weights[best])) best = j;
  return Math.max(0, best);
}

const dimHeader = (leading, count, total) =>
  el(
    'tr',
    {},
    ...leading.map((text) => el('th', { scope: 'col', text })),
    ...Array.from({ length: count }, (_, d) => el('th', { scope: 'col', text: `d${d + 1}` })),
    ...(total > count ? [el('th', { scope: 'col', text: `… ${total - count} more` })] : []),
  );

/**
 * The q∘k block: a key picker and the products of that key, with their sum beside the engine's score.
 * @param {object} s   renderSteps' data (q, K, scores, weights, masked, tokens, dK)
 */
export function qkBlock(s, qTok) {
  const select = el(
    'select',
    { 'data-testid': 'qk-key', 'aria-label': 'key whose products with q are shown' },
    ...s.tokens.map((t, j) =>
      el('option', { value: String(j), text: `${j + 1}: ${t}${s.masked(j) ? ' (masked)' : ''}` }),
    ),
  );
  const table = el('table', { class: 'numbers qk', 'data-testid': 'qk-table' });
  const show = (j) => {
    select.value = String(j);
    fillProducts(table, s, qTok, j);
  };
  select.addEventListener('change', () => show(Number(select.value)));
  show(strongestKey(s.weights, s.masked));
  return el(
    'div',
    { class: 'qk-block' },
    el(
      'p',
      { class: 'caption' },
      `A score is a sum: q∘k multiplies q and one key dimension by dimension (${s.dK} products, computed here from the engine's q and k), and their sum is the raw score. Key: `,
      select,
    ),
    el('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'q∘k products' }, table),
  );
}

/** The q∘k table's rows for key j: its products (the first SHOWN_DIMS) and their sum. */
function fillProducts(table, s, qTok, j) {
  const shown = Math.min(s.dK, SHOWN_DIMS);
  const p = qkProducts(s.q, s.K, j);
  const sum = p.reduce((a, b) => a + b, 0);
  table.replaceChildren(
    el('thead', {}, dimHeader(['products'], shown, s.dK)),
    el(
      'tbody',
      {},
      el(
        'tr',
        { 'data-testid': 'qk-row', 'data-key': String(j) },
        el('th', { scope: 'row', text: `q∘k (“${qTok}”·“${s.tokens[j]}”)` }),
        ...numberCells(p, shown),
      ),
      el(
        'tr',
        {},
        el('th', { scope: 'row', text: 'sum = score q·k' }),
        el('td', {
          colspan: String(shown + (s.dK > shown ? 1 : 0)),
          'data-testid': 'qk-sum',
          'data-sum': String(sum),
          text: `${format(sum, 4)} (the engine's score: ${format(s.scores[j], 4)})`,
        }),
      ),
    ),
  );
}

/** The first `shown` values as cells, and a "…" cell when there are more. */
const numberCells = (values, shown) => [
  ...Array.from(values.subarray(0, shown), (v) => el('td', { text: format(v), title: String(v) })),
  ...(values.length > shown ? [el('td', { text: '…' })] : []),
];

/** The value rows vⱼ with their weights, shaded by weight (the strongest marked): what the output is made of. */
export function weightedValuesBlock(s) {
  const n = s.tokens.length;
  const shown = Math.min(s.dV, SHOWN_DIMS);
  const weightOf = (j) => (s.masked(j) ? 0 : s.weights[j]);
  const listed = [...s.tokens.keys()]
    .sort((a, b) => weightOf(b) - weightOf(a) || a - b)
    .slice(0, SHOWN_ROWS)
    .sort((a, b) => a - b);
  const rows = valueRows(s, listed, weightOf, shown);
  if (n > listed.length) {
    const rest = s.weights.reduce((sum, w, j) => (listed.includes(j) ? sum : sum + weightOf(j)), 0);
    rows.push(
      el(
        'tr',
        { 'data-testid': 'v-rest' },
        el('th', { scope: 'row', text: `${n - listed.length} other rows` }),
        el('td', { class: 'weight', text: `× ${format(rest)} in all` }),
      ),
    );
  }
  rows.push(
    el(
      'tr',
      { class: 'output', 'data-testid': 'v-output' },
      el('th', { scope: 'row', text: 'output = Σ wⱼ·vⱼ' }),
      el('td', { class: 'weight', text: '' }),
      ...numberCells(s.output, shown),
    ),
  );
  return el(
    'div',
    { class: 'v-block' },
    el(
      'p',
      { class: 'caption' },
      `The rows that make the output: each value vⱼ times its weight, summed. Rows are shaded by their weight; the strongest is outlined${n > SHOWN_ROWS ? `; the ${SHOWN_ROWS} heaviest are listed` : ''}.`,
    ),
    el(
      'div',
      { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'value rows by weight' },
      el(
        'table',
        { class: 'numbers weighted-values', 'data-testid': 'v-table' },
        el('thead', {}, dimHeader(['value row', 'weight'], shown, s.dV)),
        el('tbody', {}, ...rows),
      ),
    ),
  );
}

/** The listed keys' value rows, each shaded by its share of the largest unmasked weight. */
function valueRows(s, listed, weightOf, shown) {
  let max = 0;
  for (let j = 0; j < s.tokens.length; j++) if (!s.masked(j)) max = Math.max(max, s.weights[j]);
  const strongest = strongestKey(s.weights, s.masked);
  return listed.map((j) => {
    const w = weightOf(j);
    const share = max > 0 ? w / max : 0;
    return el(
      'tr',
      {
        'data-testid': 'v-row',
        'data-key': String(j),
        'data-weight': String(w),
        class: `${j === strongest ? 'strongest ' : ''}${s.masked(j) ? 'masked' : ''}`.trim(),
        style: `--share: ${share.toFixed(3)}; --k: ${j}`,
      },
      el('th', { scope: 'row', text: `v (“${s.tokens[j]}”)` }),
      el('td', { class: 'weight', text: `× ${format(w)}` }),
      ...numberCells(s.V.subarray(j * s.dV, (j + 1) * s.dV), shown),
    );
  });
}
