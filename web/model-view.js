// The poem model's attention, drawn: every layer × head as a thumbnail (as BertViz's model
// view), and one head opened large with its heatmap (its four steps are steps.js's). A hovered
// token's row is brought forward in every map at once. Draws what it is given (a run of
// poem-run.js and the page's ui state); knows nothing of the engine or its worker.
import { drawHeatmap, drawLegend } from './heatmap.js';
import { viridis } from './colormap.js';
import { WEIGHT_DOMAIN as MODEL_DOMAIN, labelsOf, matrixOf } from './poem-run.js';
import { el } from './dom.js';
import { isKeyMasked, kvHeadOf } from '../lib/attention-rules.mjs';

const THUMB_MAX = 150;
const LABEL_COLUMN = 30;
const GAP = 6;

const $ = (id) => document.getElementById(id);

function innerWidth(node) {
  const cs = getComputedStyle(node);
  return node.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
}

const maskOf = (run) => (i, j) => isKeyMasked(run.mask, i, j);

/**
 * ui: { highlight: row or -1, open: { layer, head } | null, query: row of the large view,
 *       cursor: { i, j } | null (keyboard cursor of the large map, when focused) }
 * @returns {{ render(run, ui), redraw(run, ui), mapOf(canvas), thumbSize(): number }}
 */
export function createModelView() {
  const maps = new Map(); // canvas → { kind: 'thumb' | 'large', layer, head, layout, matrix, n }

  function buildGrid(run) {
    const grid = $('model-grid');
    if (grid.dataset.shape === `${run.nLayers}x${run.nHeads}`) return;
    const cells = [el('div', { class: 'corner', 'aria-hidden': 'true' })];
    for (let h = 0; h < run.nHeads; h++)
      cells.push(el('div', { class: 'col-head', 'aria-hidden': 'true', text: `head ${h + 1}` }));
    for (let l = 0; l < run.nLayers; l++) {
      cells.push(el('div', { class: 'row-head', 'aria-hidden': 'true', text: `L${l + 1}` }));
      for (let h = 0; h < run.nHeads; h++) {
        cells.push(
          el(
            'button',
            {
              type: 'button',
              class: 'thumb',
              'data-testid': 'thumb',
              'data-layer': String(l),
              'data-head': String(h),
              'aria-label': `Layer ${l + 1}, head ${h + 1}: open it large`,
              'aria-pressed': 'false',
            },
            el('canvas', { 'data-testid': 'thumb-map', 'data-layer': String(l), 'data-head': String(h) }),
          ),
        );
      }
    }
    grid.style.gridTemplateColumns = `${LABEL_COLUMN}px repeat(${run.nHeads}, auto)`;
    grid.replaceChildren(...cells);
    grid.dataset.shape = `${run.nLayers}x${run.nHeads}`;
  }

  function thumbSize(run) {
    const width = innerWidth($('model-view-section'));
    return Math.max(40, Math.min(THUMB_MAX, Math.floor((width - LABEL_COLUMN - GAP * run.nHeads) / run.nHeads) - 6));
  }

  function drawThumbs(run, ui) {
    const size = thumbSize(run);
    for (const button of $('model-grid').querySelectorAll('[data-testid=thumb]')) {
      const layer = Number(button.dataset.layer);
      const head = Number(button.dataset.head);
      const canvas = button.firstElementChild;
      const matrix = matrixOf(run, layer, head);
      const layout = drawHeatmap(canvas, {
        matrix,
        rows: run.n,
        cols: run.n,
        domain: MODEL_DOMAIN,
        colormap: viridis,
        masked: maskOf(run),
        maxSize: size,
        maxCell: size,
        labels: false,
        highlightRow: ui.highlight,
      });
      maps.set(canvas, { kind: 'thumb', layer, head, layout, matrix, n: run.n });
      const open = Boolean(ui.open && ui.open.layer === layer && ui.open.head === head);
      button.setAttribute('aria-pressed', String(open));
      button.classList.toggle('open', open);
    }
  }

  function drawLarge(run, ui) {
    const section = $('head-section');
    const canvas = $('head-map');
    maps.delete(canvas);
    section.hidden = !ui.open;
    if (!ui.open) return;
    const { layer, head } = ui.open;
    const labels = labelsOf(run);
    const matrix = matrixOf(run, layer, head);
    const width = innerWidth(section);
    const layout = drawHeatmap(canvas, {
      matrix,
      rows: run.n,
      cols: run.n,
      rowLabels: labels,
      colLabels: labels,
      domain: MODEL_DOMAIN,
      colormap: viridis,
      masked: maskOf(run),
      maxSize: Math.min(460, width - 70),
      maxCell: 36,
      highlightRow: ui.highlight,
      selectedRow: ui.query,
      cursor: ui.cursor ?? undefined,
    });
    maps.set(canvas, { kind: 'large', layer, head, layout, matrix, n: run.n });
    const kvHead = kvHeadOf(head, run.nHeads, run.nKvHeads);
    $('head-heading').textContent = `Layer ${layer + 1}, head ${head + 1}`;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute(
      'aria-label',
      `Layer ${layer + 1}, head ${head + 1}: attention weights, ${run.n} × ${run.n}. ` +
        'Arrow keys move the cell cursor and read its weight; Enter shows the four steps of the cursor’s query row.',
    );
    $('head-caption').textContent =
      `Row i: where token i looks when layer ${layer + 1}'s head ${head + 1} computes it. This head shares its keys and values ` +
      `with ${run.nHeads / run.nKvHeads - 1 === 1 ? 'one other head' : `${run.nHeads / run.nKvHeads - 1} other heads`} ` +
      `(grouped-query attention: K/V head ${kvHead + 1} of ${run.nKvHeads}); keys are rotated by their position (RoPE). ` +
      'Hatched cells are later tokens, masked. Click a row (or focus the map and press Enter) for its four steps below.';
    const select = $('head-query');
    if (select.options.length !== run.n) {
      select.replaceChildren(...labels.map((t, i) => el('option', { value: String(i), text: `${i + 1}: ${t}` })));
    }
    select.value = String(ui.query);
  }

  return {
    /** Draws the whole model view (and the opened head) for a run. */
    render(run, ui) {
      const section = $('model-view-section');
      section.hidden = !run;
      if (!run) {
        $('head-section').hidden = true;
        return;
      }
      buildGrid(run);
      drawThumbs(run, ui);
      drawLegend($('model-legend'), {
        domain: MODEL_DOMAIN,
        colormap: viridis,
        width: Math.min(360, innerWidth(section)),
        label: 'attention weight, 0 … 1 in every map',
      });
      $('model-caption').textContent =
        `Each small map is one head: ${run.nLayers} layers (top to bottom, the order the model computes them) × ${run.nHeads} heads, ` +
        `${run.n} tokens. Row i shows where token i looks; a causal model only looks back, so the maps are triangles. ` +
        'Point at a token (here or in the poem above) to bring its row forward in every map; click a map to open it large.';
      drawLarge(run, ui);
    },
    /** Redraws the maps only (a hover, a cursor, a picked row). */
    redraw(run, ui) {
      if (!run) return;
      drawThumbs(run, ui);
      drawLarge(run, ui);
    },
    mapOf: (canvas) => maps.get(canvas) ?? null,
  };
}
