// Draws one row of values (e.g. a query's attention weights over the keys) as vertical
// bars with a label under each, on a <canvas>. Knows nothing of attention.
import { FONT_FAMILY, prepareCanvas } from './canvas.js';

const PLOT_HEIGHT = 120; // CSS px of a bar at the axis's top
const TOP = 18; // CSS px above the plot, room for the axis's top number
const X0 = 36; // CSS px left of the first bar, room for the axis's numbers

/**
 * @param {HTMLCanvasElement} canvas
 * @param {object} o
 * @param {ArrayLike<number>} o.values    heights, drawn against [0, o.max]
 * @param {string[]} o.labels
 * @param {number} [o.max]                top of the axis and of the colour scale (default: largest value, at least 1e-12)
 * @param {(value: number) => number[]} o.colour   a bar's [r, g, b] from its value (as the heatmap above colours it)
 * @param {(j: number) => boolean} [o.masked]    drawn as an empty hatched slot
 * @param {number} [o.maxWidth]           CSS px (default 640)
 * @returns {{ x0: number, barWidth: number, n: number, top: number, bottom: number, labelStep: number, max: number }}
 */
export function drawBars(canvas, o) {
  const size = measureBars(canvas, o);
  const ctx = prepareCanvas(canvas, size.width, size.height);
  const chart = { ...size, max: o.max ?? Math.max(1e-12, ...Array.from(o.values)), bottom: TOP + PLOT_HEIGHT };
  drawAxis(ctx, chart);
  ctx.font = `${chart.fontPx}px ${FONT_FAMILY}`;
  for (let j = 0; j < chart.n; j++) {
    drawBar(ctx, chart, o, j);
    if (j % chart.labelStep === 0) drawLabel(ctx, chart, j, String(o.labels[j] ?? ''));
  }
  const { barWidth, n, bottom, labelStep, max } = chart;
  const layout = { x0: X0, barWidth, n, top: TOP, bottom, labelStep, max };
  canvas.dataset.layout = JSON.stringify(layout);
  return layout;
}

/** The chart's size: bar width, label font and angle, and the canvas's CSS size that holds them. */
function measureBars(canvas, o) {
  const n = o.values.length;
  const maxWidth = o.maxWidth ?? 640;
  // Whole pixels down to 4 px a bar; below that, fractions, so the chart fits maxWidth.
  const fit = (maxWidth - 46) / Math.max(n, 1);
  const barWidth = fit >= 4 ? Math.min(44, Math.floor(fit)) : fit;
  const fontPx = barWidth >= 14 ? 12 : 10;
  const measure = prepareCanvas(canvas, 1, 1);
  measure.font = `${fontPx}px ${FONT_FAMILY}`;
  const widest = Math.min(80, Math.max(0, ...o.labels.map((l) => measure.measureText(String(l)).width)));
  const rotate = widest > barWidth - 2;
  // Labels keep their size; when bars are narrower than a label needs, every step-th is drawn.
  const labelStep = rotate ? Math.ceil(((fontPx + 2) * Math.SQRT2) / barWidth) : 1;
  const labelHeight = rotate ? widest * Math.SQRT1_2 + fontPx + 4 : fontPx + 6;
  return {
    n,
    barWidth,
    fontPx,
    rotate,
    labelStep,
    width: X0 + n * barWidth + 10,
    height: TOP + PLOT_HEIGHT + labelHeight + 4,
  };
}

/** The axis, numbered 0 at the bottom and the chart's max at the top. */
function drawAxis(ctx, chart) {
  ctx.font = `10px ${FONT_FAMILY}`;
  ctx.fillStyle = '#666';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.fillText('0', X0 - 4, chart.bottom);
  ctx.fillText(chart.max.toPrecision(2), X0 - 4, TOP);
  ctx.strokeStyle = '#bbb';
  ctx.beginPath();
  ctx.moveTo(X0 - 0.5, TOP);
  ctx.lineTo(X0 - 0.5, chart.bottom + 0.5);
  ctx.lineTo(X0 + chart.n * chart.barWidth, chart.bottom + 0.5);
  ctx.stroke();
}

/** Bar j in its value's colour (its value above it when bars are wide), or a masked key's empty slot. */
function drawBar(ctx, chart, o, j) {
  const gap = chart.barWidth >= 4 ? 1 : 0;
  const x = X0 + j * chart.barWidth + gap;
  const w = Math.max(0.5, chart.barWidth - 2 * gap);
  const bottom = chart.bottom;
  if (o.masked && o.masked(j)) {
    ctx.strokeStyle = '#aaa';
    ctx.setLineDash([2, 2]);
    ctx.strokeRect(x + 0.5, bottom - 8.5, w - 1, 8);
    ctx.setLineDash([]);
    return;
  }
  const v = o.values[j];
  const h = Math.max(0, Math.min(1, v / chart.max)) * PLOT_HEIGHT;
  const [r, g, b] = o.colour(v);
  ctx.fillStyle = `rgb(${r},${g},${b})`;
  ctx.fillRect(x, bottom - h, w, h);
  if (chart.barWidth < 30) return;
  ctx.fillStyle = '#333';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.font = `10px ${FONT_FAMILY}`;
  ctx.fillText(v.toFixed(2), x + w / 2, bottom - h - 2);
  ctx.font = `${chart.fontPx}px ${FONT_FAMILY}`;
}

/** Key j's label under its bar: level, or turned 45° when it is wider than the bar. */
function drawLabel(ctx, chart, j, label) {
  ctx.fillStyle = '#222';
  const cx = X0 + (j + 0.5) * chart.barWidth;
  if (chart.rotate) {
    ctx.save();
    ctx.translate(cx, chart.bottom + 6);
    ctx.rotate(Math.PI / 4);
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillText(label, 0, 0);
    ctx.restore();
  } else {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    ctx.fillText(label, cx, chart.bottom + 4);
  }
}
