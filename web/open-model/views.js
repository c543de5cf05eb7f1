// The opened model's attention drawn with the package's views (wasm-attention/viz), the same
// ones the poem tab uses: createModelView for every layer × head, createHeatmap for the picked
// head, createHeadView for its layer. Knows nothing of workers or the engine: it takes a run's
// shown attention (open-model-run.js's shownAttention) and draws it.
// The views are imported when the first run is drawn: the tab's loading works (and says what
// failed) even where they cannot load, and a page that never opens a model never fetches them.
export const VIZ_URL = new URL('../../viz/index.mjs', import.meta.url);

let viz = null; // a Promise of the module at VIZ_URL
const views = () => (viz ??= import(VIZ_URL.href));

/**
 * @param {{ modelView: HTMLElement, heatmap: HTMLElement, headView: HTMLElement, title: HTMLElement }} where
 * @param {(pick: { layer: number, head: number }) => void} onSelect   a thumbnail was chosen
 */
export function createOpenModelViews(where, onSelect) {
  let model = null;
  let heatmap = null;
  let headView = null;
  let pick = { layer: 0, head: 0 };
  let shownHead = null; // what the heatmap was given: { layer, head, weights, tokens }
  let highlight = -1; // the query row marked in every map (a token pointed at)
  let epoch = 0; // clear() counts up: a draw that waited for the views across it draws nothing

  const headWeights = (shown, layer, head) =>
    shown.attention[layer].subarray(head * shown.n * shown.n, (head + 1) * shown.n * shown.n);

  function drawHead({ createHeatmap, createHeadView }, shown, causal) {
    const { layer, head } = pick;
    // counted from 1, as the poem tab counts them (the views are told numberFrom: 1; picks stay 0-based)
    where.title.textContent = `Layer ${layer + 1}, head ${head + 1}: weights, query (row) → key (column)`;
    const map = {
      weights: headWeights(shown, layer, head),
      queryTokens: shown.tokens,
      causal,
      numberFrom: 1,
      highlightRow: highlight,
      // the query row under the pointer is marked in every thumbnail too
      onHover: (cell) => model?.update({ highlightRow: cell ? cell.query : -1 }),
    };
    shownHead = { layer, head, weights: map.weights, tokens: shown.tokens };
    if (heatmap) heatmap.update(map);
    else heatmap = createHeatmap(where.heatmap, map);
    const lines = { attention: shown.attention, tokens: shown.tokens, layer, numberFrom: 1 };
    if (headView) headView.update(lines);
    else headView = createHeadView(where.headView, lines);
  }

  let last = null;
  return {
    /**
     * Draws (or redraws) everything for the run's rows now in; resolves to the milliseconds the drawing
     * took, rejects when the views cannot load.
     * @param {{ n, attention, tokens }} shown   per layer [heads, n, n]
     * @param {{ numKvHeads: number, causal: boolean }} config
     */
    async draw(shown, config) {
      const asked = epoch;
      const v = await views();
      if (asked !== epoch) return 0;
      last = { v, shown, config };
      if (shown.n === 0) return 0;
      const start = performance.now();
      const data = {
        attention: shown.attention,
        tokens: shown.tokens,
        numKvHeads: config.numKvHeads,
        selected: pick,
        highlightRow: highlight,
      };
      if (model) model.update(data);
      else
        model = v.createModelView(where.modelView, {
          ...data,
          numberFrom: 1,
          onSelect: (p) => {
            pick = { layer: p.layer, head: p.head };
            model.update({ selected: pick });
            if (last) drawHead(last.v, last.shown, last.config.causal);
            onSelect(pick);
          },
        });
      drawHead(v, shown, config.causal);
      return performance.now() - start;
    },
    get pick() {
      return pick;
    },
    /** The picked head as the heatmap has it (tests compare it with the run's rows). */
    get head() {
      return shownHead;
    },
    /** Marks query row `row` in every map (−1: none), e.g. while its token is pointed at. */
    highlight(row) {
      highlight = row;
      model?.update({ highlightRow: row });
      heatmap?.update({ highlightRow: row });
    },
    /** Removes every view (a new model was opened). */
    clear() {
      for (const v of [model, heatmap, headView]) v?.dispose();
      model = heatmap = headView = null;
      pick = { layer: 0, head: 0 };
      last = null;
      shownHead = null;
      highlight = -1;
      epoch++;
    },
  };
}
