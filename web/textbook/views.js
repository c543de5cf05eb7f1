// The page's views of one run: token chips, the heatmaps (wasm-attention/viz's createHeatmap) with
// their captions, the picked query's bars and its four steps, each drawn by its own module. Draws
// what it is given; knows nothing of the engine (the numbers come in a run, see run.js) and keeps
// the weights it draws in memory only (see heatmaps.js).
import { Heatmaps } from './heatmaps.js';
import { renderHeads } from './heads-view.js';
import { renderQuery } from './query-view.js';
import { renderSelf } from './self-view.js';
import { renderTokens } from './token-chips.js';

/**
 * @param {{ tokenLimit: number, onPick(key: string, query: number), onCursor(cell), onHover?() }} o
 *   onPick: a click or tap on a cell, or Enter on a map's cursor (its query row is followed below)
 *   onCursor: a key moved a map's keyboard cursor to cell { i, j }
 * @returns {{ render(run, sel, ui), select(run, sel, ui), setCursor(canvas, cell), mapOf(canvas), mapByKey(key), shown() }}
 */
export function createViews({ tokenLimit, onPick, onCursor }) {
  const maps = new Heatmaps({ onPick, onCursor });
  return {
    /** Draws everything for a run (null: hides the views) and the current selection. */
    render(run, sel, ui, tokens) {
      renderTokens(tokens, tokenLimit);
      renderSelf(maps, run, sel);
      renderHeads(maps, run, sel);
      renderQuery(run, sel);
      if (ui.focused) maps.setCursor(maps.byKey(ui.focused), sel.cell);
    },
    /** Redraws the selection-dependent parts only (the picked row in the maps, bars, steps). */
    select(run, sel) {
      maps.highlight(sel);
      renderQuery(run, sel);
    },
    /** Puts a map's keyboard cursor (read out under it) on cell { i, j }. */
    setCursor: (canvas, cell) => maps.setCursor(canvas, cell),
    mapOf: (canvas) => maps.of(canvas),
    mapByKey: (key) => maps.byKey(key),
    /** The drawn weights as plain arrays: { self, heads: [...], average, bars } (for tests and the console). */
    shown() {
      const out = { ...maps.weights(), bars: null };
      const bars = document.getElementById('row-bars').weights;
      out.bars = bars ? Array.from(bars) : null;
      out.domains = maps.domains();
      return out;
    },
  };
}
