// One model-view thumbnail: a whole map in a small square canvas, with the same kept levels,
// mask and row marker as the heatmap (and so the same incremental drawing).
import { drawCells, drawMask, drawRowMarker, veilOtherRows } from './heatmap-draw.mjs';
import { MARKER_PX } from './heatmap-layout.mjs';
import { createMapImage } from './map-image.mjs';
import { sizeCanvas } from './dom.mjs';

export function createThumbnail(canvas) {
  const image = createMapImage();
  const ctx = canvas.getContext('2d');
  let T = 0;
  let S = 0;
  let causal = false;
  return {
    setData(weights, t, s, isCausal) {
      T = t;
      S = s;
      causal = isCausal;
      return image.setData(weights, t, s, isCausal);
    },
    draw(size, highlightRow) {
      const dpr = window.devicePixelRatio || 1;
      const cell = size / Math.max(T, S);
      const L = {
        T,
        S,
        cell,
        x0: 1,
        y0: 1,
        gx: 1,
        gy: 1,
        gw: S * cell,
        gh: T * cell,
        firstRow: 0,
        lastRow: T - 1,
        firstCol: 0,
        lastCol: S - 1,
      };
      const width = Math.ceil(L.gw + MARKER_PX + 1);
      const height = Math.ceil(L.gh + 3);
      sizeCanvas(canvas, ctx, width, height, dpr);
      ctx.clearRect(0, 0, width, height);
      drawCells(ctx, L, image, dpr);
      if (causal) drawMask(ctx, L);
      const lit = highlightRow >= 0 && highlightRow < T ? highlightRow : -1;
      if (lit >= 0) {
        veilOtherRows(ctx, L, lit);
        drawRowMarker(ctx, L, lit, '#c0392b');
      }
      canvas.dataset.layout = JSON.stringify({
        x0: 1,
        y0: 1,
        cellWidth: cell,
        cellHeight: cell,
        rows: T,
        cols: S,
        highlightRow: lit,
      });
    },
    dispose() {
      image.dispose();
    },
  };
}
