// Wiring of the demo page: starts the engine (in its worker) and hands its client to the
// textbook example (textbook/textbook.js), then starts the trained poem model's tab (poem/poem.js,
// which runs its model in a model worker of its own); both hold their own state. Nothing imports
// main.js.
//
//   tabs.js              the tabs                   shared/engine.js   the engine's worker, from the page
//   poem/poem.js         the trained model's tab    textbook/textbook.js  the textbook's tab
//
// The textbook's modules (in textbook/):
//   settings.js  read and check the form        inputs.js    embeddings and weights for the engine
//   requests.js  the queue to the engine worker  run.js       views, scales, step numbers
//   views.js     draw a run                       selection.js picked view, query and cell
//   controls.js  events → handlers                export.js    JSON and PNG of a run
// and the drawing and status modules the tabs share (in shared/): steps.js, strip.js, bars.js,
// status.js (engine line and errors), serialize.js (exact copies for tests).
import { startEngine } from './shared/engine.js';
import { showEngine, showErrors } from './shared/status.js';
import { bindTabs } from './tabs.js';
import { createPoemPage } from './poem/poem.js';
import { createTextbook } from './textbook/textbook.js';

// The package, as a static host of the package folder serves it (web/ next to dist/);
// shared/engine-worker.js imports it from there.
const ENGINE_URL = '../dist/index.mjs';
// The trained model's folder (config.json, tokenizer.json, model.safetensors), in a clone of the
// repository (the npm package does not ship it).
const MODEL_URL = new URL('../models/tang-poems/', import.meta.url);

const $ = (id) => document.getElementById(id);

const page = {
  tab: null, // the open tab: 'model' or 'textbook'
  poem: null, // poem/poem.js's mode, once the engine is there
  engine: null,
};
const textbook = createTextbook();
window.__demo = textbook.demo;

function tabOpened(name) {
  page.tab = name;
  page.poem?.show(name === 'model');
  if (name === 'textbook') textbook.show();
}

/** ?threads=1 (or another count, or auto, the default); the engine checks the count. */
function requestedThreads() {
  const requested = new URLSearchParams(location.search).get('threads');
  return requested === null || requested === 'auto' ? 'auto' : Number(requested);
}

async function start() {
  textbook.bind();
  bindTabs(document.querySelector('[role=tablist]'), tabOpened);
  try {
    page.engine = await startEngine({ threads: requestedThreads() });
    textbook.connect(page.engine);
    showEngine($('engine'), page.engine.info, page.engine.note, null);
  } catch (e) {
    $('engine').textContent = 'Engine not loaded.';
    const message =
      `Could not load the WebAssembly engine from ${ENGINE_URL} in a Web Worker — ${e && e.name ? `${e.name}: ` : ''}${e && e.message ? e.message : e}. ` +
      'Build it with `npm run build` and serve the package folder (`npm start`).';
    showErrors($('error'), [message]);
    showErrors($('poem-error'), [message]);
    document.body.dataset.state = 'no-engine';
    return;
  }
  page.poem = createPoemPage(MODEL_URL, { threads: requestedThreads() });
  window.__poem = page.poem.test;
  page.poem.show(page.tab === 'model');
  page.poem.start();
  if (page.tab === 'textbook') textbook.show();
  await textbook.demo.settled();
  textbook.demo.ready = true;
  document.body.dataset.state = 'ready';
}

start();
