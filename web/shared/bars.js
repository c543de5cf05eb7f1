// Draws one row of values (e.g. a query's attention weights over the keys) as vertical
// bars with a label under each, on a <canvas>. Knows nothing of attention.
import { FONT_FAMILY, prepareCanvas } from './canvas.js';

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
  const n = o.values.length;
  const maxWidth = o.maxWidth ?? 640;
  // Whole pixels down to 4 px a bar; below that, fractions, so the chart fits maxWidth.
  const fit = (maxWidth - 46) / Math.max(n, 1);
  const barWidth = fit >= 4 ? Math.min(44, Math.floor(fit)) : fit;
  const plotHeight = 120;
  const fontPx = barWidth >= 14 ? 12 : 10;
  const top = 18;
  const x0 = 36;
  const measure = prepareCanvas(canvas, 1, 1);
  measure.font = `${fontPx}px ${FONT_FAMILY}`;
  const widest = Math.min(80, Math.max(0, ...o.labels.map((l) => measure.measureText(String(l)).width)));
  const rotate = widest > barWidth - 2;
  // Labels keep their size; when bars are narrower than a label needs, every step-th is drawn.
  const labelStep = rotate ? Math.ceil(((fontPx + 2) * Math.SQRT2) / barWidth) : 1;
  const labelHeight = rotate ? widest * Math.SQRT1_2 + fontPx + 4 : fontPx + 6;
  const width = x0 + n * barWidth + 10;
  const height = top + plotHeight + labelHeight + 4;
  const ctx = prepareCanvas(canvas, width, height);
  const max = o.max ?? Math.max(1e-12, ...Array.from(o.values));
  const bottom = top + plotHeight;

  // Axis with 0 and max.
  ctx.font = `10px ${FONT_FAMILY}`;
  ctx.fillStyle = '#666';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.fillText('0', x0 - 4, bottom);
  ctx.fillText(max.toPrecision(2), x0 - 4, top);
  ctx.strokeStyle = '#bbb';
  ctx.beginPath();
  ctx.moveTo(x0 - 0.5, top);
  ctx.lineTo(x0 - 0.5, bottom + 0.5);
  ctx.lineTo(x0 + n * barWidth, bottom + 0.5);
  ctx.stroke();

  ctx.font = `${fontPx}px ${FONT_FAMILY}`;
  for (let j = 0; j < n; j++) {
    const gap = barWidth >= 4 ? 1 : 0;
    const x = x0 + j * barWidth + gap;
    const w = Math.max(0.5, barWidth - 2 * gap);
    if (o.masked && o.masked(j)) {
      ctx.strokeStyle = '#aaa';
      ctx.setLineDash([2, 2]);
      ctx.strokeRect(x + 0.5, bottom - 8.5, w - 1, 8);
      ctx.setLineDash([]);
    } else {
      const v = o.values[j];
      const t = Math.max(0, Math.min(1, v / max));
      const h = t * plotHeight;
      const [r, g, b] = o.colour(v);
      ctx.fillStyle = `rgb(${r},${g},${b})`;
      ctx.fillRect(x, bottom - h, w, h);
      if (barWidth >= 30) {
        ctx.fillStyle = '#333';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'bottom';
        ctx.font = `10px ${FONT_FAMILY}`;
        ctx.fillText(v.toFixed(2), x + w / 2, bottom - h - 2);
        ctx.font = `${fontPx}px ${FONT_FAMILY}`;
      }
    }
    if (j % labelStep !== 0) continue;
    ctx.fillStyle = '#222';
    const label = String(o.labels[j] ?? '');
    const cx = x0 + (j + 0.5) * barWidth;
    if (rotate) {
      ctx.save();
      ctx.translate(cx, bottom + 6);
      ctx.rotate(Math.PI / 4);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(label, 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      ctx.fillText(label, cx, bottom + 4);
    }
  }
  const layout = { x0, barWidth, n, top, bottom, labelStep, max };
  canvas.dataset.layout = JSON.stringify(layout);
  return layout;
}
