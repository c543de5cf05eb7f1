// The page's views of one run: token chips, the heatmaps (wasm-attention/viz's createHeatmap) with
// their captions, the picked query's bars and its four steps. Draws what it is given; knows nothing
// of the engine (the numbers come in a run, see textbook-run.js) and keeps the weights it draws in
// memory only (never in DOM attributes: 128 tokens × 64 heads would be megabytes of text).
import { createHeatmap, weightRGB } from '../../viz/index.mjs';
import { drawBars } from '../shared/bars.js';
import { renderSteps } from '../shared/steps.js';
import { groupOf, maskedCells, matrixOf, scaleOf, stepsData, viewsOf } from './run.js';
import { el } from '../shared/dom.js';

const MAX_CHIPS = 40; // token chips shown before the rest collapse into one "+ N more"

const $ = (id) => document.getElementById(id);

/** Content width of an element (its box minus padding), for fitting maps on narrow screens. */
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

/** What a legend line says of a view's bars: their axis, and the maps' one colour scale. */
const barScale = (max, what) =>
  `Colours: weight 0 (dark purple) … 1 (yellow) on the maps' square-root scale, the same in the bars and steps below. ` +
  `The bars' axis runs 0 … ${max.toPrecision(3)}, the largest weight of ${what}.`;

/**
 * @param {{ tokenLimit: number, onPick(key: string, query: number), onCursor(cell), onHover?() }} o
 *   onPick: a click or tap on a cell, or Enter on a map's cursor (its query row is followed below)
 *   onCursor: a key moved a map's keyboard cursor to cell { i, j }
 * @returns {{ render(run, sel, ui), select(run, sel, ui), setCursor(canvas, cell), mapOf(canvas), mapByKey(key), shown() }}
 */
export function createViews({ tokenLimit, onPick, onCursor }) {
  const maps = new Map(); // canvas → { key, label, matrix, domain, n, view }

  const options = (meta, run, sel) => ({
    weights: meta.matrix,
    queryTokens: run.tokens,
    causal: Boolean(run.settings.isCausal),
    highlightRow: sel.view === meta.key ? sel.query : -1,
  });

  /** A map of `key` in `host` (made once per host; later runs update it, so its canvas keeps the focus). */
  function placeMap(host, run, sel, key, label, { height, testId, head, small = false }) {
    const old = [...maps.entries()].find(([, m]) => m.host === host);
    const meta = {
      key,
      label,
      host,
      matrix: matrixOf(run, key),
      domain: scaleOf(run, groupOf(key)).domain,
      n: run.n,
      view: old?.[1].view ?? null,
    };
    if (old) maps.delete(old[0]);
    if (meta.view) {
      meta.view.update({ ...options(meta, run, sel), height, title: label });
    } else {
      meta.view = createHeatmap(host, {
        ...options(meta, run, sel),
        title: label,
        height,
        numberFrom: 1,
        onSelect: ({ query }) => onPick(meta.key, query),
        onCursor: ({ query, key: j }) => onCursor({ i: query, j }),
        // A scale bar and three buttons on every small map of a grid (up to 64 heads) crowd it; the
        // caption under the grid says the scale once, and the keys and Ctrl + wheel still zoom.
        legend: !small,
        controls: !small,
      });
    }
    const canvas = host.querySelector('canvas[data-layout]');
    canvas.dataset.testid = testId;
    canvas.dataset.key = key;
    if (head !== undefined) canvas.dataset.head = String(head);
    maps.set(canvas, meta);
    return canvas;
  }

  function dropMap(host) {
    for (const [canvas, m] of maps) {
      if (m.host !== host) continue;
      m.view.dispose();
      maps.delete(canvas);
    }
  }

  const mapByKey = (key) => [...maps.entries()].find(([, m]) => m.key === key)?.[0] ?? null;

  /** Puts a map's keyboard cursor (read out under it) on cell { i, j }. */
  function setCursor(canvas, cell) {
    const meta = canvas && maps.get(canvas);
    if (meta) meta.view.update({ cursor: { query: cell.i, key: cell.j } });
  }

  function renderSelf(run, sel) {
    const section = $('self-section');
    const host = $('self-map');
    section.hidden = !run?.results.self;
    if (section.hidden) return dropMap(host);
    const s = run.settings;
    const width = innerWidth(section);
    host.style.width = `${Math.min(520, width)}px`;
    placeMap(host, run, sel, 'self', 'single head', { height: Math.min(400, width - 70), testId: 'heatmap-self' });
    $('self-legend').textContent = barScale(scaleOf(run, 'self').domain[1], 'the single head');
    $('self-caption').textContent =
      `Every token's embedding x (d_model = ${s.dModel}) is projected to a query q = x·W_Qᵀ, a key k = x·W_Kᵀ and a value v = x·W_Vᵀ. ` +
      `Row i shows where query token i looks: its scores q·kⱼ against every key are scaled by 1/√d_k = 1/√${s.dModel}, ` +
      `softmax turns them into weights that sum to 1 across the row, and the token's output is the weighted sum of the values. ` +
      `Bright = much attention.` +
      (s.isCausal
        ? ' Hatched grey cells are masked by the causal mask: a token may not look at later tokens, so their weight is exactly 0.'
        : '') +
      ' Hover a cell (or focus the map and use the arrow keys) to read its weight under the map; click a cell (or press Enter) to follow that query below.';
  }

  function renderHeads(run, sel) {
    const section = $('mha-section');
    const box = $('mha-maps');
    const ok = Boolean(run?.results.mhaHeads && run.results.mhaAverage);
    section.hidden = !ok;
    const s = run?.settings;
    const H = s?.numHeads;
    // The same grid again (a new selection, same heads): keep the maps, so focus stays.
    const same = ok && box.dataset.heads === String(H) && box.children.length === H + 1;
    if (!same) {
      for (const host of box.querySelectorAll('.map-box')) dropMap(host);
      box.replaceChildren();
      delete box.dataset.heads;
    }
    if (!ok) return;
    const headDim = s.dModel / H;
    const width = innerWidth(section);
    const side = Math.min(H <= 4 ? 240 : H <= 8 ? 200 : 150, width - 60);
    if (!same) {
      // Each map's title (in its bar and its accessible name) says what it is: no caption beside it.
      const figure = (attrs) => el('figure', { class: 'map', ...attrs }, el('div', { class: 'map-box' }));
      const figures = Array.from({ length: H }, (_, h) => figure({ 'data-view': 'head', 'data-head': String(h) }));
      figures.push(figure({ 'data-view': 'average' }));
      box.replaceChildren(...figures);
      box.dataset.heads = String(H);
    }
    box.querySelectorAll('.map-box').forEach((host, k) => {
      host.style.width = `${Math.min(width, side + 110)}px`; // room for the row labels beside the grid
      if (k < H) {
        const label = `head ${k + 1} · dims ${k * headDim}–${(k + 1) * headDim - 1}`;
        placeMap(host, run, sel, `head:${k}`, label, { height: side, testId: 'heatmap-head', head: k, small: true });
      } else {
        placeMap(host, run, sel, 'average', `average of the ${H} heads`, {
          height: side,
          testId: 'heatmap-average',
          small: true,
        });
      }
    });
    $('mha-legend').textContent = barScale(scaleOf(run, 'mha').domain[1], 'every head and their average');
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
      colour: weightRGB,
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
      renderSelf(run, sel);
      renderHeads(run, sel);
      renderQuery(run, sel);
      if (ui.focused) setCursor(mapByKey(ui.focused), sel.cell);
    },
    /** Redraws the selection-dependent parts only (the picked row in the maps, bars, steps). */
    select(run, sel) {
      for (const m of maps.values()) m.view.update({ highlightRow: sel.view === m.key ? sel.query : -1 });
      renderQuery(run, sel);
    },
    setCursor,
    mapOf: (canvas) => maps.get(canvas) ?? null,
    mapByKey,
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
