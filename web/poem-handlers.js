// The model tab's events as changes of its state: the prompt and decoding fields, hover, a picked
// token or query row, the opened head, and the large map's pointer and keyboard cursor with their
// readout. poem-controls.js calls these; poem.js holds the state they change.
import { readPoemSettings } from './poem-settings.js';
import { labelsOf } from './poem-run.js';
import { renderTopTokens } from './poem-view.js';
import { moveCell } from './selection.js';
import { formatWeight, hideTooltip, showTooltip } from './tooltip.js';
import { isKeyMasked } from '../lib/attention-rules.mjs';

const $ = (id) => document.getElementById(id);

/**
 * @param {{ renderChips(), engine, s, view, scheduleDraw(), redrawMaps(), generation }} ctx
 *   generation: poem-generation.js's { begin(generating), askSteps(), samplingChanged(), promptEdited() }
 * @returns {object} the handlers bindPoemControls takes
 */
export function poemHandlers({ renderChips, engine, s, view, scheduleDraw, redrawMaps, generation }) {
  const { begin, askSteps, samplingChanged, promptEdited } = generation;
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

  function cellInfo(meta, { i, j }) {
    const labels = labelsOf(s.run);
    return {
      i,
      j,
      query: labels[i],
      key: labels[j],
      weight: j >= 0 ? meta.matrix[i * meta.n + j] : undefined,
      masked: isKeyMasked(s.run.mask, i, j),
      label: `layer ${meta.layer + 1}, head ${meta.head + 1}`,
    };
  }

  function showCell() {
    const meta = view.mapOf($('head-map'));
    const { i, j } = s.ui.cursor;
    const r = $('head-map').getBoundingClientRect();
    const at = {
      x: r.left + meta.layout.x0 + (j + 1) * meta.layout.cellWidth,
      y: r.top + meta.layout.y0 + (i + 1) * meta.layout.cellHeight,
    };
    const hit = cellInfo(meta, { i, j });
    showTooltip($('tooltip'), at, hit);
    $('map-readout').textContent =
      `${hit.label}: query ${hit.query} #${i + 1}, key ${hit.key} #${j + 1}, weight ${hit.masked ? '0 (masked)' : formatWeight(hit.weight)}`;
  }

  const handlers = {
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
      if (s.generating) engine.model.stop(s.generating);
    },
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
    pointAt(cell, at) {
      if (!cell || !s.run) return hideTooltip($('tooltip'));
      showTooltip($('tooltip'), at, cellInfo(view.mapOf($('head-map')), cell));
    },
    key(key) {
      if (!s.run) return;
      const cursor = s.ui.cursor ?? { i: s.ui.query, j: 0 };
      if (key === 'Enter' || key === ' ') {
        pickQuery(cursor.i);
      } else {
        s.ui = { ...s.ui, cursor: moveCell(cursor, key, s.run.n) ?? cursor };
        redrawMaps();
      }
      showCell();
    },
    focusLarge(focused) {
      s.ui = { ...s.ui, cursor: focused ? { i: Math.min(s.ui.query, (s.run?.n ?? 1) - 1), j: 0 } : null };
      redrawMaps();
      if (focused && s.run) showCell();
      else hideTooltip($('tooltip'));
    },
  };
  return handlers;
}
