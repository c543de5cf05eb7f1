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
/** Most lines drawn at once: past it the faintest are left out (their opacity is near 0 anyway). */
const MAX_LINES = 4000;
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
 * Per shown head, its (query, key) pairs by opacity step: buckets[h][b] = [i, j, i, j, …].
 * Without a focus every weight of the map is looked at, with one only the focused token's row
 * (a query) or column (a key).
 */
function bucketLines(weights, T, heads, focus) {
  const cells = T * T;
  return heads.map((on, h) => {
    if (!on) return null;
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
    return buckets;
  });
}

/** The faintest opacity step drawn: the lowest steps are left out until at most MAX_LINES remain. */
function faintestStep(all) {
  const counts = new Array(ALPHA_STEPS).fill(0);
  for (const buckets of all) if (buckets) buckets.forEach((pairs, b) => (counts[b] += pairs.length / 2));
  let total = counts.reduce((a, b) => a + b, 0);
  let from = 0;
  while (total > MAX_LINES && from < ALPHA_STEPS - 1) total -= counts[from++];
  return from;
}

/**
 * weights: Float32Array [H, T, T]; heads: booleans of shown heads; focus: { side, i } | null.
 * Returns { lines (drawn; null when there were too many to look at without a focus), minWeight
 * (the faintest weight drawn), labelsDrawn }.
 */
export function paintHeadView(ctx, L, { weights, heads, labels, focus }) {
  ctx.clearRect(0, 0, L.width, L.height);
  const T = L.T;
  const yOf = (i) => L.top + (i + 0.5) * L.rowHeight;
  const shown = heads.filter(Boolean).length;
  let lines = null;
  let minWeight = MIN_WEIGHT;
  if (focus || T * T * shown <= ALL_LINES_LIMIT) {
    const all = bucketLines(weights, T, heads, focus);
    const from = faintestStep(all);
    if (from > 0) minWeight = from / ALPHA_STEPS;
    lines = 0;
    ctx.lineWidth = focus ? 2 : 1.2;
    all.forEach((buckets, h) => {
      if (!buckets) return;
      ctx.strokeStyle = headColour(h);
      for (let b = from; b < ALPHA_STEPS; b++) {
        const pairs = buckets[b];
        if (pairs.length === 0) continue;
        ctx.globalAlpha = (b + 0.5) / ALPHA_STEPS; // the weight: faint lines stay faint
        ctx.beginPath();
        for (let k = 0; k < pairs.length; k += 2) {
          ctx.moveTo(L.left, yOf(pairs[k]));
          ctx.lineTo(L.right, yOf(pairs[k + 1]));
        }
        ctx.stroke();
        lines += pairs.length / 2;
      }
    });
    ctx.globalAlpha = 1;
  }
  const labelsDrawn = drawLabels(ctx, L, labels, focus);
  return { lines, minWeight, labelsDrawn };
}
