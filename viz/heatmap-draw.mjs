// Paints a heatmap's canvas from its layout: the cells (one drawImage of a kept level), the
// causal mask (one path, filled twice), the thinned labels, and the markers of the hovered row.
import { MASK_CSS } from './colour-scale.mjs';
import { FONT_PX, MAX_LABEL_PX } from './heatmap-layout.mjs';
import { levelFor } from './map-image.mjs';

export const FONT_FAMILY = 'system-ui, "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", sans-serif';
const FONT = `${FONT_PX}px ${FONT_FAMILY}`;
const BOLD = `600 ${FONT_PX}px ${FONT_FAMILY}`;

/** The label cut to maxWidth with an ellipsis. */
export function fitText(ctx, text, maxWidth) {
  if (ctx.measureText(text).width <= maxWidth) return text;
  const chars = Array.from(text);
  while (chars.length > 1 && ctx.measureText(`${chars.join('')}…`).width > maxWidth) chars.pop();
  return `${chars.join('')}…`;
}

const hatchPatterns = new WeakMap();
function hatch(ctx) {
  let pattern = hatchPatterns.get(ctx);
  if (!pattern) {
    const tile = document.createElement('canvas');
    tile.width = 6;
    tile.height = 6;
    const t = tile.getContext('2d');
    t.strokeStyle = '#a3a3a3';
    t.lineWidth = 1;
    t.beginPath();
    t.moveTo(-1, 7);
    t.lineTo(7, -1);
    t.stroke();
    pattern = ctx.createPattern(tile, 'repeat');
    hatchPatterns.set(ctx, pattern);
  }
  return pattern;
}

export function drawCells(ctx, L, image, dpr) {
  const f = levelFor(L.cell * dpr);
  // The visible cells, widened to whole pooled pixels.
  const c0 = Math.floor(L.firstCol / f) * f;
  const r0 = Math.floor(L.firstRow / f) * f;
  const c1 = Math.min(L.S, (Math.floor(L.lastCol / f) + 1) * f);
  const r1 = Math.min(L.T, (Math.floor(L.lastRow / f) + 1) * f);
  const level = image.level(f, r0 / f, Math.ceil(r1 / f));
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(
    level,
    c0 / f,
    r0 / f,
    (c1 - c0) / f,
    (r1 - r0) / f,
    L.x0 + c0 * L.cell,
    L.y0 + r0 * L.cell,
    (c1 - c0) * L.cell,
    (r1 - r0) * L.cell,
  );
  return f;
}

// The masked keys of the visible rows as one staircase polygon: row i is masked from key
// i + S - T + 1 on.
export function drawMask(ctx, L) {
  const offset = L.S - L.T;
  const xOf = (j) => L.x0 + j * L.cell;
  const yOf = (i) => L.y0 + i * L.cell;
  const right = xOf(L.S);
  let first = L.firstRow;
  while (first <= L.lastRow && first + offset + 1 >= L.S) first++;
  if (first > L.lastRow) return;
  // Rows past the last visible one cannot show; rows whose mask starts right of the view neither.
  const last = Math.min(L.lastRow, L.S - offset - 2);
  ctx.beginPath();
  ctx.moveTo(right, yOf(first));
  for (let i = first; i <= last; i++) {
    const x = xOf(i + offset + 1);
    ctx.lineTo(x, yOf(i));
    ctx.lineTo(x, yOf(i + 1));
  }
  ctx.lineTo(right, yOf(last + 1));
  ctx.closePath();
  ctx.fillStyle = MASK_CSS;
  ctx.fill();
  ctx.fillStyle = hatch(ctx);
  ctx.fill();
}

function labelBox(ctx, text, x, y, align) {
  const w = ctx.measureText(text).width + 4;
  const left = align === 'right' ? x - w + 2 : align === 'center' ? x - w / 2 : x - 2;
  ctx.fillStyle = '#fff3c4';
  ctx.fillRect(left, y - FONT_PX / 2 - 2, w, FONT_PX + 4);
}

function drawRowLabels(ctx, L, labels, emphasised) {
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const x = L.gx - 4;
  const maxWidth = L.gx - 6;
  const start = Math.ceil(L.firstRow / L.rowStep) * L.rowStep;
  ctx.font = FONT;
  ctx.fillStyle = '#222';
  let drawn = 0;
  for (let i = start; i <= L.lastRow; i += L.rowStep) {
    if (i === emphasised) continue;
    const y = L.y0 + (i + 0.5) * L.cell;
    // A thinned label stands for its row: keep it off the viewport's edges so it is not cut.
    if (y < L.gy + 3 || y > L.gy + L.gh - 3) continue;
    if (emphasised >= 0 && Math.abs(i - emphasised) * L.cell < FONT_PX + 2) continue;
    ctx.fillText(fitText(ctx, labels[i], maxWidth), x, y);
    drawn++;
  }
  if (emphasised >= L.firstRow && emphasised <= L.lastRow) {
    const y = L.y0 + (emphasised + 0.5) * L.cell;
    ctx.font = BOLD;
    const text = fitText(ctx, labels[emphasised], maxWidth);
    labelBox(ctx, text, x, y, 'right');
    ctx.fillStyle = '#111';
    ctx.fillText(text, x, y);
  }
  return drawn;
}

function drawColLabels(ctx, L, labels, emphasised) {
  const start = Math.ceil(L.firstCol / L.colStep) * L.colStep;
  const maxWidth = Math.min(MAX_LABEL_PX, L.gy - 6);
  ctx.font = FONT;
  let drawn = 0;
  const one = (j, bold) => {
    const x = L.x0 + (j + 0.5) * L.cell;
    ctx.font = bold ? BOLD : FONT;
    const text = fitText(ctx, labels[j], L.horizontal ? L.cell : maxWidth);
    ctx.save();
    if (L.horizontal) {
      ctx.translate(x, L.gy - 4 - FONT_PX / 2);
      ctx.textAlign = 'center';
    } else {
      ctx.translate(x, L.gy - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
    }
    ctx.textBaseline = 'middle';
    if (bold) labelBox(ctx, text, 0, 0, ctx.textAlign);
    ctx.fillStyle = bold ? '#111' : '#222';
    ctx.fillText(text, 0, 0);
    ctx.restore();
  };
  for (let j = start; j <= L.lastCol; j += L.colStep) {
    if (j === emphasised) continue;
    const x = L.x0 + (j + 0.5) * L.cell;
    if (x < L.gx + 3 || x > L.gx + L.gw - 3) continue;
    if (emphasised >= 0 && Math.abs(j - emphasised) * L.cell < FONT_PX + 2) continue;
    one(j, false);
    drawn++;
  }
  if (emphasised >= L.firstCol && emphasised <= L.lastCol) one(emphasised, true);
  return drawn;
}

/**
 * A row brought forward from elsewhere (a token hovered outside the map): the other rows under a
 * light veil, the row itself untouched, so it stands out at any row height and on every colour.
 */
export function veilOtherRows(ctx, L, i) {
  const top = Math.max(L.gy, L.y0 + i * L.cell);
  const bottom = Math.min(L.gy + L.gh, L.y0 + (i + 1) * L.cell);
  ctx.fillStyle = 'rgba(255, 255, 255, 0.55)';
  if (top > L.gy) ctx.fillRect(L.gx, L.gy, L.gw, top - L.gy);
  if (bottom < L.gy + L.gh) ctx.fillRect(L.gx, bottom, L.gw, L.gy + L.gh - bottom);
}

// The hovered row stays visible at any row height: lines are drawn outside it (above and
// below, over the neighbouring rows), and a bar beside the grid marks it at ≥ 5 px.
export function drawRowMarker(ctx, L, i, colour) {
  const top = L.y0 + i * L.cell;
  const bottom = top + L.cell;
  if (bottom < L.gy || top > L.gy + L.gh) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.gx, L.gy - 2, L.gw, L.gh + 4);
  ctx.clip();
  ctx.fillStyle = '#fff';
  ctx.fillRect(L.gx, top - 1, L.gw, 1);
  ctx.fillRect(L.gx, bottom, L.gw, 1);
  ctx.fillStyle = colour;
  ctx.fillRect(L.gx, top - 2, L.gw, 1);
  ctx.fillRect(L.gx, bottom + 1, L.gw, 1);
  ctx.restore();
  const mid = (top + bottom) / 2;
  const h = Math.max(5, L.cell);
  ctx.fillStyle = colour;
  ctx.fillRect(L.gx + L.gw + 2, mid - h / 2, 6, h);
}

function drawColMarker(ctx, L, j, colour) {
  const left = L.x0 + j * L.cell;
  if (left + L.cell < L.gx || left > L.gx + L.gw) return;
  const mid = left + L.cell / 2;
  const w = Math.max(5, L.cell);
  ctx.fillStyle = colour;
  ctx.fillRect(mid - w / 2, L.gy + L.gh + 2, w, 6);
}

function drawCursor(ctx, L, { i, j }) {
  const x = L.x0 + j * L.cell;
  const y = L.y0 + i * L.cell;
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.gx - 3, L.gy - 3, L.gw + 6, L.gh + 6);
  ctx.clip();
  ctx.lineWidth = 1;
  ctx.strokeStyle = '#111';
  ctx.strokeRect(x - 1.5, y - 1.5, L.cell + 3, L.cell + 3);
  ctx.strokeStyle = '#fff';
  ctx.strokeRect(x - 2.5, y - 2.5, L.cell + 5, L.cell + 5);
  ctx.restore();
}

/**
 * Paints everything. state: { image, causal, rowLabels, colLabels, hover, cursor, highlightRow, dpr }
 * Returns what was drawn: { level, rowLabels, colLabels } (label counts).
 */
export function paint(ctx, L, state) {
  ctx.clearRect(0, 0, L.width, L.height);
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.gx, L.gy, L.gw, L.gh);
  ctx.clip();
  const level = drawCells(ctx, L, state.image, state.dpr);
  if (state.causal) drawMask(ctx, L);
  ctx.restore();
  ctx.strokeStyle = '#9aa1ad';
  ctx.lineWidth = 1;
  ctx.strokeRect(L.gx - 0.5, L.gy - 0.5, L.gw + 1, L.gh + 1);

  const at = state.hover ?? state.cursor;
  const lit = state.highlightRow ?? -1;
  if (!at && lit >= 0 && lit < L.T) veilOtherRows(ctx, L, lit);
  const row = at ? at.i : lit;
  if (row >= 0 && row < L.T) drawRowMarker(ctx, L, row, '#c0392b');
  if (at) drawColMarker(ctx, L, at.j, '#c0392b');
  if (state.cursor) drawCursor(ctx, L, state.cursor);
  const rowLabels = drawRowLabels(ctx, L, state.rowLabels, row);
  const colLabels = drawColLabels(ctx, L, state.colLabels, at ? at.j : -1);
  return { level, rowLabels, colLabels };
}
