// createHeatmap: one attention map [T, S] on a canvas, readable from 2 to 2,048 tokens a side.
// Zoom and pan (wheel with Ctrl or a pinch, drag, the buttons, + / − / 0 keys), labels thinned
// so they never overlap, a hover or keyboard cursor whose cell is read out as page text (an
// aria-live region), and incremental drawing: a query row appended colours only that row.
import {
  checkBoolean,
  checkElement,
  checkFloat32,
  checkFunction,
  checkIndex,
  checkNumberFrom,
  checkKnown,
  checkOptions,
  checkString,
  checkTokens,
  describe,
} from './checks.mjs';
import { createTracker, el, formatWeight, onWidthChange, tokenText, readoutLine, sizeCanvas } from './dom.mjs';
import { FONT_FAMILY, paint } from './heatmap-draw.mjs';
import { FONT_PX, MAX_LABEL_PX, cellAt, computeLayout, panForZoom, panToShow } from './heatmap-layout.mjs';
import { attachHeatmapInput } from './heatmap-input.mjs';
import { legend } from './legend.mjs';
import { createMapImage, isMasked } from './map-image.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';

const VIEW = 'createHeatmap';
const KNOWN = [
  'weights',
  'queryTokens',
  'keyTokens',
  'causal',
  'title',
  'highlightRow',
  'onHover',
  'onSelect',
  'onCursor',
  'height',
  'cursor',
  'numberFrom',
  'legend',
  'controls',
];
const ZOOM_STEP = 1.5;

function validate(o, element) {
  checkTokens(VIEW, 'queryTokens', o.queryTokens);
  checkTokens(VIEW, 'keyTokens', o.keyTokens);
  checkFloat32(VIEW, 'weights', o.weights, o.queryTokens.length * o.keyTokens.length);
  checkBoolean(VIEW, 'causal', o.causal);
  checkBoolean(VIEW, 'legend', o.legend);
  checkBoolean(VIEW, 'controls', o.controls);
  checkString(VIEW, 'title', o.title);
  checkIndex(VIEW, 'highlightRow', o.highlightRow, -1, Number.MAX_SAFE_INTEGER);
  checkFunction(VIEW, 'onHover', o.onHover);
  checkFunction(VIEW, 'onSelect', o.onSelect);
  checkFunction(VIEW, 'onCursor', o.onCursor);
  checkNumberFrom(VIEW, o.numberFrom);
  if (o.cursor != null) {
    if (typeof o.cursor !== 'object')
      throw new TypeError(`${VIEW}: cursor must be { query, key } or null, got ${describe(o.cursor)}`);
    checkIndex(VIEW, 'cursor.query', o.cursor.query, 0, o.queryTokens.length - 1);
    checkIndex(VIEW, 'cursor.key', o.cursor.key, 0, o.keyTokens.length - 1);
  }
  if (o.height !== undefined && !(typeof o.height === 'number' && o.height >= 40 && Number.isFinite(o.height)))
    throw new RangeError(`${VIEW}: height must be a number of CSS pixels ≥ 40, got ${describe(o.height)}`);
  void element;
}

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

/**
 * @param {HTMLElement} element
 * @param {{ weights: Float32Array, queryTokens: string[], keyTokens?: string[], causal?: boolean, title?: string,
 *   highlightRow?: number, onHover?: Function, onSelect?: Function, onCursor?: Function, height?: number, legend?: boolean,
 *   controls?: boolean }} options
 */
export function createHeatmap(element, options) {
  checkElement(VIEW, element);
  checkOptions(VIEW, options);
  checkKnown(VIEW, options, KNOWN);
  let o = { causal: false, highlightRow: -1, ...options, keyTokens: options.keyTokens ?? options.queryTokens };
  validate(o, element);
  const initialCursor = o.cursor ? { i: o.cursor.query, j: o.cursor.key } : null;
  delete o.cursor;
  ensureStyles(element.ownerDocument);

  const tracker = createTracker();
  const image = createMapImage();
  const measure = labelMeasurer();
  const title = el('span', { class: 'wa-viz-title' });
  const zoomOut = el('button', { type: 'button', 'aria-label': 'Zoom out', text: '−' });
  const zoomIn = el('button', { type: 'button', 'aria-label': 'Zoom in', text: '+' });
  const zoomFit = el('button', { type: 'button', 'aria-label': 'Zoom to fit the whole map', text: 'Fit' });
  const scale = legend();
  const canvas = el('canvas', { tabindex: '0', role: 'img', 'data-testid': 'viz-heatmap-canvas' });
  const readout = readoutLine();
  const root = tracker.root(
    el(
      'div',
      { class: 'wa-viz wa-viz-heatmap', 'data-testid': 'viz-heatmap' },
      el('div', { class: 'wa-viz-bar' }, title, scale, zoomOut, zoomIn, zoomFit),
      el('div', { class: 'wa-viz-stage' }, canvas),
      readout,
    ),
  );
  element.append(root);
  const ctx = canvas.getContext('2d');

  let rowLabels = [];
  let colLabels = [];
  let widths = { row: 0, col: 0 };
  let zoom = 1;
  let pan = { row: 0, col: 0 };
  let hover = null;
  let cursor = initialCursor; // shown while the canvas has focus (or the page sets it)
  let lastCell = initialCursor ?? { i: 0, j: 0 };
  let layout = null;

  function setData() {
    const T = o.queryTokens.length;
    const S = o.keyTokens.length;
    image.setData(o.weights, T, S, o.causal);
    rowLabels = o.queryTokens.map(tokenText);
    colLabels = o.keyTokens.map(tokenText);
    widths = { row: measure(rowLabels), col: measure(colLabels) };
    if (lastCell.i >= T || lastCell.j >= S)
      lastCell = { i: Math.min(lastCell.i, T - 1), j: Math.min(lastCell.j, S - 1) };
    if (hover && (hover.i >= T || hover.j >= S)) hover = null;
    if (cursor) cursor = { ...lastCell };
    title.textContent = o.title ?? '';
    // Hidden, not removed: update() can bring them back. The keys and the wheel still zoom.
    scale.hidden = o.legend === false;
    for (const button of [zoomOut, zoomIn, zoomFit]) button.hidden = o.controls === false;
    canvas.setAttribute(
      'aria-label',
      `${o.title ? `${o.title}: ` : ''}attention weights of ${T} query × ${S} key tokens${o.causal ? ', causal' : ''}. ` +
        'Arrow keys, Home, End, Page Up and Page Down move a cursor whose cell is read out below; + and − zoom, 0 fits.',
    );
  }

  function draw() {
    const dpr = window.devicePixelRatio || 1;
    const room = element.clientWidth || root.clientWidth || 600;
    const height = o.height ?? Math.max(160, Math.min(room, Math.round((window.innerHeight || 800) * 0.7)));
    layout = computeLayout({
      T: o.queryTokens.length,
      S: o.keyTokens.length,
      width: room,
      height,
      rowLabelWidth: widths.row + 8,
      colLabelWidest: widths.col,
      zoom,
      pan,
    });
    zoom = layout.zoom;
    pan = layout.pan;
    sizeCanvas(canvas, ctx, layout.width, layout.height, dpr);
    const drawn = paint(ctx, layout, {
      image,
      causal: o.causal,
      rowLabels,
      colLabels,
      hover,
      cursor,
      highlightRow: o.highlightRow,
      dpr,
    });
    zoomOut.disabled = layout.zoom <= 1;
    zoomFit.disabled = layout.zoom <= 1;
    zoomIn.disabled = layout.zoom >= layout.maxZoom;
    // For tests and tools: the drawn geometry (cell (i, j)'s centre is x0 + (j + ½)·cellWidth, …).
    canvas.dataset.layout = JSON.stringify({
      x0: layout.x0,
      y0: layout.y0,
      cellWidth: layout.cell,
      cellHeight: layout.cell,
      rows: layout.T,
      cols: layout.S,
      grid: { x: layout.gx, y: layout.gy, width: layout.gw, height: layout.gh },
      zoom: layout.zoom,
      pan: layout.pan,
      highlightRow: o.highlightRow >= 0 && o.highlightRow < layout.T ? o.highlightRow : -1,
      rowLabelStep: layout.rowStep,
      colLabelStep: layout.colStep,
      rowLabelsDrawn: drawn.rowLabels,
      colLabelsDrawn: drawn.colLabels,
      level: drawn.level,
    });
  }

  function describeCell({ i, j }) {
    const base = o.numberFrom ?? 0;
    const q = `query “${rowLabels[i]}” (#${i + base})`;
    const k = `key “${colLabels[j]}” (#${j + base})`;
    if (isMasked(o.causal, i, j, o.queryTokens.length, o.keyTokens.length))
      return `${q} → ${k}: masked (a later token)`;
    return `${q} → ${k}: weight ${formatWeight(o.weights[i * o.keyTokens.length + j])}`;
  }

  function show(cell, source) {
    if (cell) readout.textContent = describeCell(cell);
    if (o.onHover && source === 'pointer') o.onHover(cell ? { query: cell.i, key: cell.j } : null);
  }

  function setZoom(next, x, y) {
    if (!layout) return;
    const z = Math.min(Math.max(1, next), layout.maxZoom);
    const cx = x ?? layout.gx + layout.gw / 2;
    const cy = y ?? layout.gy + layout.gh / 2;
    pan = panForZoom(layout, z, cx, cy);
    zoom = z;
    canvas.style.touchAction = zoom > 1 ? 'none' : 'pan-x pan-y';
    draw();
  }

  attachHeatmapInput(tracker, canvas, {
    layout: () => layout,
    cellAt: (x, y) => (layout ? cellAt(layout, x, y) : null),
    hover(cell) {
      hover = cell;
      if (cell) lastCell = cell;
      show(cell ?? cursor, 'pointer');
      draw();
    },
    move(toCell) {
      const T = o.queryTokens.length;
      const S = o.keyTokens.length;
      const next = toCell(cursor ?? lastCell, { T, S, pageRows: Math.max(1, Math.floor(layout.gh / layout.cell)) });
      cursor = { i: Math.min(T - 1, Math.max(0, next.i)), j: Math.min(S - 1, Math.max(0, next.j)) };
      lastCell = cursor;
      pan = panToShow(layout, cursor.i, cursor.j);
      show(cursor, 'keyboard');
      draw();
      // Every key that moves the cursor (Page Up/Down need the layout's rows) reports it, so a page
      // keeping its own copy of the cell never has to repeat the key handling.
      if (o.onCursor) o.onCursor({ query: cursor.i, key: cursor.j });
    },
    focus(on) {
      cursor = on ? { ...lastCell } : null;
      if (on) show(cursor, 'keyboard');
      draw();
    },
    select(cell) {
      if (o.onSelect && cell) o.onSelect({ query: cell.i, key: cell.j });
    },
    selectCursor() {
      if (o.onSelect && cursor) o.onSelect({ query: cursor.i, key: cursor.j });
    },
    zoomBy(factor, x, y) {
      setZoom(zoom * factor, x, y);
    },
    zoomFit() {
      setZoom(1);
    },
    panBy(dx, dy) {
      if (!layout) return;
      pan = { col: pan.col + dx / layout.cell, row: pan.row + dy / layout.cell };
      draw();
    },
  });
  tracker.on(zoomIn, 'click', () => setZoom(zoom * ZOOM_STEP));
  tracker.on(zoomOut, 'click', () => setZoom(zoom / ZOOM_STEP));
  tracker.on(zoomFit, 'click', () => setZoom(1));
  onWidthChange(tracker, element, draw);
  canvas.style.touchAction = 'pan-x pan-y';

  setData();
  draw();

  return viewHandle(VIEW, KNOWN, {
    apply(data) {
      const next = { ...o, ...data };
      if ('queryTokens' in data && !('keyTokens' in data) && o.keyTokens === o.queryTokens)
        next.keyTokens = data.queryTokens;
      validate(next, element);
      o = next;
      if ('cursor' in data) {
        // The page moves the keyboard cursor itself (e.g. to a row it picked): show it there.
        cursor = data.cursor ? { i: data.cursor.query, j: data.cursor.key } : null;
        if (cursor) lastCell = cursor;
      }
      delete o.cursor;
      setData();
      if (cursor && 'cursor' in data) {
        pan = layout ? panToShow(layout, cursor.i, cursor.j) : pan;
        show(cursor, 'keyboard');
      }
      draw();
    },
    teardown() {
      tracker.undo();
      image.dispose();
    },
  });
}
