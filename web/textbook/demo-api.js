// What the browser tests (and a curious reader, in the console) inspect as window.__demo: the
// textbook tab's last computation, its selection and drawn weights, and a way to recompute.
import { serialize } from '../shared/serialize.js';

/**
 * @param {{ compute(), requests, selection, views }} tab   the textbook tab (textbook.js), read live
 */
export function createDemoApi(tab) {
  const demo = {
    ready: false,
    computeCount: 0,
    info: null,
    // The last computation, with or without results: { settings, tokens, args, results, errors, timing }.
    last: null,
    recompute: () => tab.compute(),
    get busy() {
      return tab.requests?.busy ?? false;
    },
    get selection() {
      return tab.selection;
    },
    settled: () => (tab.requests ? tab.requests.settled() : Promise.resolve()),
    /** The weights the views draw (kept in memory, not in the DOM). */
    shown: () => tab.views.shown(),
    serialize: () => serialize(demo.last),
    serializeArgs: () => serialize(demo.last?.args ?? null),
    lastPNG: null,
  };
  return demo;
}
