// The poem model's attention, drawn with wasm-attention/viz: every layer × head as a thumbnail
// (createModelView, grouped by shared K/V head), and one head opened large (createHeatmap; its
// four steps are steps.js's). A hovered token's row is brought forward in every map at once.
// Draws what it is given (a run of run.js and the page's ui state); knows nothing of the
// engine or its worker.
//
// The seam with controls.js: the thumbnails are [data-testid=thumb] cells with data-layer and
// data-head (a click opens one; Enter or Space is a click here), their canvases
// [data-testid=thumb-map], and the large map's canvas is #head-map ([data-testid=head-map]), made
// once at creation so its listeners can be bound before the first run; mapOf(canvas) gives the
// drawn layout of any of them.
import { createHeadView, createHeatmap, createModelView as createGrid } from '../../viz/index.mjs';
import { labelsOf, matrixOf } from './run.js';
import { el } from '../shared/dom.js';

const $ = (id) => document.getElementById(id);

/** The run's attention as the viz views take it: [layers] of Float32Array [heads, n, n], one copy per run length. */
function attentionCache() {
  let key = '';
  let value = null;
  return (run) => {
    const k = `${run.id}:${run.n}`;
    if (k !== key) {
      const cells = run.n * run.n;
      value = Array.from({ length: run.nLayers }, (_, l) => {
        const a = new Float32Array(run.nHeads * cells);
        for (let h = 0; h < run.nHeads; h++) a.set(matrixOf(run, l, h), h * cells);
        return a;
      });
      key = k;
    }
    return value;
  };
}

/** The large map, made once (hidden with its section) so its canvas keeps one identity. */
function createLargeMap() {
  const large = createHeatmap($('head-map-box'), {
    weights: new Float32Array(1),
    queryTokens: ['⟨s⟩'],
    causal: true,
    height: 420,
    numberFrom: 1,
  });
  const canvas = $('head-map-box').querySelector('canvas');
  canvas.id = 'head-map';
  canvas.dataset.testid = 'head-map';
  return { large, canvas };
}

/** What the opened head's map shows, and how its keys and values are shared. */
function headCaption(run, layer, head) {
  const kvHead = run.kvHeads[head]; // the model worker's kvHeadOf
  const others = run.nHeads / run.nKvHeads - 1;
  return (
    `Row i: where token i looks when layer ${layer + 1}'s head ${head + 1} computes it. This head shares its keys and values ` +
    `with ${others === 1 ? 'one other head' : `${others} other heads`} ` +
    `(grouped-query attention: K/V head ${kvHead + 1} of ${run.nKvHeads}); keys are rotated by their position (RoPE). ` +
    'Hatched cells are later tokens, masked. Click a row (or focus the map and press Enter) for its four steps below.'
  );
}

/** The query row's picker under the large map: one option per token. */
function fillQuerySelect(labels, query) {
  const select = $('head-query');
  if (select.options.length !== labels.length) {
    select.replaceChildren(...labels.map((t, i) => el('option', { value: String(i), text: `${i + 1}: ${t}` })));
  }
  select.value = String(query);
}

class ModelView {
  constructor() {
    this.attentionOf = attentionCache();
    this.grid = null;
    this.gridRun = 0;
    this.lines = null; // the opened head's layer as lines (the head view), made on first opening
    this.largeMeta = null; // { layer, head, matrix, n } of the opened head, for the page's read-out
    const { large, canvas } = createLargeMap();
    this.large = large;
    this.largeCanvas = canvas;
    // Enter or Space on a thumbnail opens it as a click does (controls.js listens for clicks).
    $('model-grid').addEventListener('keydown', (e) => {
      const cell = e.target.closest?.('[data-testid=thumb]');
      if (cell && (e.key === 'Enter' || e.key === ' ')) cell.click();
    });
  }

  drawGrid(run, ui) {
    const options = {
      attention: this.attentionOf(run),
      tokens: labelsOf(run),
      highlightRow: ui.highlight,
      selected: ui.open,
    };
    if (!this.grid || this.gridRun !== run.id) {
      this.grid?.dispose();
      this.grid = createGrid($('model-grid'), { ...options, numKvHeads: run.nKvHeads, numberFrom: 1 });
      this.gridRun = run.id;
    } else {
      this.grid.update(options);
    }
  }

  drawLarge(run, ui) {
    $('head-section').hidden = !ui.open;
    if (!ui.open) return;
    const { layer, head } = ui.open;
    const labels = labelsOf(run);
    const query = Math.min(ui.query, run.n - 1);
    const matrix = this.attentionOf(run)[layer].subarray(head * run.n * run.n, (head + 1) * run.n * run.n);
    this.largeMeta = { layer, head, matrix, n: run.n };
    this.large.update({
      weights: matrix,
      queryTokens: labels,
      title: `layer ${layer + 1}, head ${head + 1}`,
      highlightRow: ui.highlight,
      cursor: ui.cursor ? { query: Math.min(ui.cursor.i, run.n - 1), key: Math.min(ui.cursor.j, run.n - 1) } : null,
    });
    const shown = { attention: this.attentionOf(run), tokens: labels, layer, numberFrom: 1 };
    if (this.lines) this.lines.update(shown);
    else this.lines = createHeadView($('head-lines'), shown);
    $('head-heading').textContent = `Layer ${layer + 1}, head ${head + 1}`;
    $('head-caption').textContent = headCaption(run, layer, head);
    fillQuerySelect(labels, query);
  }

  /** Draws the whole model view (and the opened head) for a run. */
  render(run, ui) {
    $('model-view-section').hidden = !run;
    if (!run) {
      $('head-section').hidden = true;
      return;
    }
    this.drawGrid(run, ui);
    $('model-caption').textContent =
      `${run.nLayers} layers (top to bottom) × ${run.nHeads} heads, ${run.n} tokens; heads framed together share their keys and values. ` +
      'Row i: where token i looks (a causal model only looks back). Point at a token to bring its row forward everywhere; click a map, or press Enter on it, to open it large.';
    this.drawLarge(run, ui);
  }

  /** Redraws the maps only (a hover, a cursor, a picked row). */
  redraw(run, ui) {
    if (!run) return;
    this.drawGrid(run, ui);
    this.drawLarge(run, ui);
  }

  /** A thumbnail's or the large map's canvas as drawn: { kind, layer, head, layout } (the large one: + matrix, n), or null. */
  mapOf(canvas) {
    if (!canvas?.dataset.layout) return null;
    const layout = JSON.parse(canvas.dataset.layout);
    if (canvas === this.largeCanvas) return this.largeMeta && { kind: 'large', layout, ...this.largeMeta };
    if (canvas.dataset.testid !== 'thumb-map') return null;
    return { kind: 'thumb', layout, layer: Number(canvas.dataset.layer), head: Number(canvas.dataset.head) };
  }
}

/**
 * ui: { highlight: row or -1, open: { layer, head } | null, query: row of the large view,
 *       cursor: { i, j } | null (keyboard cursor of the large map, when focused) }
 * @returns {{ render(run, ui), redraw(run, ui), mapOf(canvas) }}
 */
export function createModelView() {
  return new ModelView();
}
