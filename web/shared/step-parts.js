// The pieces the steps view of one query is built from: a numbered step section, a labelled
// value strip, the weights' bars, and the numbers table with its rows. Each part is laid out for
// the query's tokens and the width the view has.
import { drawBars } from './bars.js';
import { weightRGB } from '../../viz/index.mjs';
import { el } from './dom.js';
import { formatNumber } from './number-format.js';
import { valueStrip } from './value-strip.js';

/** A row of the numbers table: one cell a key (masked keys' cells marked), data-stage when played. */
export function numberRow(label, values, masked, testId, stage) {
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

export class StepParts {
  /** @param s  the steps' numbers (see renderSteps)  @param width  CSS px the view has */
  constructor(s, width) {
    this.s = s;
    this.queryToken = s.tokens[s.query];
    this.keyLabels = s.tokens.map((t) => `${t}`);
    this.width = width;
    this.stripWidth = width >= 600 ? width - 160 : width;
  }

  /** Step num (0: unnumbered) with its title, caption and body; step 3 is played with stage 2. */
  section(num, title, caption, ...body) {
    return el(
      'section',
      { class: 'step', 'data-step': String(num), ...(num === 3 ? { 'data-stage': '2' } : {}) },
      el('h3', { text: num ? `${num}. ${title}` : title }),
      el('p', { class: 'caption', text: caption }),
      ...body,
    );
  }

  /** A value strip (rows × cols) with its label on the left. */
  stripRow(label, values, rows, cols, rowLabels, testId) {
    return el(
      'div',
      { class: 'strip-row' },
      el('span', { class: 'strip-label', text: label }),
      valueStrip({ values, rows, cols, rowLabels, testId, name: label, width: this.stripWidth }),
    );
  }

  /** The query's weights as bars, on the colour scale of the view they come from. */
  weightBars() {
    const s = this.s;
    const bars = el('canvas', {
      class: 'bars',
      'data-testid': 'step-bars',
      'data-stage': '3',
      role: 'img',
      'aria-label': `weights of query ${this.queryToken} in the ${s.source}`,
    });
    drawBars(bars, {
      values: s.weights,
      labels: this.keyLabels,
      max: s.domain[1],
      colour: weightRGB,
      masked: s.masked,
      maxWidth: this.width,
    });
    return bars;
  }

  /** The numbers table, one column a key, scrolled sideways on its own. */
  table(...rows) {
    const head = el(
      'tr',
      {},
      el('th', { text: 'key →' }),
      ...this.keyLabels.map((t) => el('th', { scope: 'col', text: t })),
    );
    return el(
      'div',
      { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': `numbers of query ${this.queryToken}` },
      el('table', { class: 'numbers', 'data-testid': 'step-table' }, el('thead', {}, head), el('tbody', {}, ...rows)),
    );
  }
}
