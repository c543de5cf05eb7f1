// Draws a matrix as a grid of coloured cells with labels on both axes, on a <canvas>.
// Knows nothing of attention or WebAssembly: it gets numbers, labels and a colour scale.
//
//   const layout = drawHeatmap(canvas, { matrix, rows, cols, rowLabels, colLabels, ... });
//   cellAt(layout, x, y)   // CSS-pixel position inside the canvas → { i, j } (j = -1 on a row label)

export const FONT_FAMILY = 'system-ui, "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", sans-serif';
const MASK_FILL = [217, 217, 217];
const MASK_HATCH = '#9a9a9a';
const MAX_LABEL_PX = 90;
const MIN_FONT_PX = 9;

function fitText(ctx, text, maxWidth) {
  if (ctx.measureText(text).width <= maxWidth) return text;
  const chars = Array.from(text);
  while (chars.length > 1 && ctx.measureText(`${chars.join('')}…`).width > maxWidth) chars.pop();
  return `${chars.join('')}…`;
}

/** Sizes a canvas for the device pixel ratio; returns its 2D context scaled to CSS pixels. */
export function prepareCanvas(canvas, width, height) {
  const dpr = (typeof window !== 'undefined' && window.devicePixelRatio) || 1;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

// One pixel per cell in an ImageData, scaled up without smoothing: a single draw call
// instead of rows × cols fillRects (64 tokens × 512 dimensions is 32k cells).
function paintCells(ctx, o, { x0, y0, cellWidth, cellHeight }) {
  const { matrix, rows, cols, colormap } = o;
  const [lo, hi] = o.domain;
  const span = hi - lo || 1;
  const pixels = new ImageData(cols, rows);
  const data = pixels.data;
  const maskedCells = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const p = 4 * (i * cols + j);
      let rgb;
      if (o.masked && o.masked(i, j)) {
        rgb = MASK_FILL;
        maskedCells.push(i, j);
      } else {
        rgb = colormap((matrix[i * cols + j] - lo) / span);
      }
      data[p] = rgb[0];
      data[p + 1] = rgb[1];
      data[p + 2] = rgb[2];
      data[p + 3] = 255;
    }
  }
  const cells = document.createElement('canvas');
  cells.width = cols;
  cells.height = rows;
  cells.getContext('2d').putImageData(pixels, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, x0, y0, cols * cellWidth, rows * cellHeight);
  ctx.restore();
  if (maskedCells.length) hatchCells(ctx, maskedCells, { x0, y0, cellWidth, cellHeight, rows, cols });
}

// Diagonal hatching over every masked cell: one clip path of their rectangles, one stroke.
function hatchCells(ctx, cells, { x0, y0, cellWidth, cellHeight, rows, cols }) {
  ctx.save();
  ctx.beginPath();
  for (let k = 0; k < cells.length; k += 2) {
    ctx.rect(x0 + cells[k + 1] * cellWidth, y0 + cells[k] * cellHeight, cellWidth, cellHeight);
  }
  ctx.clip();
  ctx.strokeStyle = MASK_HATCH;
  ctx.lineWidth = 1;
  const w = cols * cellWidth;
  const h = rows * cellHeight;
  const step = Math.max(3, Math.min(8, Math.min(cellWidth, cellHeight) / 3));
  ctx.beginPath();
  for (let d = -h; d < w; d += step) {
    ctx.moveTo(x0 + d, y0 + h);
    ctx.lineTo(x0 + d + h, y0);
  }
  ctx.stroke();
  ctx.restore();
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {object} o
 * @param {ArrayLike<number>} o.matrix   row-major, rows × cols
 * @param {number} o.rows
 * @param {number} o.cols
 * @param {string[]} [o.rowLabels]
 * @param {string[]} [o.colLabels]
 * @param {[number, number]} o.domain    values mapped to colormap(0) … colormap(1)
 * @param {(t: number) => number[]} o.colormap   t in [0, 1] → [r, g, b]
 * @param {(i: number, j: number) => boolean} [o.masked]   drawn hatched grey
 * @param {number} [o.maxSize]           largest grid side in CSS px (default 360)
 * @param {number} [o.maxCell]           largest automatic cell side in CSS px (default 40)
 * @param {number} [o.cellWidth]         fixed cell width instead (CSS px)
 * @param {number} [o.cellHeight]        fixed cell height instead (CSS px)
 * @param {number} [o.selectedRow]       outlined row, or -1
 * @param {{ i: number, j: number }} [o.cursor]   the keyboard cursor's cell, outlined
 * @param {number} [o.highlightRow]      a row to bring forward: the others are veiled, it is outlined (-1: none)
 * @param {boolean} [o.labels]           false: no axis labels
 * @returns {{ x0: number, y0: number, cellWidth: number, cellHeight: number, rows: number, cols: number, width: number, height: number }}
 */
export function drawHeatmap(canvas, o) {
  const { matrix, rows, cols, domain, colormap } = o;
  const rowLabels = o.rowLabels ?? [];
  const colLabels = o.colLabels ?? [];
  const maxSize = o.maxSize ?? 360;
  const side = Math.max(rows, cols, 1);
  // Whole pixels while cells can be 3 px or more; below that, fractions (the grid still fits).
  const auto =
    side * 3 <= maxSize ? Math.max(3, Math.min(o.maxCell ?? 40, Math.floor(maxSize / side))) : maxSize / side;
  const cellWidth = o.cellWidth ?? auto;
  const cellHeight = o.cellHeight ?? auto;

  // Labels never shrink below MIN_FONT_PX: when cells are smaller, only every step-th label is
  // drawn (the first, then every step-th), so they stay readable instead of vanishing.
  const fontPx = Math.max(MIN_FONT_PX, Math.min(15, Math.min(cellHeight, cellWidth) - 2));
  const font = `${fontPx}px ${FONT_FAMILY}`;
  const measure = prepareCanvas(canvas, 1, 1);
  measure.font = font;
  const showRowLabels = rowLabels.length > 0 && o.labels !== false;
  const showColLabels = colLabels.length > 0 && o.labels !== false;
  const widest = (labels) =>
    Math.min(MAX_LABEL_PX, Math.max(0, ...labels.map((l) => measure.measureText(String(l)).width)));
  const rowLabelWidth = showRowLabels ? widest(rowLabels) + 8 : 0;
  const colWidest = showColLabels ? widest(colLabels) : 0;
  const rotate = showColLabels && colWidest > cellWidth - 2;
  const rowLabelStep = Math.ceil((fontPx + 2) / cellHeight);
  const colLabelStep = rotate ? Math.ceil(((fontPx + 2) * Math.SQRT2) / cellWidth) : 1;
  const colLabelHeight = !showColLabels ? 0 : rotate ? colWidest * Math.SQRT1_2 + fontPx + 6 : fontPx + 8;

  const x0 = Math.ceil(rowLabelWidth);
  const y0 = Math.ceil(colLabelHeight);
  const width = x0 + cols * cellWidth + (rotate ? fontPx : 1);
  const height = y0 + rows * cellHeight + 1;
  const ctx = prepareCanvas(canvas, width, height);
  ctx.font = font;

  paintCells(ctx, o, { x0, y0, cellWidth, cellHeight });

  ctx.fillStyle = '#222';
  if (showRowLabels) {
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    rowLabels.forEach((label, i) => {
      if (i % rowLabelStep !== 0) return;
      const text = fitText(ctx, String(label), MAX_LABEL_PX);
      ctx.fillStyle = i === o.selectedRow ? '#c0392b' : '#222';
      ctx.fillText(text, x0 - 5, y0 + (i + 0.5) * cellHeight);
    });
  }
  ctx.fillStyle = '#222';
  if (showColLabels) {
    colLabels.forEach((label, j) => {
      if (j % colLabelStep !== 0) return;
      const text = fitText(ctx, String(label), MAX_LABEL_PX);
      const cx = x0 + (j + 0.5) * cellWidth;
      if (rotate) {
        ctx.save();
        ctx.translate(cx, y0 - 4);
        ctx.rotate(-Math.PI / 4);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(text, 0, 0);
        ctx.restore();
      } else {
        ctx.textAlign = 'center';
        ctx.textBaseline = 'bottom';
        ctx.fillText(text, cx, y0 - 4);
      }
    });
  }

  const highlight = o.highlightRow ?? -1;
  if (highlight >= 0 && highlight < rows) {
    // The other rows under a light veil rather than the row in a colour: viridis has no colour
    // that stands out from all of its own, but brightness does.
    ctx.fillStyle = 'rgba(255, 255, 255, 0.62)';
    ctx.fillRect(x0, y0, cols * cellWidth, highlight * cellHeight);
    ctx.fillRect(x0, y0 + (highlight + 1) * cellHeight, cols * cellWidth, (rows - highlight - 1) * cellHeight);
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 1;
    ctx.strokeRect(x0 + 0.5, y0 + highlight * cellHeight + 0.5, cols * cellWidth - 1, Math.max(1, cellHeight - 1));
  }

  if (o.selectedRow !== undefined && o.selectedRow >= 0 && o.selectedRow < rows) {
    ctx.strokeStyle = '#e74c3c';
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 + 1, y0 + o.selectedRow * cellHeight + 1, cols * cellWidth - 2, cellHeight - 2);
  }

  if (o.cursor && o.cursor.i >= 0 && o.cursor.i < rows && o.cursor.j >= 0 && o.cursor.j < cols) {
    // The keyboard cursor: a white square inside a dark one, visible on every colour.
    const x = x0 + o.cursor.j * cellWidth;
    const y = y0 + o.cursor.i * cellHeight;
    ctx.lineWidth = 2;
    ctx.strokeStyle = '#111';
    ctx.strokeRect(x + 1, y + 1, Math.max(2, cellWidth - 2), Math.max(2, cellHeight - 2));
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 2.5, y + 2.5, Math.max(1, cellWidth - 5), Math.max(1, cellHeight - 5));
  }

  const layout = {
    x0,
    y0,
    cellWidth,
    cellHeight,
    rows,
    cols,
    width,
    height,
    highlightRow: highlight,
    rowLabelStep: showRowLabels ? rowLabelStep : 0,
    colLabelStep: showColLabels ? colLabelStep : 0,
  };
  canvas.dataset.layout = JSON.stringify(layout);
  return layout;
}

/** The cell under a CSS-pixel point of the canvas: { i, j }, { i, j: -1 } on a row label, or null. */
export function cellAt(layout, x, y) {
  const i = Math.floor((y - layout.y0) / layout.cellHeight);
  if (i < 0 || i >= layout.rows) return null;
  if (x < layout.x0) return x >= 0 ? { i, j: -1 } : null;
  const j = Math.floor((x - layout.x0) / layout.cellWidth);
  if (j < 0 || j >= layout.cols) return null;
  return { i, j };
}

/** A horizontal colour bar for domain [lo, hi] with tick labels. */
export function drawLegend(
  canvas,
  { domain, colormap, width = 320, label = '', ticks = 5, format = (v) => v.toFixed(2) },
) {
  const barHeight = 12;
  const height = barHeight + 30;
  const ctx = prepareCanvas(canvas, width, height);
  const pad = 14;
  const barWidth = width - 2 * pad;
  for (let x = 0; x < barWidth; x++) {
    const [r, g, b] = colormap(x / (barWidth - 1));
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(pad + x, 0, 1.5, barHeight);
  }
  ctx.strokeStyle = '#888';
  ctx.strokeRect(pad + 0.5, 0.5, barWidth - 1, barHeight - 1);
  ctx.font = `11px ${FONT_FAMILY}`;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'top';
  const [lo, hi] = domain;
  for (let k = 0; k < ticks; k++) {
    const t = k / (ticks - 1);
    const x = pad + t * (barWidth - 1);
    ctx.fillRect(x, barHeight, 1, 3);
    ctx.textAlign = k === 0 ? 'left' : k === ticks - 1 ? 'right' : 'center';
    ctx.fillText(format(lo + t * (hi - lo)), k === 0 ? x - 3 : k === ticks - 1 ? x + 3 : x, barHeight + 4);
  }
  if (label) {
    ctx.textAlign = 'center';
    ctx.fillText(label, width / 2, barHeight + 17);
  }
}
