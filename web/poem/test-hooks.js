// What the browser tests read of the model tab (and a reader in the console): window.__poem, a
// read-only window on the tab's state.
import { matrixOf } from './run.js';

/** The run as the tests see it: its tokens, candidates and timings, not its attention buffers. */
function runView(r) {
  return (
    r && {
      id: r.id,
      n: r.n,
      promptLength: r.promptLength,
      ids: r.ids,
      texts: r.texts,
      done: r.done,
      reason: r.reason,
      top: r.top,
      tokenMs: r.tokenMs,
      temperature: r.temperature,
      drawnAt: r.drawnAt,
    }
  );
}

/**
 * @param {object} s   the tab's state (state.js)
 * @param {() => number} tourStep   the guided tour's step (-1: none running)
 */
export function createTestHooks(s, tourStep) {
  return {
    state: 'loading',
    tokenCounts: [], // the number of generated tokens shown after each drawn frame
    stepsShown: null, // { layer, head, query } of the steps on screen
    done: null, // reason of the last finished run
    get run() {
      return runView(s.run);
    },
    get ui() {
      return s.ui;
    },
    /** heads.json's heads as badged, and the recited segments of the run on screen. */
    get heads() {
      return s.heads;
    },
    get recited() {
      return s.segments;
    },
    tourStep,
    /** Head h of layer l as drawn: [n × n] weights. */
    matrix: (l, h) => (s.run ? Array.from(matrixOf(s.run, l, h)) : null),
    idle: () =>
      new Promise((resolve) => {
        const check = () => (s.generating ? setTimeout(check, 20) : resolve());
        check();
      }),
  };
}
