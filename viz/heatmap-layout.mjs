// Where everything of a heatmap goes: the grid viewport, the cell size at a zoom, the visible
// cells at a pan, and which labels fit. Pure arithmetic, no DOM.

export const FONT_PX = 11;
export const MAX_LABEL_PX = 84;
export const MARKER_PX = 10; // room right of and below the grid for the hovered row's and column's markers
const MAX_CELL_PX = 32;
const MAX_ZOOMED_CELL_PX = 48;
const NICE = [1, 2, 5];

/** The smallest of 1, 2, 5, 10, 20, 50, … that is ≥ x: label steps that read as regular. */
export function niceStep(x) {
  if (x <= 1) return 1;
  for (let p = 1; ; p *= 10) for (const n of NICE) if (n * p >= x) return n * p;
}

/**
 * @param {object} o
 * @param {number} o.T  query rows
 * @param {number} o.S  key columns
 * @param {number} o.width  room for the canvas (CSS px)
 * @param {number} o.height  room for the grid's height at zoom 1 (CSS px)
 * @param {number} o.rowLabelWidth
 * @param {number} o.colLabelWidest  widest key label (CSS px)
 * @param {number} o.zoom  ≥ 1
 * @param {{ row: number, col: number }} o.pan  top-left visible cell (fractional)
 */
export function computeLayout(o) {
  const { T, S } = o;
  const rowLabelWidth = Math.ceil(o.rowLabelWidth);
  const roomW = Math.max(40, o.width - rowLabelWidth - MARKER_PX - 2);
  const fitCell = Math.min(MAX_CELL_PX, roomW / S, Math.max(40, o.height) / T);
  const maxZoom = Math.max(1, MAX_ZOOMED_CELL_PX / fitCell);
  const zoom = Math.min(Math.max(1, o.zoom), maxZoom);
  const cell = fitCell * zoom;
  const horizontal = o.colLabelWidest <= cell - 2;
  const colLabelHeight = horizontal ? FONT_PX + 6 : Math.min(MAX_LABEL_PX, o.colLabelWidest) + 6;
  const gw = S * fitCell;
  const gh = T * fitCell;
  const visibleCols = gw / cell;
  const visibleRows = gh / cell;
  const col = Math.min(Math.max(0, o.pan.col), S - visibleCols);
  const row = Math.min(Math.max(0, o.pan.row), T - visibleRows);
  const gx = rowLabelWidth;
  const gy = Math.ceil(colLabelHeight);
  return {
    T,
    S,
    zoom,
    maxZoom,
    cell,
    gx,
    gy,
    gw,
    gh,
    // Where cell (0, 0) is, in canvas CSS px (left of / above the viewport when panned).
    x0: gx - col * cell,
    y0: gy - row * cell,
    pan: { row, col },
    width: Math.ceil(gx + gw + MARKER_PX),
    height: Math.ceil(gy + gh + MARKER_PX),
    horizontal,
    rowStep: niceStep((FONT_PX + 2) / cell),
    colStep: horizontal ? 1 : niceStep((FONT_PX + 2) / cell),
    firstRow: Math.floor(row),
    lastRow: Math.min(T - 1, Math.ceil(row + visibleRows) - 1),
    firstCol: Math.floor(col),
    lastCol: Math.min(S - 1, Math.ceil(col + visibleCols) - 1),
  };
}

/** The cell under a canvas CSS-pixel point, or null outside the grid viewport. */
export function cellAt(layout, x, y) {
  const { gx, gy, gw, gh } = layout;
  if (x < gx || y < gy || x >= gx + gw || y >= gy + gh) return null;
  const i = Math.floor((y - layout.y0) / layout.cell);
  const j = Math.floor((x - layout.x0) / layout.cell);
  if (i < 0 || j < 0 || i >= layout.T || j >= layout.S) return null;
  return { i, j };
}

/** The pan that keeps cell (i, j) inside the viewport, moving as little as possible. */
export function panToShow(layout, i, j) {
  const rows = layout.gh / layout.cell;
  const cols = layout.gw / layout.cell;
  let { row, col } = layout.pan;
  if (i < row) row = i;
  else if (i + 1 > row + rows) row = i + 1 - rows;
  if (j < col) col = j;
  else if (j + 1 > col + cols) col = j + 1 - cols;
  return { row, col };
}

/** The pan after zooming from layout's zoom to `zoom` about canvas point (x, y) (the point stays put). */
export function panForZoom(layout, zoom, x, y) {
  const fit = layout.cell / layout.zoom;
  const cellAfter = fit * zoom;
  const atCol = (x - layout.x0) / layout.cell;
  const atRow = (y - layout.y0) / layout.cell;
  return { col: atCol - (x - layout.gx) / cellAfter, row: atRow - (y - layout.gy) / cellAfter };
}
