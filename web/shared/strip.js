// A strip of signed values (the four steps' q, K, V and output) as coloured cells on a <canvas>,
// one row per vector with its label on the left, and an optional keyboard cursor. Not attention
// weights (those are wasm-attention/viz's heatmaps): any numbers and a colour for each.
import { FONT_FAMILY, prepareCanvas } from './canvas.js';

const MAX_LABEL_PX = 90;
const MIN_FONT_PX = 9;

function fitText(ctx, text, maxWidth) {
  if (ctx.measureText(text).width <= maxWidth) return text;
  const chars = Array.from(text);
  while (chars.length > 1 && ctx.measureText(`${chars.join('')}…`).width > maxWidth) chars.pop();
  return `${chars.join('')}…`;
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ values: ArrayLike<number>, rows: number, cols: number, rowLabels?: string[],
 *   colour: (v: number) => number[], cellWidth: number, cellHeight: number, cursor?: { i: number, j: number } }} o
 * @returns {{ x0: number, y0: number, cellWidth: number, cellHeight: number, rows: number, cols: number }}
 *   also in canvas.dataset.layout (cell (i, j)'s centre is x0 + (j + ½)·cellWidth, y0 + (i + ½)·cellHeight)
 */
export function drawStrip(canvas, o) {
  const { values, rows, cols, cellWidth, cellHeight } = o;
  const labels = o.rowLabels ?? [];
  const fontPx = Math.max(MIN_FONT_PX, Math.min(15, cellHeight - 2));
  const font = `${fontPx}px ${FONT_FAMILY}`;
  const measure = prepareCanvas(canvas, 1, 1);
  measure.font = font;
  const widest = Math.min(MAX_LABEL_PX, Math.max(0, ...labels.map((l) => measure.measureText(String(l)).width)));
  const x0 = labels.length ? Math.ceil(widest + 8) : 0;
  const y0 = 0;
  const ctx = prepareCanvas(canvas, x0 + cols * cellWidth + 1, rows * cellHeight + 1);

  // One pixel per value, scaled up without smoothing: one draw call for 64 × 512 values.
  const pixels = new ImageData(cols, rows);
  for (let k = 0; k < rows * cols; k++) {
    const [r, g, b] = o.colour(values[k]);
    pixels.data.set([r, g, b, 255], 4 * k);
  }
  const cells = document.createElement('canvas');
  cells.width = cols;
  cells.height = rows;
  cells.getContext('2d').putImageData(pixels, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, x0, y0, cols * cellWidth, rows * cellHeight);

  // Labels keep a readable size: past one per row, every step-th is drawn.
  const labelStep = Math.ceil((fontPx + 2) / cellHeight);
  ctx.font = font;
  ctx.fillStyle = '#222';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  labels.forEach((label, i) => {
    if (i % labelStep === 0)
      ctx.fillText(fitText(ctx, String(label), MAX_LABEL_PX), x0 - 5, y0 + (i + 0.5) * cellHeight);
  });

  const c = o.cursor;
  if (c && c.i >= 0 && c.i < rows && c.j >= 0 && c.j < cols) {
    // A white square inside a dark one: visible on every colour.
    const x = x0 + c.j * cellWidth;
    const y = y0 + c.i * cellHeight;
    ctx.lineWidth = 2;
    ctx.strokeStyle = '#111';
    ctx.strokeRect(x + 1, y + 1, Math.max(2, cellWidth - 2), Math.max(2, cellHeight - 2));
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 2.5, y + 2.5, Math.max(1, cellWidth - 5), Math.max(1, cellHeight - 5));
  }
  const layout = { x0, y0, cellWidth, cellHeight, rows, cols, rowLabelStep: labels.length ? labelStep : 0 };
  canvas.dataset.layout = JSON.stringify(layout);
  return layout;
}

/** The cell under a CSS-pixel point of the strip, or null. */
export function stripCellAt(layout, x, y) {
  const i = Math.floor((y - layout.y0) / layout.cellHeight);
  const j = Math.floor((x - layout.x0) / layout.cellWidth);
  if (i < 0 || i >= layout.rows || j < 0 || j >= layout.cols || x < layout.x0) return null;
  return { i, j };
}
