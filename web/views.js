// The page's views of one run: token chips, the heatmaps with their legends and captions, the
// picked query's bars and its four steps. Draws what it is given; knows nothing of the engine
// (the numbers come in a run, see textbook-run.js) and keeps the weights it draws in memory only
// (never in DOM attributes: 128 tokens × 64 heads would be megabytes of text).
import { drawHeatmap, drawLegend } from './heatmap.js';
import { drawBars } from './bars.js';
import { viridis } from './colormap.js';
import { renderSteps } from './steps.js';
import { groupOf, maskedCells, matrixOf, scaleOf, stepsData, viewsOf } from './textbook-run.js';
import { el } from './dom.js';

const MAX_CHIPS = 40; // token chips shown before the rest collapse into one "+ N more"

const $ = (id) => document.getElementById(id);

/** Content width of an element (its box minus padding), for fitting canvases on narrow screens. */
function innerWidth(node) {
  const cs = getComputedStyle(node);
  return node.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
}

function renderTokens(tokens, limit) {
  const shown = tokens.slice(0, tokens.length > MAX_CHIPS ? MAX_CHIPS : tokens.length);
  const chips = shown.map((t, i) => el('span', { class: 'token' }, el('small', { text: String(i + 1) }), t));
  const box = $('tokens');
  box.replaceChildren(...chips);
  box.dataset.count = String(tokens.length);
  if (tokens.length > shown.length) {
    const over = tokens.length > limit ? ` — over the demo's limit of ${limit}, so nothing is computed` : '';
    box.append(
      el('span', {
        class: 'token more',
        'data-testid': 'tokens-more',
        text: `+ ${tokens.length - shown.length} more (${tokens.length} tokens${over})`,
      }),
    );
  }
}

/**
 * @returns {{ render(run, sel, ui), drawMap(canvas, sel, ui), mapOf(canvas), shown(), exportPanels(run) }}
 */
export function createViews({ tokenLimit }) {
  const maps = new Map(); // canvas → { key, label, matrix, layout, n }

  function drawMap(canvas, sel, ui) {
    const meta = maps.get(canvas);
    const run = ui.run;
    meta.layout = drawHeatmap(canvas, {
      matrix: meta.matrix,
      rows: run.n,
      cols: run.n,
      rowLabels: run.tokens,
      colLabels: run.tokens,
      domain: meta.domain,
      colormap: viridis,
      masked: maskedCells(run),
      maxSize: meta.maxSize,
      maxCell: meta.maxCell,
      selectedRow: sel.view === meta.key ? sel.query : -1,
      cursor: ui.focused === meta.key ? sel.cell : undefined,
    });
    return meta.layout;
  }

  function addMap(canvas, run, key, label, { maxSize, maxCell }) {
    const n = run.n;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute(
      'aria-label',
      `${label}: attention weights heatmap, ${n} × ${n}. ` +
        'Arrow keys move the cell cursor and read its weight; Enter follows the cursor’s query row below.',
    );
    maps.set(canvas, {
      key,
      label,
      matrix: matrixOf(run, key),
      domain: scaleOf(run, groupOf(key)).domain,
      maxSize,
      maxCell,
      n,
    });
  }

  function renderSelf(run, sel, ui) {
    const section = $('self-section');
    const canvas = $('self-map');
    maps.delete(canvas);
    section.hidden = !run?.results.self;
    if (section.hidden) return;
    const s = run.settings;
    const width = innerWidth(section);
    addMap(canvas, run, 'self', 'single head', { maxSize: Math.min(400, width - 70), maxCell: 56 });
    drawMap(canvas, sel, ui);
    const scale = scaleOf(run, 'self');
    drawLegend($('self-legend'), {
      domain: scale.domain,
      colormap: viridis,
      label: scale.label,
      width: Math.min(360, width),
    });
    $('self-caption').textContent =
      `Every token's embedding x (d_model = ${s.dModel}) is projected to a query q = x·W_Qᵀ, a key k = x·W_Kᵀ and a value v = x·W_Vᵀ. ` +
      `Row i shows where query token i looks: its scores q·kⱼ against every key are scaled by 1/√d_k = 1/√${s.dModel}, ` +
      `softmax turns them into weights that sum to 1 across the row, and the token's output is the weighted sum of the values. ` +
      `Bright = much attention.` +
      (s.isCausal
        ? ' Hatched grey cells are masked by the causal mask: a token may not look at later tokens, so their weight is exactly 0.'
        : '') +
      ' Hover a cell (or focus the map and use the arrow keys) for its exact weight; click a row (or press Enter) to follow that query below.';
  }

  function renderHeads(run, sel, ui) {
    const section = $('mha-section');
    const box = $('mha-maps');
    const ok = Boolean(run?.results.mhaHeads && run.results.mhaAverage);
    section.hidden = !ok;
    for (const c of box.querySelectorAll('canvas')) maps.delete(c);
    if (!ok) {
      box.replaceChildren();
      return;
    }
    const s = run.settings;
    const H = s.numHeads;
    const headDim = s.dModel / H;
    const width = innerWidth(section);
    const maxSize = Math.min(H <= 4 ? 240 : H <= 8 ? 200 : 150, width - 60);
    // The same grid again (a new selection, same heads): keep the canvases, so focus stays.
    const same = box.dataset.heads === String(H) && box.children.length === H + 1;
    if (!same) {
      const figures = [];
      for (let h = 0; h < H; h++) {
        figures.push(
          el(
            'figure',
            { class: 'map', 'data-view': 'head', 'data-head': String(h) },
            el('figcaption', { text: `head ${h + 1} · dims ${h * headDim}–${(h + 1) * headDim - 1}` }),
            el('canvas', { 'data-testid': 'heatmap-head', 'data-head': String(h), 'data-key': `head:${h}` }),
          ),
        );
      }
      figures.push(
        el(
          'figure',
          { class: 'map', 'data-view': 'average' },
          el('figcaption', { text: `average of the ${H} heads` }),
          el('canvas', { 'data-testid': 'heatmap-average', 'data-key': 'average' }),
        ),
      );
      box.replaceChildren(...figures);
      box.dataset.heads = String(H);
    }
    for (const canvas of box.querySelectorAll('canvas')) {
      const key = canvas.dataset.key;
      addMap(canvas, run, key, key === 'average' ? `average of ${H} heads` : `head ${Number(key.slice(5)) + 1}`, {
        maxSize,
      });
      drawMap(canvas, sel, ui);
    }
    const scale = scaleOf(run, 'mha');
    drawLegend($('mha-legend'), {
      domain: scale.domain,
      colormap: viridis,
      label: scale.label,
      width: Math.min(360, width),
    });
    $('mha-caption').textContent =
      `nn.MultiheadAttention splits d_model = ${s.dModel} into ${H} heads of ${headDim} dimensions. ` +
      `Each head projects Q, K and V into its own ${headDim}-dimensional subspace and runs the same steps there — scores, scaling by 1/√${headDim}, softmax, weighted sum — ` +
      `so different heads can attend to different things. Their outputs are concatenated and mixed by the output projection. ` +
      `The last map is the average over heads, what PyTorch returns by default. All maps here share one colour scale.`;
  }

  function renderQuery(run, sel) {
    const section = $('query-section');
    section.hidden = !run;
    const bars = $('row-bars');
    bars.weights = null;
    if (!run) return;
    const views = viewsOf(run);
    const querySelect = $('query');
    querySelect.replaceChildren(
      ...run.tokens.map((t, i) => el('option', { value: String(i), text: `${i + 1}: ${t}` })),
    );
    querySelect.value = String(sel.query);
    const sourceSelect = $('source');
    sourceSelect.replaceChildren(...views.map((v) => el('option', { value: v.key, text: v.label })));
    sourceSelect.value = sel.view;

    const view = views.find((v) => v.key === sel.view);
    const n = run.n;
    const width = Math.min(640, innerWidth(section));
    const values = matrixOf(run, sel.view).subarray(sel.query * n, (sel.query + 1) * n);
    const scale = scaleOf(run, view.group);
    const masked = maskedCells(run);
    drawBars(bars, {
      values,
      labels: run.tokens,
      colormap: viridis,
      max: scale.domain[1],
      masked: masked && ((j) => masked(sel.query, j)),
      maxWidth: width,
    });
    bars.weights = values;
    bars.dataset.view = sel.view;
    $('row-caption').textContent =
      `Below: how query “${run.tokens[sel.query]}” (position ${sel.query + 1}) spreads its attention over the keys in ${view.label}, on the colour scale of that heatmap.`;
    bars.setAttribute('aria-label', `weights of query ${run.tokens[sel.query]} in ${view.label}`);

    const steps = $('steps');
    const data = stepsData(run, sel.view, sel.query);
    if (data) renderSteps(steps, data);
    else {
      steps.replaceChildren(
        el('p', {
          class: 'error inline',
          text: 'The engine returned no intermediates (the returnIntermediates option), so the four steps cannot be shown with its numbers.',
        }),
      );
    }
  }

  return {
    /** Draws everything for a run (null: hides the views) and the current selection. */
    render(run, sel, ui, tokens) {
      renderTokens(tokens, tokenLimit);
      renderSelf(run, sel, ui);
      renderHeads(run, sel, ui);
      renderQuery(run, sel);
    },
    /** Redraws the selection-dependent parts only (heatmap outlines, bars, steps). */
    select(run, sel, ui) {
      for (const canvas of maps.keys()) drawMap(canvas, sel, ui);
      renderQuery(run, sel);
    },
    drawMap,
    mapOf: (canvas) => maps.get(canvas) ?? null,
    mapByKey: (key) => [...maps.entries()].find(([, m]) => m.key === key)?.[0] ?? null,
    /** The drawn weights as plain arrays: { self, heads: [...], average, bars } (for tests and the console). */
    shown() {
      const out = { self: null, heads: [], average: null, bars: null };
      for (const m of maps.values()) {
        const w = Array.from(m.matrix);
        if (m.key === 'self') out.self = w;
        else if (m.key === 'average') out.average = w;
        else out.heads[Number(m.key.slice(5))] = w;
      }
      const bars = $('row-bars').weights;
      out.bars = bars ? Array.from(bars) : null;
      out.domains = Object.fromEntries([...maps.values()].map((m) => [m.key, m.domain]));
      return out;
    },
  };
}
