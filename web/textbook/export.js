// What the page's export buttons save, from a run: the JSON document (weights and the
// intermediates the steps show) and the PNG panels — the maps drawn again by wasm-attention/viz
// without the picked row or keyboard cursor, on its one colour scale, with that scale's legend.
import { createHeatmap, weightRGB } from '../../viz/index.mjs';
import { FONT_FAMILY, prepareCanvas } from '../shared/canvas.js';
import { buildExport } from '../shared/export-files.js';
import { headIntermediates, matrixOf, viewsOf } from './run.js';

/** The viz scale's bar: weight 0 … 1 on its square-root scale, ticks where 0, 0.1, 0.5 and 1 sit. */
function drawWeightLegend(canvas, width = 320) {
  const ctx = prepareCanvas(canvas, width, 44);
  const pad = 14;
  const barWidth = width - 2 * pad;
  for (let x = 0; x < barWidth; x++) {
    const [r, g, b] = weightRGB((x / (barWidth - 1)) ** 2);
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(pad + x, 0, 1.5, 12);
  }
  ctx.font = `11px ${FONT_FAMILY}`;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  for (const w of [0, 0.1, 0.5, 1]) {
    const x = pad + Math.sqrt(w) * (barWidth - 1);
    ctx.fillRect(x, 12, 1, 3);
    ctx.fillText(String(w), Math.min(Math.max(x, pad + 4), width - pad - 4), 16);
  }
  ctx.fillText('attention weight (square-root scale), one for every map', width / 2, 30);
}

/** One map as the viz heatmap draws it, copied out of a view made off screen and disposed. */
function snapshot(host, options) {
  const view = createHeatmap(host, options);
  const drawn = host.querySelector('canvas[data-layout]');
  const copy = document.createElement('canvas');
  copy.width = drawn.width;
  copy.height = drawn.height;
  copy.getContext('2d').drawImage(drawn, 0, 0);
  view.dispose();
  return copy;
}

/** The JSON document of a run (see export-files.js's buildExport). */
export function exportDocument(run, engineInfo) {
  const { self, mhaHeads, mhaAverage } = run.results;
  const heads = [];
  if (mhaHeads?.intermediates) {
    for (let h = 0; h < run.settings.numHeads; h++) heads.push(headIntermediates(run, h));
  }
  return buildExport({
    tokens: run.tokens,
    settings: run.settings,
    engine: engineInfo,
    selfWeights: self?.weights ?? null,
    headWeights: mhaHeads?.weights ?? null,
    averageWeights: mhaAverage?.weights ?? null,
    numHeads: run.settings.numHeads,
    selfIntermediates: self?.intermediates ? { d: run.settings.dModel, ...self.intermediates } : null,
    headIntermediates: heads.length ? heads : null,
  });
}

/** → { panels: [{ title, canvas }], domain, heading } for composePNG. */
export function exportPanels(run) {
  const side = run.n <= 8 ? 200 : 320;
  const host = document.body.appendChild(document.createElement('div'));
  host.style.cssText = `position: absolute; left: -10000px; top: 0; width: ${side + 110}px`;
  const panels = viewsOf(run).map((v) => ({
    title: v.key === 'self' ? 'self-attention (one head)' : v.label,
    canvas: snapshot(host, {
      weights: matrixOf(run, v.key),
      queryTokens: run.tokens,
      causal: Boolean(run.settings.isCausal),
      height: side,
    }),
  }));
  host.remove();
  const legend = document.createElement('canvas');
  drawWeightLegend(legend);
  panels.push({ title: 'colour scale', canvas: legend });
  const s = run.settings;
  return { panels, domain: [0, 1], heading: `“${s.text}” · d_model ${s.dModel} · ${s.numHeads} heads` };
}
