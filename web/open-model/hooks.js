// What the browser tests read of the "Open a model" tab (window.__openModel): its state, the
// error lines, the opened model's config, files and memory, the picked head, and copies of the
// run's data, so a test never holds the buffers the tab keeps drawing from.
import { shownAttention } from './run.js';

/** A copy of a run's tokens and outcome as the tests compare them. */
function copyOfRun(r) {
  return (
    r && {
      id: r.id,
      ids: r.ids.slice(),
      labels: r.labels.slice(),
      promptLength: r.promptLength,
      newIds: r.ids.slice(r.promptLength),
      rows: r.rows,
      text: r.text,
      done: r.done,
      reason: r.reason,
      predictions: r.predictions,
    }
  );
}

/**
 * The tab writes the plain fields as it goes; the getters read its run and views when asked.
 * @param {{ run: object | null, views: { head: object | null } }} tab
 */
export function createTestHooks(tab) {
  return {
    state: 'idle', // idle | starting | loading | ready | failed | cancelled | closing
    loads: 0, // attempts to open a model that have ended (opened, refused, failed or cancelled)
    error: null, // the error box's text
    runError: null,
    config: null,
    files: null,
    memory: null,
    pick: { layer: 0, head: 0 },
    get run() {
      return copyOfRun(tab.run);
    },
    /** The picked head as the heatmap was given it: { layer, head, weights: number[], tokens }. */
    get head() {
      const h = tab.views.head;
      return h && { layer: h.layer, head: h.head, weights: Array.from(h.weights), tokens: h.tokens };
    },
    /** The weights of one head in the run's rows: [n, n]. */
    matrix(layer, head) {
      const shown = shownAttention(tab.run);
      return Array.from(shown.attention[layer].subarray(head * shown.n * shown.n, (head + 1) * shown.n * shown.n));
    },
  };
}
