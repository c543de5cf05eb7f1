// What the page's export buttons save, from a run: the JSON document (weights and the
// intermediates the steps show) and the PNG panels — heatmaps redrawn without the selection
// outline or keyboard cursor, all on one colour scale, with that one scale's legend.
import { drawHeatmap, drawLegend } from './heatmap.js';
import { viridis } from './colormap.js';
import { buildExport } from './export-files.js';
import { headIntermediates, maskedCells, matrixOf, scaleOf, viewsOf } from './textbook-run.js';

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
  const views = viewsOf(run);
  const hi = Math.max(
    ...['self', 'mha'].filter((g) => views.some((v) => v.group === g)).map((g) => scaleOf(run, g).domain[1]),
  );
  const domain = [0, hi];
  const maxSize = run.n <= 8 ? 200 : 320;
  const panels = views.map((v) => {
    const canvas = document.createElement('canvas');
    drawHeatmap(canvas, {
      matrix: matrixOf(run, v.key),
      rows: run.n,
      cols: run.n,
      rowLabels: run.tokens,
      colLabels: run.tokens,
      domain,
      colormap: viridis,
      masked: maskedCells(run),
      maxSize,
      maxCell: 40,
    });
    return { title: v.key === 'self' ? 'self-attention (one head)' : v.label, canvas };
  });
  const legend = document.createElement('canvas');
  drawLegend(legend, { domain, colormap: viridis, label: 'attention weight: one scale for every map in this image' });
  panels.push({ title: 'colour scale', canvas: legend });
  const s = run.settings;
  return { panels, domain, heading: `“${s.text}” · d_model ${s.dModel} · ${s.numHeads} heads` };
}
