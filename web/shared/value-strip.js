// A matrix of signed values (rows × cols, e.g. the steps' q, K, V and output) as a focusable strip
// of coloured cells with a readout of the value under the pointer or under the keyboard cursor
// (arrow keys move, Home/End jump along the row). The drawing itself is strip.js's.
import { diverging } from './colormap.js';
import { drawStrip, stripCellAt } from './strip.js';
import { el } from './dom.js';
import { formatNumber } from './number-format.js';
import { moveCell } from './cursor-moves.js';

function absMax(values) {
  let m = 0;
  for (const v of values) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m || 1;
}

/** The strip and its readout in a box: { values, rows, cols, rowLabels, testId, name, width }. */
export function valueStrip(o) {
  return new ValueStrip(o).box;
}

class ValueStrip {
  constructor({ values, rows, cols, rowLabels, testId, name, width }) {
    Object.assign(this, { values, rows, cols, rowLabels, name });
    this.canvas = el('canvas', { class: 'strip', 'data-testid': testId, tabindex: '0' });
    this.readout = el('output', { class: 'readout', 'data-testid': `${testId}-readout`, 'aria-live': 'polite' });
    this.cursor = { i: 0, j: 0 };
    const m = absMax(values);
    // A short vector (the readable sizes) gets cells big enough to see each value's colour.
    const cellWidth = Math.max(0.25, Math.min(cols <= 32 ? 24 : 12, (width - 50) / cols));
    const cellHeight = rows === 1 ? 18 : Math.max(3, Math.min(rows <= 16 ? 16 : 12, Math.floor(220 / rows)));
    this.opts = { values, rows, cols, rowLabels, colour: (v) => diverging(v / m), cellWidth, cellHeight };
    this.layout = drawStrip(this.canvas, this.opts);
    const range = `colour range ±${m.toPrecision(3)} (blue negative, red positive)`;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute(
      'aria-label',
      `${name}: ${rows} × ${cols} values, ${range}. Focus and use the arrow keys to read values.`,
    );
    this.listen();
    this.readout.textContent = `${name}: point at or focus the strip to read a value (${range}).`;
    this.box = el('div', { class: 'strip-box' }, this.canvas, this.readout);
  }

  listen() {
    const canvas = this.canvas;
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      const hit = stripCellAt(this.layout, e.clientX - r.left, e.clientY - r.top);
      if (hit) this.show(hit.i, hit.j);
    });
    canvas.addEventListener('focus', () => this.showCursor());
    canvas.addEventListener('blur', () => drawStrip(canvas, this.opts));
    canvas.addEventListener('keydown', (e) => this.moveCursor(e));
  }

  moveCursor(e) {
    const moved = moveCell(this.cursor, e.key, this.rows, this.cols);
    if (!moved) return;
    e.preventDefault();
    this.cursor = moved;
    this.showCursor();
  }

  showCursor() {
    drawStrip(this.canvas, { ...this.opts, cursor: this.cursor });
    this.show(this.cursor.i, this.cursor.j);
  }

  /** Writes value (i, j) in the readout. */
  show(i, j) {
    const { rows, cols, values } = this;
    const row = rows === 1 ? '' : ` · row ${i + 1} “${this.rowLabels[i]}”`;
    this.readout.textContent = `${this.name}${row} · dim ${j + 1} of ${cols}: ${formatNumber(values[i * cols + j], 4)}`;
    this.readout.dataset.value = String(values[i * cols + j]);
  }
}
