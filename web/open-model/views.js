// The opened model's attention drawn with the package's views (wasm-attention/viz), the same
// ones the poem tab uses: createModelView for every layer × head, createHeatmap for the picked
// head, createHeadView for its layer. Knows nothing of workers or the engine: it takes a run's
// shown attention (run.js's shownAttention) and draws it.
// The views are imported when the first run is drawn: the tab's loading works (and says what
// failed) even where they cannot load, and a page that never opens a model never fetches them.
export const VIZ_URL = new URL('../../viz/index.mjs', import.meta.url);

let viz = null; // a Promise of the module at VIZ_URL
const views = () => (viz ??= import(VIZ_URL.href));

const headWeights = (shown, layer, head) =>
  shown.attention[layer].subarray(head * shown.n * shown.n, (head + 1) * shown.n * shown.n);

class OpenModelViews {
  #where;
  #onSelect;
  #model = null;
  #heatmap = null;
  #headView = null;
  #pick = { layer: 0, head: 0 };
  #shownHead = null; // what the heatmap was given: { layer, head, weights, tokens }
  #highlight = -1; // the query row marked in every map (a token pointed at)
  #epoch = 0; // clear() counts up: a draw that waited for the views across it draws nothing
  #last = null; // the last draw's { v, shown, config }, for a thumbnail chosen later

  constructor(where, onSelect) {
    this.#where = where;
    this.#onSelect = onSelect;
  }

  /**
   * Draws (or redraws) everything for the run's rows now in; resolves to the milliseconds the drawing
   * took, rejects when the views cannot load.
   * @param {{ n, attention, tokens }} shown   per layer [heads, n, n]
   * @param {{ numKvHeads: number, causal: boolean }} config
   */
  async draw(shown, config) {
    const asked = this.#epoch;
    const v = await views();
    if (asked !== this.#epoch) return 0;
    this.#last = { v, shown, config };
    if (shown.n === 0) return 0;
    const start = performance.now();
    const data = {
      attention: shown.attention,
      tokens: shown.tokens,
      numKvHeads: config.numKvHeads,
      selected: this.#pick,
      highlightRow: this.#highlight,
    };
    if (this.#model) this.#model.update(data);
    else
      this.#model = v.createModelView(this.#where.modelView, {
        ...data,
        numberFrom: 1,
        onSelect: (p) => this.#select(p),
      });
    this.#drawHead(v, shown, config.causal);
    return performance.now() - start;
  }

  get pick() {
    return this.#pick;
  }

  /** The picked head as the heatmap has it (tests compare it with the run's rows). */
  get head() {
    return this.#shownHead;
  }

  /** Marks query row `row` in every map (−1: none), e.g. while its token is pointed at. */
  highlight(row) {
    this.#highlight = row;
    this.#model?.update({ highlightRow: row });
    this.#heatmap?.update({ highlightRow: row });
  }

  /** Removes every view (a new model was opened). */
  clear() {
    for (const v of [this.#model, this.#heatmap, this.#headView]) v?.dispose();
    this.#model = this.#heatmap = this.#headView = null;
    this.#pick = { layer: 0, head: 0 };
    this.#last = null;
    this.#shownHead = null;
    this.#highlight = -1;
    this.#epoch++;
  }

  /** A thumbnail chosen: its head opened below. */
  #select(p) {
    this.#pick = { layer: p.layer, head: p.head };
    this.#model.update({ selected: this.#pick });
    const last = this.#last;
    if (last) this.#drawHead(last.v, last.shown, last.config.causal);
    this.#onSelect(this.#pick);
  }

  #drawHead({ createHeatmap, createHeadView }, shown, causal) {
    const { layer, head } = this.#pick;
    // counted from 1, as the poem tab counts them (the views are told numberFrom: 1; picks stay 0-based)
    this.#where.title.textContent = `Layer ${layer + 1}, head ${head + 1}: weights, query (row) → key (column)`;
    const map = {
      weights: headWeights(shown, layer, head),
      queryTokens: shown.tokens,
      causal,
      numberFrom: 1,
      highlightRow: this.#highlight,
      // the query row under the pointer is marked in every thumbnail too
      onHover: (cell) => this.#model?.update({ highlightRow: cell ? cell.query : -1 }),
    };
    this.#shownHead = { layer, head, weights: map.weights, tokens: shown.tokens };
    if (this.#heatmap) this.#heatmap.update(map);
    else this.#heatmap = createHeatmap(this.#where.heatmap, map);
    const lines = { attention: shown.attention, tokens: shown.tokens, layer, numberFrom: 1 };
    if (this.#headView) this.#headView.update(lines);
    else this.#headView = createHeadView(this.#where.headView, lines);
  }
}

/**
 * @param {{ modelView: HTMLElement, heatmap: HTMLElement, headView: HTMLElement, title: HTMLElement }} where
 * @param {(pick: { layer: number, head: number }) => void} onSelect   a thumbnail was chosen
 */
export function createOpenModelViews(where, onSelect) {
  return new OpenModelViews(where, onSelect);
}
