// Paints the head view: tokens in two columns (queries left, keys right) and a line from query
// i to key j for each shown head, its opacity the weight. Lines are batched by head and by
// opacity step, so a few hundred strokes draw any number of lines.
import { headColour } from './colour-scale.mjs';
import { FONT_FAMILY, fitText } from './heatmap-draw.mjs';
import { niceStep } from './heatmap-layout.mjs';

export const HEAD_FONT_PX = 12;
const FONT = `${HEAD_FONT_PX}px ${FONT_FAMILY}`;
const BOLD = `600 ${HEAD_FONT_PX}px ${FONT_FAMILY}`;
const ALPHA_STEPS = 8;
const MIN_WEIGHT = 0.01; // lines fainter than this are not drawn
/** Above this many weights to look at (T × T × shown heads) only a picked token's lines are drawn. */
export const ALL_LINES_LIMIT = 2_000_000;

export function headLayout({ T, width, height, labelWidth }) {
  const rowHeight = Math.min(20, height / T);
  const left = Math.ceil(labelWidth) + 6;
  const right = Math.max(left + 60, width - Math.ceil(labelWidth) - 6);
  return {
    T,
    width,
    height: Math.ceil(rowHeight * T) + 4,
    rowHeight,
    top: 2,
    left,
    right,
    labelStep: niceStep((HEAD_FONT_PX + 2) / rowHeight),
  };
}

export function tokenAt(L, x, y) {
  const i = Math.floor((y - L.top) / L.rowHeight);
  if (i < 0 || i >= L.T) return null;
  return { side: x < L.width / 2 ? 'query' : 'key', i };
}

function drawLabels(ctx, L, labels, focus) {
  const yOf = (i) => L.top + (i + 0.5) * L.rowHeight;
  let drawn = 0;
  for (const side of ['query', 'key']) {
    const x = side === 'query' ? L.left - 6 : L.right + 6;
    ctx.textAlign = side === 'query' ? 'right' : 'left';
    ctx.textBaseline = 'middle';
    const mine = focus && focus.side === side ? focus.i : -1;
    ctx.font = FONT;
    ctx.fillStyle = '#222';
    for (let i = 0; i < L.T; i += L.labelStep) {
      if (mine >= 0 && Math.abs(i - mine) * L.rowHeight < HEAD_FONT_PX + 2) continue;
      ctx.fillText(fitText(ctx, labels[i], L.left - 10), x, yOf(i));
      drawn++;
    }
    if (mine >= 0) {
      ctx.font = BOLD;
      const text = fitText(ctx, labels[mine], L.left - 10);
      const w = ctx.measureText(text).width + 6;
      ctx.fillStyle = '#fff3c4';
      ctx.fillRect(side === 'query' ? x - w + 3 : x - 3, yOf(mine) - HEAD_FONT_PX / 2 - 2, w, HEAD_FONT_PX + 4);
      ctx.fillStyle = '#111';
      ctx.fillText(text, x, yOf(mine));
    }
  }
  return drawn;
}

/**
 * weights: Float32Array [H, T, T]; heads: booleans of shown heads; focus: { side, i } | null.
 * Returns the number of lines drawn (null when there were too many to draw without a focus).
 */
export function paintHeadView(ctx, L, { weights, heads, labels, focus }) {
  ctx.clearRect(0, 0, L.width, L.height);
  const T = L.T;
  const cells = T * T;
  const yOf = (i) => L.top + (i + 0.5) * L.rowHeight;
  const shown = heads.filter(Boolean).length;
  let lines = 0;
  if (focus || cells * shown <= ALL_LINES_LIMIT) {
    ctx.lineWidth = focus ? 2 : 1.2;
    heads.forEach((on, h) => {
      if (!on) return;
      const buckets = Array.from({ length: ALPHA_STEPS }, () => []);
      const base = h * cells;
      const add = (i, j) => {
        const w = weights[base + i * T + j];
        if (!(w >= MIN_WEIGHT)) return;
        buckets[Math.min(ALPHA_STEPS - 1, Math.floor(w * ALPHA_STEPS))].push(i, j);
      };
      if (!focus) for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) add(i, j);
      else if (focus.side === 'query') for (let j = 0; j < T; j++) add(focus.i, j);
      else for (let i = 0; i < T; i++) add(i, focus.i);
      ctx.strokeStyle = headColour(h);
      buckets.forEach((pairs, b) => {
        if (pairs.length === 0) return;
        ctx.globalAlpha = (b + 0.5) / ALPHA_STEPS; // the weight: faint lines stay faint
        ctx.beginPath();
        for (let k = 0; k < pairs.length; k += 2) {
          ctx.moveTo(L.left, yOf(pairs[k]));
          ctx.lineTo(L.right, yOf(pairs[k + 1]));
        }
        ctx.stroke();
        lines += pairs.length / 2;
      });
    });
    ctx.globalAlpha = 1;
  } else {
    lines = null;
  }
  const labelsDrawn = drawLabels(ctx, L, labels, focus);
  return { lines, labelsDrawn };
}
