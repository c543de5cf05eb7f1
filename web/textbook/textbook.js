// The textbook tab: its state (the last run, the selection, which heatmap has focus) and the
// flow controls → settings → engine (in its worker) → views. The engine client comes from
// main.js (only main.js starts the engine), as for poem.js.
import { tokenize } from './tokenize.js';
import { LIMITS, readSettings, settingsProblems } from './settings.js';
import { createInputBuilder, engineGroups } from './inputs.js';
import { createRequests } from './requests.js';
import { fitSelection, initialSelection, pickQuery } from './selection.js';
import { createViews } from './views.js';
import { bindControls } from './controls.js';
import { describeError, showEngine, showErrors } from '../shared/status.js';
import { exportDocument, exportPanels } from './export.js';
import { downloadJSON, downloadPNG } from '../shared/export-files.js';
import { serialize } from '../shared/serialize.js';

const $ = (id) => document.getElementById(id);

/**
 * @returns {{ demo: object, bind(), connect(engine), show() }}
 *   demo: what the browser tests (and a curious reader, in the console) inspect as window.__demo
 *   bind(): listens to the controls (before the engine is there: nothing is computed until connect)
 *   connect(engine): engine.js's client is there; show(): the tab was opened
 */
export function createTextbook() {
  const page = {
    engine: null, // { info, note, run(groups) } of engine.js
    requests: null, // requests.js queue
    run: null, // the last computation that produced weights: { settings, tokens, n, results }
    selection: initialSelection(),
    focused: null, // key of the heatmap with keyboard focus
    timer: 0,
  };
  const buildArgs = createInputBuilder();
  const views = createViews({
    tokenLimit: LIMITS.tokens,
    onPick: (key, i) => select(pickQuery(page.selection, key, i)),
    // The map moved its cursor itself: only remembered, so a later render puts it back there.
    onCursor: (cell) => {
      page.selection = { ...page.selection, cell };
    },
  });
  const ui = () => ({ run: page.run, focused: page.focused });

  const demo = {
    ready: false,
    computeCount: 0,
    info: null,
    // The last computation, with or without results: { settings, tokens, args, results, errors, timing }.
    last: null,
    recompute: () => compute(),
    get busy() {
      return page.requests?.busy ?? false;
    },
    get selection() {
      return page.selection;
    },
    settled: () => (page.requests ? page.requests.settled() : Promise.resolve()),
    /** The weights the views draw (kept in memory, not in the DOM). */
    shown: () => views.shown(),
    serialize: () => serialize(demo.last),
    serializeArgs: () => serialize(demo.last?.args ?? null),
    lastPNG: null,
  };

  // ---------- computing ----------

  function schedule(delay) {
    clearTimeout(page.timer);
    page.timer = setTimeout(compute, delay);
  }

  function compute() {
    clearTimeout(page.timer);
    if (!page.engine) return;
    const t0 = performance.now();
    const settings = readSettings($('controls'));
    const tokens = tokenize(settings.text, settings.mode);
    const problems = settingsProblems(settings, tokens);
    const last = { settings, tokens, args: null, results: null, errors: problems };
    if (problems.length) {
      page.requests.refuse();
      finish(last, t0, 0);
      return;
    }
    last.args = buildArgs(settings, tokens);
    page.requests.request(engineGroups(last.args), (reply, error) => {
      if (error) {
        last.errors = [describeError('The engine', error)];
      } else {
        last.results = {
          self: reply.results.self,
          mhaHeads: reply.results.mhaHeads,
          mhaAverage: reply.results.mhaAverage,
        };
        last.errors = reply.errors.map(({ label, error: e }) => describeError(label, e));
      }
      finish(last, t0, reply ? reply.engineMs : 0);
    });
  }

  function finish(last, t0, engineMs) {
    const r = last.results;
    page.run =
      r && (r.self || r.mhaHeads)
        ? { settings: last.settings, tokens: last.tokens, n: last.tokens.length, results: r }
        : null;
    page.selection = fitSelection(page.selection, page.run);
    views.render(page.run, page.selection, ui(), last.tokens);
    showErrors($('error'), last.errors);
    last.timing = { engineMs, totalMs: performance.now() - t0 };
    if (r) showEngine($('engine'), page.engine.info, page.engine.note, last.timing);
    demo.last = last;
    demo.computeCount += 1;
    document.body.dataset.computeCount = String(demo.computeCount);
  }

  // ---------- selection ----------

  function select(sel) {
    page.selection = fitSelection(sel, page.run);
    if (page.run) views.select(page.run, page.selection);
  }

  const handlers = {
    settingsChanged: schedule,
    mapOf: (canvas) => views.mapOf(canvas),
    pickRow(canvas, i) {
      select(pickQuery(page.selection, views.mapOf(canvas).key, i));
    },
    focus(canvas, focused) {
      const key = views.mapOf(canvas).key;
      page.focused = focused ? key : page.focused === key ? null : page.focused;
      if (focused) views.setCursor(canvas, page.selection.cell);
    },
    pickQuery: (i) => select({ ...page.selection, query: i, cell: { ...page.selection.cell, i } }),
    pickView: (view) => select({ ...page.selection, view }),
    exportJSON() {
      if (page.run) downloadJSON(exportDocument(page.run, page.engine.info));
    },
    exportPNG() {
      if (!page.run) return;
      const { panels, domain, heading } = exportPanels(page.run);
      demo.lastPNG = { domain, titles: panels.map((p) => p.title) };
      downloadPNG(panels, { columns: 3, heading });
    },
  };

  return {
    demo,
    bind: () => bindControls(handlers),
    connect(engine) {
      page.engine = engine;
      page.requests = createRequests((groups) => engine.run(groups));
      demo.info = engine.info;
    },
    /** The tab was opened: computed when first shown (its canvases are sized to the visible page). */
    show() {
      if (!page.engine) return;
      if (!demo.last) compute();
      else views.render(page.run, page.selection, ui(), demo.last.tokens);
    },
  };
}
