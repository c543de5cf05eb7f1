// The files the textbook exports: the JSON document's format, the PNG's layout of titled heatmaps,
// and saving either as a download.
import { FONT_FAMILY } from './canvas.js';

/** Rows of a row-major matrix as nested arrays. */
export function toRows(matrix, rows, cols) {
  const out = [];
  for (let i = 0; i < rows; i++) out.push(Array.from(matrix.subarray(i * cols, (i + 1) * cols)));
  return out;
}

/**
 * The JSON document of what the page shows.
 * @param {object} shown
 * @param {string[]} shown.tokens
 * @param {object} shown.settings
 * @param {object} shown.engine          attn.info
 * @param {Float32Array|null} shown.selfWeights   [n, n]
 * @param {Float32Array|null} shown.headWeights   [numHeads, n, n]
 * @param {Float32Array|null} shown.averageWeights [n, n]
 * @param {number} shown.numHeads
 * @param {object|null} [shown.selfIntermediates]  { d, q, k, v: [n, d], scores, scaledScores: [n, n] }
 * @param {object[]|null} [shown.headIntermediates] per head, the same ({ d, q, k, v, scores, scaledScores })
 */
export function buildExport({
  tokens,
  settings,
  engine,
  selfWeights,
  headWeights,
  averageWeights,
  numHeads,
  selfIntermediates = null,
  headIntermediates = null,
}) {
  const n = tokens.length;
  const heads = [];
  if (headWeights) {
    for (let h = 0; h < numHeads; h++) heads.push(toRows(headWeights.subarray(h * n * n, (h + 1) * n * n), n, n));
  }
  // q, k, v as [token][dim]; scores (q·k) and scaledScores (× 1/√d, −∞ where masked: null in JSON) as [query][key].
  const steps = (it) =>
    it && {
      q: toRows(it.q, n, it.d),
      k: toRows(it.k, n, it.d),
      v: toRows(it.v, n, it.d),
      scores: toRows(it.scores, n, n),
      scaledScores: toRows(it.scaledScores, n, n),
    };
  const doc = {
    format: 'wasm-attention-demo/1',
    description:
      'Attention weights [query][key] (rows sum to 1) as computed by the wasm-attention engine; ' +
      'with the intermediates the page shows (q, k, v [token][dim]; scores and scaledScores [query][key], null where masked).',
    engine,
    settings,
    tokens,
    selfAttention: selfWeights ? { weights: toRows(selfWeights, n, n) } : null,
    multiHeadAttention: headWeights
      ? { numHeads, heads, average: averageWeights ? toRows(averageWeights, n, n) : null }
      : null,
  };
  if (selfIntermediates && doc.selfAttention) doc.selfAttention.intermediates = steps(selfIntermediates);
  if (headIntermediates && doc.multiHeadAttention)
    doc.multiHeadAttention.headIntermediates = headIntermediates.map(steps);
  return doc;
}

export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadJSON(doc, filename = 'attention-weights.json') {
  download(new Blob([JSON.stringify(doc, null, 1)], { type: 'application/json' }), filename);
}

/**
 * Lays titled canvases out in a grid on one canvas and downloads it as PNG.
 * @param {{ title: string, canvas: HTMLCanvasElement }[]} panels
 */
export function composePNG(panels, { columns = 3, heading = '' } = {}) {
  const pad = 16;
  const titleH = 22;
  const headingH = heading ? 30 : 0;
  const scale = (typeof window !== 'undefined' && window.devicePixelRatio) || 1;
  const w = (c) => c.width / scale;
  const h = (c) => c.height / scale;
  const cols = Math.max(1, Math.min(columns, panels.length));
  const colWidth = Math.max(...panels.map((p) => w(p.canvas)), 1);
  const rowHeights = [];
  panels.forEach((p, k) => {
    const r = Math.floor(k / cols);
    rowHeights[r] = Math.max(rowHeights[r] ?? 0, h(p.canvas) + titleH);
  });
  const width = pad + cols * (colWidth + pad);
  const height = pad + headingH + rowHeights.reduce((a, b) => a + b + pad, 0);
  const out = document.createElement('canvas');
  out.width = Math.round(width * scale);
  out.height = Math.round(height * scale);
  const ctx = out.getContext('2d');
  ctx.scale(scale, scale);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#222';
  ctx.textBaseline = 'top';
  if (heading) {
    ctx.font = `bold 16px ${FONT_FAMILY}`;
    ctx.fillText(heading, pad, pad);
  }
  ctx.font = `13px ${FONT_FAMILY}`;
  let y = pad + headingH;
  rowHeights.forEach((rh, r) => {
    for (let c = 0; c < cols; c++) {
      const p = panels[r * cols + c];
      if (!p) break;
      const x = pad + c * (colWidth + pad);
      ctx.fillText(p.title, x, y);
      ctx.drawImage(p.canvas, x, y + titleH, w(p.canvas), h(p.canvas));
    }
    y += rh + pad;
  });
  return out;
}

export function downloadPNG(panels, options, filename = 'attention-weights.png') {
  const canvas = composePNG(panels, options);
  canvas.toBlob((blob) => download(blob, filename), 'image/png');
}
