// The Heatmap class behind createHeatmap: its elements, its state (labels, zoom, pan, hover, the
// keyboard cursor, the last layout), and the named steps that change them and draw the map again.
import { createTracker, el, formatWeight, onWidthChange, tokenText, readoutLine, sizeCanvas } from './dom.mjs';
import { FONT_FAMILY, paint } from './heatmap-draw.mjs';
import { FONT_PX, MAX_LABEL_PX, cellAt, computeLayout, panForZoom, panToShow } from './heatmap-layout.mjs';
import { attachHeatmapInput } from './heatmap-input.mjs';
import { validate } from './heatmap-options.mjs';
import { legend } from './legend.mjs';
import { createMapImage, isMasked } from './map-image.mjs';

const ZOOM_STEP = 1.5;

/** Widest label of a list, measured once per distinct token. */
function labelMeasurer() {
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${FONT_PX}px ${FONT_FAMILY}`;
  const widths = new Map();
  return (labels) => {
    let widest = 0;
    for (const t of labels) {
      let w = widths.get(t);
      if (w === undefined) {
        w = ctx.measureText(t).width;
        widths.set(t, w);
      }
      if (w > widest) widest = w;
    }
    return Math.min(MAX_LABEL_PX, widest);
  };
}

// For tests and tools: the drawn geometry (cell (i, j)'s centre is x0 + (j + ½)·cellWidth, …).
function layoutRecord(layout, drawn, highlightRow) {
  return {
    x0: layout.x0,
    y0: layout.y0,
    cellWidth: layout.cell,
    cellHeight: layout.cell,
    rows: layout.T,
    cols: layout.S,
    grid: { x: layout.gx, y: layout.gy, width: layout.gw, height: layout.gh },
    zoom: layout.zoom,
    pan: layout.pan,
    highlightRow: highlightRow >= 0 && highlightRow < layout.T ? highlightRow : -1,
    rowLabelStep: layout.rowStep,
    colLabelStep: layout.colStep,
    rowLabelsDrawn: drawn.rowLabels,
    colLabelsDrawn: drawn.colLabels,
    level: drawn.level,
  };
}

export class Heatmap {
  /** `o`: checked options without `cursor`; `cursor`: the first keyboard cell { i, j } or null. */
  constructor(element, o, cursor) {
    this.element = element;
    this.o = o;
    this.tracker = createTracker();
    this.image = createMapImage();
    this.measure = labelMeasurer();
    this.buildElements();
    this.rowLabels = [];
    this.colLabels = [];
    this.widths = { row: 0, col: 0 };
    this.zoom = 1;
    this.pan = { row: 0, col: 0 };
    this.hover = null;
    this.cursor = cursor; // shown while the canvas has focus (or the page sets it)
    this.lastCell = cursor ?? { i: 0, j: 0 };
    this.layout = null;
    this.listen();
    this.setData();
    this.draw();
  }

  buildElements() {
    this.title = el('span', { class: 'wa-viz-title' });
    this.zoomOut = el('button', { type: 'button', 'aria-label': 'Zoom out', text: '−' });
    this.zoomIn = el('button', { type: 'button', 'aria-label': 'Zoom in', text: '+' });
    this.zoomFit = el('button', { type: 'button', 'aria-label': 'Zoom to fit the whole map', text: 'Fit' });
    this.scale = legend();
    this.canvas = el('canvas', { tabindex: '0', role: 'img', 'data-testid': 'viz-heatmap-canvas' });
    this.readout = readoutLine();
    this.root = this.tracker.root(
      el(
        'div',
        { class: 'wa-viz wa-viz-heatmap', 'data-testid': 'viz-heatmap' },
        el('div', { class: 'wa-viz-bar' }, this.title, this.scale, this.zoomOut, this.zoomIn, this.zoomFit),
        el('div', { class: 'wa-viz-stage' }, this.canvas),
        this.readout,
      ),
    );
    this.element.append(this.root);
    this.ctx = this.canvas.getContext('2d');
  }

  listen() {
    const { tracker, canvas } = this;
    attachHeatmapInput(tracker, canvas, {
      layout: () => this.layout,
      cellAt: (x, y) => (this.layout ? cellAt(this.layout, x, y) : null),
      hover: (cell) => this.hoverOn(cell),
      move: (toCell) => this.moveCursor(toCell),
      focus: (on) => this.focusChanged(on),
      select: (cell) => this.select(cell),
      selectCursor: () => this.select(this.cursor),
      zoomBy: (factor, x, y) => this.setZoom(this.zoom * factor, x, y),
      zoomFit: () => this.setZoom(1),
      panBy: (dx, dy) => this.panBy(dx, dy),
    });
    tracker.on(this.zoomIn, 'click', () => this.setZoom(this.zoom * ZOOM_STEP));
    tracker.on(this.zoomOut, 'click', () => this.setZoom(this.zoom / ZOOM_STEP));
    tracker.on(this.zoomFit, 'click', () => this.setZoom(1));
    onWidthChange(tracker, this.element, () => this.draw());
    canvas.style.touchAction = 'pan-x pan-y';
  }

  setData() {
    const { o, canvas } = this;
    const T = o.queryTokens.length;
    const S = o.keyTokens.length;
    this.image.setData(o.weights, T, S, o.causal);
    this.rowLabels = o.queryTokens.map(tokenText);
    this.colLabels = o.keyTokens.map(tokenText);
    this.widths = { row: this.measure(this.rowLabels), col: this.measure(this.colLabels) };
    const last = this.lastCell;
    if (last.i >= T || last.j >= S) this.lastCell = { i: Math.min(last.i, T - 1), j: Math.min(last.j, S - 1) };
    if (this.hover && (this.hover.i >= T || this.hover.j >= S)) this.hover = null;
    if (this.cursor) this.cursor = { ...this.lastCell };
    this.title.textContent = o.title ?? '';
    // Hidden, not removed: update() can bring them back. The keys and the wheel still zoom.
    this.scale.hidden = o.legend === false;
    for (const button of [this.zoomOut, this.zoomIn, this.zoomFit]) button.hidden = o.controls === false;
    canvas.setAttribute(
      'aria-label',
      `${o.title ? `${o.title}: ` : ''}attention weights of ${T} query × ${S} key tokens${o.causal ? ', causal' : ''}. ` +
        'Arrow keys, Home, End, Page Up and Page Down move a cursor whose cell is read out below; + and − zoom, 0 fits.',
    );
  }

  draw() {
    const { o, canvas } = this;
    const dpr = window.devicePixelRatio || 1;
    const room = this.element.clientWidth || this.root.clientWidth || 600;
    const height = o.height ?? Math.max(160, Math.min(room, Math.round((window.innerHeight || 800) * 0.7)));
    const layout = computeLayout({
      T: o.queryTokens.length,
      S: o.keyTokens.length,
      width: room,
      height,
      rowLabelWidth: this.widths.row + 8,
      colLabelWidest: this.widths.col,
      zoom: this.zoom,
      pan: this.pan,
    });
    this.layout = layout;
    this.zoom = layout.zoom;
    this.pan = layout.pan;
    sizeCanvas(canvas, this.ctx, layout.width, layout.height, dpr);
    const drawn = paint(this.ctx, layout, {
      image: this.image,
      causal: o.causal,
      rowLabels: this.rowLabels,
      colLabels: this.colLabels,
      hover: this.hover,
      cursor: this.cursor,
      highlightRow: o.highlightRow,
      dpr,
    });
    this.zoomOut.disabled = layout.zoom <= 1;
    this.zoomFit.disabled = layout.zoom <= 1;
    this.zoomIn.disabled = layout.zoom >= layout.maxZoom;
    canvas.dataset.layout = JSON.stringify(layoutRecord(layout, drawn, o.highlightRow));
  }

  describeCell({ i, j }) {
    const { o } = this;
    const base = o.numberFrom ?? 0;
    const q = `query “${this.rowLabels[i]}” (#${i + base})`;
    const k = `key “${this.colLabels[j]}” (#${j + base})`;
    if (isMasked(o.causal, i, j, o.queryTokens.length, o.keyTokens.length))
      return `${q} → ${k}: masked (a later token)`;
    return `${q} → ${k}: weight ${formatWeight(o.weights[i * o.keyTokens.length + j])}`;
  }

  show(cell, source) {
    if (cell) this.readout.textContent = this.describeCell(cell);
    if (this.o.onHover && source === 'pointer') this.o.onHover(cell ? { query: cell.i, key: cell.j } : null);
  }

  setZoom(next, x, y) {
    const { layout } = this;
    if (!layout) return;
    const z = Math.min(Math.max(1, next), layout.maxZoom);
    const cx = x ?? layout.gx + layout.gw / 2;
    const cy = y ?? layout.gy + layout.gh / 2;
    this.pan = panForZoom(layout, z, cx, cy);
    this.zoom = z;
    this.canvas.style.touchAction = this.zoom > 1 ? 'none' : 'pan-x pan-y';
    this.draw();
  }

  panBy(dx, dy) {
    const { layout, pan } = this;
    if (!layout) return;
    this.pan = { col: pan.col + dx / layout.cell, row: pan.row + dy / layout.cell };
    this.draw();
  }

  hoverOn(cell) {
    this.hover = cell;
    if (cell) this.lastCell = cell;
    this.show(cell ?? this.cursor, 'pointer');
    this.draw();
  }

  moveCursor(toCell) {
    const { o, layout } = this;
    const T = o.queryTokens.length;
    const S = o.keyTokens.length;
    const pageRows = Math.max(1, Math.floor(layout.gh / layout.cell));
    const next = toCell(this.cursor ?? this.lastCell, { T, S, pageRows });
    const cursor = { i: Math.min(T - 1, Math.max(0, next.i)), j: Math.min(S - 1, Math.max(0, next.j)) };
    this.cursor = cursor;
    this.lastCell = cursor;
    this.pan = panToShow(layout, cursor.i, cursor.j);
    this.show(cursor, 'keyboard');
    this.draw();
    // Every key that moves the cursor (Page Up/Down need the layout's rows) reports it, so a page
    // keeping its own copy of the cell never has to repeat the key handling.
    if (this.o.onCursor) this.o.onCursor({ query: cursor.i, key: cursor.j });
  }

  focusChanged(on) {
    this.cursor = on ? { ...this.lastCell } : null;
    if (on) this.show(this.cursor, 'keyboard');
    this.draw();
  }

  select(cell) {
    if (this.o.onSelect && cell) this.o.onSelect({ query: cell.i, key: cell.j });
  }

  /** update(data), its options already known: checked as a whole, then shown. */
  apply(data) {
    const { o } = this;
    const next = { ...o, ...data };
    if ('queryTokens' in data && !('keyTokens' in data) && o.keyTokens === o.queryTokens)
      next.keyTokens = data.queryTokens;
    validate(next);
    this.o = next;
    if ('cursor' in data) {
      // The page moves the keyboard cursor itself (e.g. to a row it picked): show it there.
      this.cursor = data.cursor ? { i: data.cursor.query, j: data.cursor.key } : null;
      if (this.cursor) this.lastCell = this.cursor;
    }
    delete next.cursor;
    this.setData();
    if (this.cursor && 'cursor' in data) {
      this.pan = this.layout ? panToShow(this.layout, this.cursor.i, this.cursor.j) : this.pan;
      this.show(this.cursor, 'keyboard');
    }
    this.draw();
  }

  dispose() {
    this.tracker.undo();
    this.image.dispose();
  }
}
