// The textbook tab: its state (the last run, the selection, which heatmap has focus) and the
// flow controls → settings → engine (in its worker) → views. The engine client comes from
// main.js (only main.js starts the engine), as for poem/poem.js.
import { tokenize } from './tokenize.js';
import { LIMITS, readSettings, settingsProblems } from './settings.js';
import { createInputBuilder, engineGroups } from './inputs.js';
import { createRequests } from './requests.js';
import { fitSelection, initialSelection, pickQuery } from './selection.js';
import { createViews } from './views.js';
import { bindControls } from './controls.js';
import { describeError, showEngine, showErrors } from '../shared/status.js';
import { createDemoApi } from './demo-api.js';
import { textbookHandlers } from './handlers.js';

const $ = (id) => document.getElementById(id);

/**
 * @returns {{ demo: object, bind(), connect(engine), show() }}
 *   demo: what the browser tests (and a curious reader, in the console) inspect as window.__demo
 *   bind(): listens to the controls (before the engine is there: nothing is computed until connect)
 *   connect(engine): shared/engine.js's client is there; show(): the tab was opened
 */
export function createTextbook() {
  const tab = new TextbookTab();
  return {
    demo: tab.demo,
    bind: () => bindControls(textbookHandlers(tab)),
    connect: (engine) => tab.connect(engine),
    show: () => tab.show(),
  };
}

/** The engine's reply (or its error) into the computation `last`: its results and errors. */
function takeReply(last, reply, error) {
  if (error) {
    last.errors = [describeError('The engine', error)];
    return;
  }
  last.results = {
    self: reply.results.self,
    mhaHeads: reply.results.mhaHeads,
    mhaAverage: reply.results.mhaAverage,
  };
  last.errors = reply.errors.map(({ label, error: e }) => describeError(label, e));
}

class TextbookTab {
  constructor() {
    this.engine = null; // { info, note, run(groups) } of shared/engine.js
    this.requests = null; // requests.js queue
    this.run = null; // the last computation that produced weights: { settings, tokens, n, results }
    this.selection = initialSelection();
    this.focused = null; // key of the heatmap with keyboard focus
    this.timer = 0;
    this.buildArgs = createInputBuilder();
    this.views = createViews({
      tokenLimit: LIMITS.tokens,
      onPick: (key, i) => this.select(pickQuery(this.selection, key, i)),
      // The map moved its cursor itself: only remembered, so a later render puts it back there.
      onCursor: (cell) => {
        this.selection = { ...this.selection, cell };
      },
    });
    this.demo = createDemoApi(this);
  }

  connect(engine) {
    this.engine = engine;
    this.requests = createRequests((groups) => engine.run(groups));
    this.demo.info = engine.info;
  }

  /** The tab was opened: computed when first shown (its canvases are sized to the visible page). */
  show() {
    if (!this.engine) return;
    if (!this.demo.last) this.compute();
    else this.render(this.demo.last.tokens);
  }

  render(tokens) {
    this.views.render(this.run, this.selection, { run: this.run, focused: this.focused }, tokens);
  }

  schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.compute(), delay);
  }

  /** Reads the form and asks the engine for the three calls (or shows why not). */
  compute() {
    clearTimeout(this.timer);
    if (!this.engine) return;
    const t0 = performance.now();
    const settings = readSettings($('controls'));
    const tokens = tokenize(settings.text, settings.mode);
    const problems = settingsProblems(settings, tokens);
    const last = { settings, tokens, args: null, results: null, errors: problems };
    if (problems.length) {
      this.requests.refuse();
      this.finish(last, t0, 0);
      return;
    }
    last.args = this.buildArgs(settings, tokens);
    this.requests.request(engineGroups(last.args), (reply, error) => {
      takeReply(last, reply, error);
      this.finish(last, t0, reply ? reply.engineMs : 0);
    });
  }

  /** A computation ended: its run (if it has weights) is drawn, its errors and timing shown. */
  finish(last, t0, engineMs) {
    const r = last.results;
    this.run =
      r && (r.self || r.mhaHeads)
        ? { settings: last.settings, tokens: last.tokens, n: last.tokens.length, results: r }
        : null;
    this.selection = fitSelection(this.selection, this.run);
    this.render(last.tokens);
    showErrors($('error'), last.errors);
    last.timing = { engineMs, totalMs: performance.now() - t0 };
    if (r) showEngine($('engine'), this.engine.info, this.engine.note, last.timing);
    this.demo.last = last;
    this.demo.computeCount += 1;
    document.body.dataset.computeCount = String(this.demo.computeCount);
  }

  select(sel) {
    this.selection = fitSelection(sel, this.run);
    if (this.run) this.views.select(this.run, this.selection);
  }
}
