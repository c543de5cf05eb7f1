// The model tab's events as changes of its state: the prompt and decoding fields, hover, a picked
// token or query row, the opened head, and the large map's keyboard cursor (the map reads its cell
// out itself, in its own live line). controls.js calls these; poem.js holds the state they change.
import { readPoemSettings } from './settings.js';
import { renderTopTokens } from './view.js';
import { moveCell } from '../shared/cursor-moves.js';

const $ = (id) => document.getElementById(id);

/** The form's handlers: the prompt, the decoding and sampling fields, Generate and Stop. */
function formHandlers({ s, generation }) {
  const { begin, samplingChanged, promptEdited } = generation;
  return {
    promptChanged: () => {
      if (s.model) promptEdited();
    },
    decodingChanged() {
      const greedy = readPoemSettings($('poem-controls')).greedy;
      for (const name of ['poem-temperature', 'poem-top-k', 'poem-seed'])
        $('poem-controls').elements[name].disabled = greedy;
      samplingChanged();
    },
    samplingChanged,
    generate: () => {
      if (s.model) begin(true);
    },
    stop: () => {
      if (s.generating) s.worker.stop(s.generating);
    },
  };
}

/** The large map's keyboard: its cursor follows the keys, Enter or Space picks its row. */
function cursorHandlers({ s, redrawMaps }, pickQuery) {
  return {
    key(key) {
      if (!s.run) return;
      const cursor = s.ui.cursor ?? { i: s.ui.query, j: 0 };
      if (key === 'Enter' || key === ' ') {
        pickQuery(cursor.i);
      } else {
        s.ui = { ...s.ui, cursor: moveCell(cursor, key, s.run.n) ?? cursor };
        redrawMaps();
      }
    },
    focusLarge(focused) {
      s.ui = { ...s.ui, cursor: focused ? { i: Math.min(s.ui.query, (s.run?.n ?? 1) - 1), j: 0 } : null };
      redrawMaps();
    },
  };
}

/**
 * @param {{ renderChips(), s, view, scheduleDraw(), redrawMaps(), generation }} ctx
 *   generation: generation.js's { begin(generating), askSteps(), samplingChanged(), promptEdited() }
 * @returns {object} the handlers bindPoemControls takes
 */
export function poemHandlers(ctx) {
  const { renderChips, s, view, scheduleDraw, redrawMaps, generation } = ctx;
  const { askSteps } = generation;
  function pickQuery(i) {
    s.ui = {
      ...s.ui,
      query: i,
      followLatest: s.run ? i === s.run.n - 1 : true,
      cursor: s.ui.cursor && { ...s.ui.cursor, i },
    };
    redrawMaps();
    askSteps();
  }

  return {
    ...formHandlers(ctx),
    hover(i) {
      if (i === s.ui.highlight) return;
      s.ui = { ...s.ui, highlight: i };
      redrawMaps();
    },
    pickToken(i) {
      s.picked = i;
      pickQuery(i);
      if (s.run) renderChips();
      if (s.run) renderTopTokens(s.run, i, { greedy: readPoemSettings($('poem-controls')).greedy });
    },
    openHead(layer, head) {
      s.ui = { ...s.ui, open: { layer, head } };
      scheduleDraw();
      askSteps();
      requestAnimationFrame(() => $('head-section').scrollIntoView({ block: 'nearest' }));
    },
    pickQuery,
    mapOf: (canvas) => view.mapOf(canvas),
    ...cursorHandlers(ctx, pickQuery),
  };
}
