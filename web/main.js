// Wiring of the demo page: two tabs, the trained poem model (poem.js runs that mode) and the
// textbook example: controls → settings → engine (in its worker) → views.
// Each job lives in its own module; this file holds the textbook's state (the last run, the
// selection, which heatmap has focus) and passes it to them. Nothing imports main.js.
//
//   tabs.js      the two modes                   poem.js      the trained model's mode
//
//   settings.js  read and check the form        inputs.js    embeddings and weights for the engine
//   requests.js  the queue to the engine worker  engine.js    the worker itself
//   rundata.js   views, scales, step numbers      selection.js picked view, query and cell
//   views.js     draw a run                       tooltip.js   the cell readout
//   controls.js  events → handlers                status.js    engine line and errors
//   exporting.js JSON and PNG of a run            serialize.js exact copies for tests
import { tokenize } from './tokenize.js';
import { LIMITS, readSettings, settingsProblems } from './settings.js';
import { createInputBuilder, engineGroups } from './inputs.js';
import { createRequests } from './requests.js';
import { startEngine } from './engine.js';
import { fitSelection, initialSelection, moveCell, pickQuery } from './selection.js';
import { createViews } from './views.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { bindControls } from './controls.js';
import { describeError, showEngine, showErrors } from './status.js';
import { exportDocument, exportPanels } from './exporting.js';
import { downloadJSON, downloadPNG } from './export.js';
import { serialize } from './serialize.js';
import { bindTabs } from './tabs.js';
import { createPoemPage } from './poem.js';

// The package, as a static host of the package folder serves it (web/ next to dist/);
// engine-worker.js imports it from there.
const ENGINE_URL = '../dist/index.mjs';
// The trained model's weights, in a clone of the repository (the npm package does not ship them).
const MODEL_URL = new URL('../models/tang-poems/model.safetensors', import.meta.url);

const $ = (id) => document.getElementById(id);

const page = {
  engine: null, // { info, note, run(groups) } of engine.js
  requests: null, // requests.js queue
  run: null, // the last computation that produced weights: { settings, tokens, n, results }
  last: null, // the last computation, with or without results: { settings, tokens, args, results, errors, timing }
  selection: initialSelection(),
  focused: null, // key of the heatmap with keyboard focus
  timer: 0,
  tab: null, // the open tab: 'model' or 'textbook'
  poem: null, // poem.js's mode, once the engine is there
};
const buildArgs = createInputBuilder();
const views = createViews({ tokenLimit: LIMITS.tokens });
const ui = () => ({ run: page.run, focused: page.focused });

// What the browser tests (and a curious reader, in the console) can inspect.
const demo = {
  ready: false,
  computeCount: 0,
  info: null,
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
window.__demo = demo;

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
      last.results = { self: reply.results.self, mhaHeads: reply.results.mhaHeads, mhaAverage: reply.results.mhaAverage };
      last.errors = reply.errors.map(({ label, error: e }) => describeError(label, e));
    }
    finish(last, t0, reply ? reply.engineMs : 0);
  });
}

function finish(last, t0, engineMs) {
  const r = last.results;
  page.run = r && (r.self || r.mhaHeads) ? { settings: last.settings, tokens: last.tokens, n: last.tokens.length, results: r } : null;
  page.selection = fitSelection(page.selection, page.run);
  hideTooltip($('tooltip'));
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
  if (page.run) views.select(page.run, page.selection, ui());
}

/** The tooltip's content for a cell of a heatmap. */
function cellInfo(meta, cell) {
  const { tokens, settings } = page.run;
  return {
    i: cell.i, j: cell.j, query: tokens[cell.i], key: tokens[cell.j], label: meta.label,
    weight: cell.j >= 0 ? meta.matrix[cell.i * meta.n + cell.j] : undefined,
    masked: settings.isCausal && cell.j > cell.i,
  };
}

function showCellOf(canvas) {
  const meta = views.mapOf(canvas);
  const { i, j } = page.selection.cell;
  const r = canvas.getBoundingClientRect();
  const at = { x: r.left + meta.layout.x0 + (j + 1) * meta.layout.cellWidth, y: r.top + meta.layout.y0 + (i + 1) * meta.layout.cellHeight };
  showTooltip($('tooltip'), at, cellInfo(meta, { i, j }));
  const info = cellInfo(meta, { i, j });
  $('map-readout').textContent = `${meta.label}: query ${info.query} #${i + 1}, key ${info.key} #${j + 1}, weight ${$('tooltip').querySelector('[data-testid=tip-weight]').textContent}`;
}

const handlers = {
  settingsChanged: schedule,
  mapOf: (canvas) => views.mapOf(canvas),
  hover(canvas, cell, at) {
    if (!canvas || !cell || !page.run) return hideTooltip($('tooltip'));
    showTooltip($('tooltip'), at, cellInfo(views.mapOf(canvas), cell));
  },
  pickRow(canvas, i) {
    select(pickQuery(page.selection, views.mapOf(canvas).key, i));
  },
  key(canvas, key) {
    const meta = views.mapOf(canvas);
    if (key === 'Enter' || key === ' ') {
      select(pickQuery(page.selection, meta.key, page.selection.cell.i));
    } else {
      const cell = moveCell(page.selection.cell, key, meta.n);
      if (!cell) return;
      page.selection = { ...page.selection, cell };
      views.drawMap(canvas, page.selection, ui());
    }
    showCellOf(canvas);
  },
  focus(canvas, focused) {
    const key = views.mapOf(canvas).key;
    page.focused = focused ? key : page.focused === key ? null : page.focused;
    views.drawMap(canvas, page.selection, ui());
    if (focused) showCellOf(canvas);
    else hideTooltip($('tooltip'));
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

// ---------- tabs ----------

/** The textbook is computed when first shown (its canvases are sized to the visible page). */
function showTextbook() {
  if (!page.engine) return;
  if (!demo.last) compute();
  else views.render(page.run, page.selection, ui(), demo.last.tokens);
}

function tabOpened(name) {
  page.tab = name;
  hideTooltip($('tooltip'));
  page.poem?.show(name === 'model');
  if (name === 'textbook') showTextbook();
}

// ---------- start ----------

/** ?threads=1 (or another count, or auto, the default); the engine checks the count. */
function requestedThreads() {
  const requested = new URLSearchParams(location.search).get('threads');
  return requested === null || requested === 'auto' ? 'auto' : Number(requested);
}

async function start() {
  bindControls(handlers);
  bindTabs(document.querySelector('[role=tablist]'), tabOpened);
  try {
    const engine = await startEngine({ threads: requestedThreads() });
    page.engine = engine;
    page.requests = createRequests((groups) => engine.run(groups));
    demo.info = engine.info;
    showEngine($('engine'), engine.info, engine.note, null);
  } catch (e) {
    $('engine').textContent = 'Engine not loaded.';
    const message = `Could not load the WebAssembly engine from ${ENGINE_URL} in a Web Worker — ${e && e.name ? `${e.name}: ` : ''}${e && e.message ? e.message : e}. ` +
      'Build it with `npm run build` and serve the package folder (`npm start`).';
    showErrors($('error'), [message]);
    showErrors($('poem-error'), [message]);
    document.body.dataset.state = 'no-engine';
    return;
  }
  page.poem = createPoemPage(page.engine, MODEL_URL);
  window.__poem = page.poem.test;
  page.poem.show(page.tab === 'model');
  page.poem.start();
  if (page.tab === 'textbook') showTextbook();
  await demo.settled();
  demo.ready = true;
  document.body.dataset.state = 'ready';
}

start();
