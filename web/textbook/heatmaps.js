// The textbook tab's heatmaps (wasm-attention/viz's createHeatmap), by canvas: each map's view
// key, title, weights and colour domain. A map is made once per host element and updated by later
// runs, so its canvas keeps the keyboard focus. The weights stay in memory, never in DOM
// attributes (128 tokens × 64 heads would be megabytes of text).
import { createHeatmap } from '../../viz/index.mjs';
import { groupOf, matrixOf, scaleOf } from './run.js';

/** The heatmap options that follow the run and the selection. */
const options = (meta, run, sel) => ({
  weights: meta.matrix,
  queryTokens: run.tokens,
  causal: Boolean(run.settings.isCausal),
  highlightRow: sel.view === meta.key ? sel.query : -1,
});

export class Heatmaps {
  /**
   * @param {{ onPick(key: string, query: number), onCursor(cell) }} o
   *   onPick: a click or tap on a cell, or Enter on a map's cursor
   *   onCursor: a key moved a map's keyboard cursor to cell { i, j }
   */
  constructor({ onPick, onCursor }) {
    this.maps = new Map(); // canvas → { key, label, host, matrix, domain, n, view }
    this.onPick = onPick;
    this.onCursor = onCursor;
  }

  /** The map of view `key` in `host`, titled `label`, drawn for the run and selection; → its canvas. */
  place(host, run, sel, key, label, { height, testId, head, small = false }) {
    const old = [...this.maps.entries()].find(([, m]) => m.host === host);
    const meta = {
      key,
      label,
      host,
      matrix: matrixOf(run, key),
      domain: scaleOf(run, groupOf(key)).domain,
      n: run.n,
      view: old?.[1].view ?? null,
    };
    if (old) this.maps.delete(old[0]);
    if (meta.view) meta.view.update({ ...options(meta, run, sel), height, title: label });
    else meta.view = this.create(host, meta, run, sel, { height, small });
    const canvas = host.querySelector('canvas[data-layout]');
    canvas.dataset.testid = testId;
    canvas.dataset.key = key;
    if (head !== undefined) canvas.dataset.head = String(head);
    this.maps.set(canvas, meta);
    return canvas;
  }

  create(host, meta, run, sel, { height, small }) {
    return createHeatmap(host, {
      ...options(meta, run, sel),
      title: meta.label,
      height,
      numberFrom: 1,
      onSelect: ({ query }) => this.onPick(meta.key, query),
      onCursor: ({ query, key: j }) => this.onCursor({ i: query, j }),
      // A scale bar and three buttons on every small map of a grid (up to 64 heads) crowd it; the
      // caption under the grid says the scale once, and the keys and Ctrl + wheel still zoom.
      legend: !small,
      controls: !small,
    });
  }

  /** Disposes of the map in `host`, if there is one. */
  drop(host) {
    for (const [canvas, m] of this.maps) {
      if (m.host !== host) continue;
      m.view.dispose();
      this.maps.delete(canvas);
    }
  }

  of(canvas) {
    return this.maps.get(canvas) ?? null;
  }

  byKey(key) {
    return [...this.maps.entries()].find(([, m]) => m.key === key)?.[0] ?? null;
  }

  /** Puts a map's keyboard cursor (read out under it) on cell { i, j }. */
  setCursor(canvas, cell) {
    const meta = canvas && this.maps.get(canvas);
    if (meta) meta.view.update({ cursor: { query: cell.i, key: cell.j } });
  }

  /** Marks the selected query's row in the selected view's map, and no row in the others. */
  highlight(sel) {
    for (const m of this.maps.values()) m.view.update({ highlightRow: sel.view === m.key ? sel.query : -1 });
  }

  /** The drawn weights as plain arrays: { self, heads: [...], average }. */
  weights() {
    const out = { self: null, heads: [], average: null };
    for (const m of this.maps.values()) {
      const w = Array.from(m.matrix);
      if (m.key === 'self') out.self = w;
      else if (m.key === 'average') out.average = w;
      else out.heads[Number(m.key.slice(5))] = w;
    }
    return out;
  }

  /** Each drawn view's colour domain, by key. */
  domains() {
    return Object.fromEntries([...this.maps.values()].map((m) => [m.key, m.domain]));
  }
}
