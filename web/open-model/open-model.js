// The "Open a model" tab: a checkpoint from a folder, files, a drop or a URL, loaded in its own
// worker (open-model-client.js → open-model-worker.js) with progress, memory and a cancel button;
// then a prompt's continuation (decoders) or encoding (bert), with every layer and head drawn by
// the package's views (open-model-views.js). The page's thread never reads the weights: it picks
// the files (open-model-files.js) and posts them as they are. window.__openModel for tests.
import { showErrors } from '../shared/status.js';
import { buildOpenModelPanel } from './panel.js';
import { pickCheckpoint, sizeText } from './files.js';
import { bindSources } from './sources.js';
import { bindRunForm, fitRunForm, readRunForm } from './prompt.js';
import { drawRunText } from './text.js';
import { startOpenModelWorker } from './client.js';
import { OPEN } from './protocol.js';
import { addPrompt, addToken, createRun, finishRun, shownAttention } from './run.js';
import { VIZ_URL, createOpenModelViews } from './views.js';
import { endText, factsText, loadErrorText, memoryText, progressText, runErrorText } from './words.js';

// While tokens stream in, the maps are redrawn at most this often (the text at every frame), and
// never more than a fifth of the time: a model of 30 layers × 9 heads takes the views most of a
// second to redraw at 100 tokens, which every 200 ms would leave the page no time to answer.
const MAPS_EVERY_MS = 200;
const MAPS_SHARE = 0.2;

/** ?threads=1 (or another count, or auto, the default), as the rest of the page reads it. */
function requestedThreads() {
  const requested = new URLSearchParams(location.search).get('threads');
  return requested === null || requested === 'auto' ? 'auto' : Number(requested);
}

function createOpenModelTab(panel) {
  const $ = buildOpenModelPanel(panel);
  const views = createOpenModelViews(
    { modelView: $['model-view'], heatmap: $.heatmap, headView: $['head-view'], title: $['head-title'] },
    (pick) => {
      test.pick = pick;
    },
  );
  let client = null; // a Promise of the worker's client
  const s = {
    cancel: null,
    loadId: 0,
    model: null,
    fileBytes: null,
    run: null,
    runId: 0,
    frame: 0,
    mapsAt: 0,
    mapsGap: MAPS_EVERY_MS,
  };
  const test = {
    state: 'idle', // idle | starting | loading | ready | failed | cancelled | closing
    loads: 0, // attempts to open a model that have ended (opened, refused, failed or cancelled)
    error: null, // the error box's text
    runError: null,
    config: null,
    files: null,
    memory: null,
    pick: { layer: 0, head: 0 },
    get run() {
      const r = s.run;
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
    },
    /** The picked head as the heatmap was given it: { layer, head, weights: number[], tokens }. */
    get head() {
      const h = views.head;
      return h && { layer: h.layer, head: h.head, weights: Array.from(h.weights), tokens: h.tokens };
    },
    /** The weights of one head in the run's rows: [n, n]. */
    matrix(layer, head) {
      const shown = shownAttention(s.run);
      return Array.from(shown.attention[layer].subarray(head * shown.n * shown.n, (head + 1) * shown.n * shown.n));
    },
  };

  const setState = (state) => {
    test.state = state;
    panel.dataset.state = state;
    // something is open, or on its way: closing it means something
    $.close.disabled = !(state === 'starting' || state === 'loading' || state === 'ready');
    if (state === 'ready' || state === 'failed' || state === 'cancelled') test.loads++;
  };
  const showError = (text) => {
    test.error = text || null;
    showErrors($.error, text ? [text] : []);
  };

  function engine() {
    if (!client) {
      client = startOpenModelWorker({ threads: requestedThreads() });
      client.catch(() => {
        client = null; // the next attempt starts a new worker
      });
    }
    return client;
  }

  function resetModel() {
    views.clear();
    s.model = null;
    s.run = null;
    s.runId++; // what a run of the old model still sends is not drawn
    s.textVersion = null;
    test.config = null;
    test.runError = null;
    $.model.hidden = true;
    $.views.hidden = true;
    // the next model's section must not show this one's tokens before its own run is drawn
    $.tokens.replaceChildren();
    $.output.textContent = '';
    $.output.hidden = true;
    $.predictions.replaceChildren();
    $.predictions.hidden = true;
    $['run-status'].textContent = '';
    showErrors($['run-error'], []);
    $.stop.disabled = true;
    $['kv-dtype'].disabled = false;
    delete panel.dataset.drawn;
  }

  async function load(source, { where, fileBytes }) {
    s.cancel?.();
    const loadId = ++s.loadId;
    resetModel();
    showError('');
    s.fileBytes = fileBytes;
    setState('starting');
    $.status.textContent = 'Starting the engine in its worker…';
    $.memory.textContent = memoryText(null, fileBytes);
    let worker;
    try {
      worker = await engine();
    } catch (e) {
      setState('failed');
      $.status.textContent = '';
      showError(`The WebAssembly engine could not start in a worker — ${e.name}: ${e.message}.`);
      return;
    }
    if (loadId !== s.loadId) return;
    setState('loading');
    $.status.textContent = `Loading ${where}…`;
    const read = new Map();
    $.progress.removeAttribute('value');
    $.loading.hidden = false;
    const { id, done } = worker.load({ ...source, dtype: $.dtype.value }, (p) => {
      const { fraction, text } = progressText(p, read, fileBytes);
      if (fraction === null) $.progress.removeAttribute('value');
      else $.progress.value = fraction;
      $.status.textContent = text;
      test.memory = p.memory;
      $.memory.textContent = memoryText(p.memory, fileBytes ?? sumOf(read));
    });
    s.cancel = () => worker.cancel(id);
    $.cancel.onclick = s.cancel;
    try {
      const loaded = await done;
      if (loadId !== s.loadId) return;
      opened(loaded, where);
    } catch (e) {
      if (loadId !== s.loadId) return;
      $.status.textContent = '';
      if (e.memory) {
        test.memory = e.memory;
        $.memory.textContent = memoryText(e.memory, null);
      }
      setState(e.cancelled ? 'cancelled' : 'failed');
      showError(loadErrorText(e, where));
    } finally {
      if (loadId === s.loadId) {
        $.loading.hidden = true;
        s.cancel = null;
      }
    }
  }

  const sumOf = (map) => Array.from(map.values()).reduce((a, b) => a + b, 0);

  function opened(loaded, where) {
    s.model = loaded;
    test.config = loaded.config;
    test.files = loaded.files;
    test.memory = loaded.memory;
    const c = loaded.config;
    const bytes = s.fileBytes ?? loaded.files.reduce((a, f) => a + f.bytes, 0);
    $.status.textContent = `Opened ${where} in ${Math.round(loaded.ms)} ms.`;
    $.memory.textContent = memoryText(loaded.memory, bytes);
    $.facts.textContent = factsText(c, loaded.dtype);
    $['files-list'].textContent = `Files: ${loaded.files.map((f) => `${f.name} (${sizeText(f.bytes)})`).join(', ')}.`;
    fitRunForm($, loaded);
    $.model.hidden = false;
    setState('ready');
    if (loaded.hasTokenizer) runPrompt();
  }

  async function runPrompt() {
    if (!s.model) return;
    const asked = readRunForm($, s.model);
    test.runError = asked.problem ?? null;
    showErrors($['run-error'], asked.problem ? [asked.problem] : []);
    if (asked.problem) return;
    const worker = await engine();
    const c = s.model.config;
    const { request } = asked;
    const runId = ++s.runId;
    let run = null;
    $['run-status'].textContent = c.causal ? 'Generating…' : 'Encoding…';
    $.stop.disabled = !c.causal;
    const id = worker.run(request, (msg) => {
      if (runId !== s.runId) return;
      if (msg.type === OPEN.runFailed) {
        $.stop.disabled = true;
        $['run-status'].textContent = '';
        test.runError = runErrorText(msg.error);
        showErrors($['run-error'], [test.runError]);
        return;
      }
      if (msg.type === OPEN.prompt || msg.type === OPEN.encoded) {
        const capacity = c.causal ? Math.min(c.maxPositions, msg.ids.length + request.maxNew) : msg.ids.length;
        run = createRun({ id: runId, numLayers: c.numLayers, numHeads: c.numHeads, capacity });
        addPrompt(run, msg);
        s.run = run;
        if (msg.type === OPEN.encoded) finishRun(run, { reason: 'encoded', ms: msg.ms, predictions: msg.predictions });
      } else if (msg.type === OPEN.token) addToken(run, msg);
      else if (msg.type === OPEN.done) finishRun(run, msg);
      if (msg.memory) {
        test.memory = msg.memory;
        const bytes = s.fileBytes ?? s.model.files.reduce((a, f) => a + f.bytes, 0);
        $.memory.textContent = memoryText(msg.memory, bytes, c.causal ? request.kvDtype : null);
      }
      if (run.done) {
        $.stop.disabled = true;
        $['run-status'].textContent = c.causal
          ? endText(run.reason, run.ids.length - run.promptLength, run.ms)
          : `${run.ids.length} tokens encoded in ${run.ms.toFixed(0)} ms in the worker.`;
      }
      schedule();
    });
    $.stop.onclick = () => worker.stop(id);
  }

  function schedule() {
    if (s.frame) return;
    s.frame = requestAnimationFrame(() => {
      s.frame = 0;
      draw();
    });
  }

  function draw() {
    const run = s.run;
    if (!run) return;
    // the text only when it changed: rebuilding the chips makes the browser lay the page out again
    const version = `${run.id}:${run.ids.length}:${run.done}`;
    if (version !== s.textVersion) drawRunText($, run, s.model.config.causal);
    s.textVersion = version;
    const now = performance.now();
    if (!run.done && now - s.mapsAt < s.mapsGap) {
      schedule();
      return;
    }
    s.mapsAt = now;
    const shown = shownAttention(run);
    const runId = s.runId;
    $.views.hidden = shown.n === 0; // shown before drawing: the views fit the width they are given
    views.draw(shown, s.model.config).then(
      (ms) => {
        s.mapsGap = Math.max(MAPS_EVERY_MS, ms / MAPS_SHARE);
        if (runId !== s.runId) return;
        panel.dataset.drawn = String(run.done ? run.id : 0);
      },
      (e) => {
        test.runError = `The attention views (wasm-attention/viz) could not be loaded from ${VIZ_URL.pathname} — ${e.name}: ${e.message}.`;
        showErrors($['run-error'], [test.runError]);
      },
    );
  }

  /** What was given is no checkpoint: the page says why, and shows no model. */
  function refuse(problem) {
    s.cancel?.(); // a load still in flight is no longer wanted
    s.loadId++;
    resetModel();
    $.loading.hidden = true;
    $.status.textContent = '';
    showError(problem);
    setState('failed');
  }

  /** Closes the model (or stops it opening): the worker frees it, and the tab is as it was at first. */
  async function closeModel() {
    s.loadId++; // the load in flight, if any, ends as the worker cancels it: nothing of it is shown
    s.cancel = null;
    resetModel();
    s.fileBytes = null;
    test.files = null;
    $.loading.hidden = true;
    showError('');
    $.facts.textContent = '';
    $['files-list'].textContent = '';
    setState('closing');
    $.status.textContent = 'Closing the model…';
    const closeId = s.loadId;
    try {
      const worker = await client;
      const { memory } = await worker.close();
      if (closeId !== s.loadId) return; // another model is on its way: its lines are its own
      test.memory = memory;
      $.memory.textContent = memoryText(memory, null);
      $.status.textContent = 'The model was closed and its memory freed. Open another one above.';
    } catch (e) {
      if (closeId !== s.loadId) return;
      $.memory.textContent = '';
      $.status.textContent = '';
      // the worker is gone: the next model starts a new one, which is a clean state too
      showError(`The worker of this tab stopped while closing the model — ${e.name}: ${e.message}.`);
    }
    setState('idle');
  }

  async function openFiles(files, how) {
    showError('');
    const picked = await pickCheckpoint(files);
    if (picked.problem) {
      refuse(picked.problem);
      return;
    }
    const where = picked.folder ? `the folder ${picked.folder.replace(/\/$/, '')}` : how;
    await load({ files: picked.checkpoint }, { where, fileBytes: picked.bytes });
  }

  bindSources($, panel, {
    files: openFiles,
    url: (url) => load({ url }, { where: url, fileBytes: null }),
    problem: refuse,
  });
  bindRunForm($, runPrompt);
  $.close.addEventListener('click', closeModel);
  // A token pointed at: its row marked in every map (the chips are redrawn, so listen on their box).
  $.tokens.addEventListener('pointerover', (e) => {
    const chip = e.target.closest('[data-testid=om-token]');
    const row = chip ? Number(chip.dataset.position) : -1;
    views.highlight(s.run && row < s.run.rows ? row : -1);
  });
  $.tokens.addEventListener('pointerleave', () => views.highlight(-1));
  setState('idle');
  return test;
}

const panel = document.getElementById('panel-open');
if (panel) window.__openModel = createOpenModelTab(panel);
