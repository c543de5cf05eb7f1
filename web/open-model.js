// The "Open a model" tab: a checkpoint from a folder, files, a drop or a URL, loaded in its own
// worker (open-model-client.js → open-model-worker.js) with progress, memory and a cancel button;
// then a prompt's continuation (decoders) or encoding (bert), with every layer and head drawn by
// the package's views (open-model-views.js). The page's thread never reads the weights: it picks
// the files (open-model-files.js) and posts them as they are. window.__openModel for tests.
import { showErrors } from './status.js';
import { el } from './dom.js';
import { buildOpenModelPanel } from './open-model-panel.js';
import { checkpointUrl, filesFromDrop, pickCheckpoint, sizeText } from './open-model-files.js';
import { startOpenModelWorker } from './open-model-client.js';
import { OPEN } from './open-model-protocol.js';
import { addPrompt, addToken, createRun, finishRun, shownAttention } from './open-model-run.js';
import { createOpenModelViews } from './open-model-views.js';
import { endText, factsText, loadErrorText, memoryText, progressText, runErrorText } from './open-model-words.js';

const DEFAULT_PROMPT = { decoder: 'Once upon a time', encoder: 'The cat sat on the [MASK].' };
// While tokens stream in, the maps are redrawn at most this often (the text at every frame).
const MAPS_EVERY_MS = 200;

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
  const s = { cancel: null, loadId: 0, model: null, fileBytes: null, run: null, runId: 0, frame: 0, mapsAt: 0 };
  const test = {
    state: 'idle', // idle | starting | loading | ready | failed | cancelled
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
    test.config = null;
    $.model.hidden = true;
    $.views.hidden = true;
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
    const { id, done } = worker.load(source, (p) => {
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
      setState(e.cancelled ? 'cancelled' : 'failed');
      $.status.textContent = '';
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
    $.facts.textContent = factsText(c);
    $['files-list'].textContent = `Files: ${loaded.files.map((f) => `${f.name} (${sizeText(f.bytes)})`).join(', ')}.`;
    const decoder = c.causal;
    for (const key of ['max-new', 'decoding', 'temperature', 'top-k', 'seed'])
      $[key].closest('label').hidden = !decoder;
    $.stop.hidden = !decoder;
    $.run.textContent = decoder ? 'Generate' : 'Encode';
    const help = $['prompt-help'];
    if (loaded.hasTokenizer) {
      $['prompt-label'].textContent = 'Prompt (Ctrl+Enter runs)';
      $.prompt.value = decoder ? DEFAULT_PROMPT.decoder : DEFAULT_PROMPT.encoder;
      help.hidden = true;
    } else {
      $['prompt-label'].textContent = 'Token ids (Ctrl+Enter runs)';
      $.prompt.value = '';
      $.prompt.placeholder = `e.g. 1 2 3 (0 … ${c.vocabSize - 1})`;
      help.hidden = false;
      help.textContent =
        'This checkpoint came without tokenizer.json, so the page cannot turn text into tokens or tokens into text. ' +
        `Type token ids instead (whole numbers from 0 to ${c.vocabSize - 1}, separated by spaces or commas), ` +
        'or open the folder again together with its tokenizer.json.';
    }
    $.model.hidden = false;
    setState('ready');
    if (loaded.hasTokenizer) runPrompt();
  }

  /** The prompt as the worker takes it: text, or ids typed by the user (checked here). */
  function promptRequest() {
    const c = s.model.config;
    const raw = $.prompt.value;
    if (s.model.hasTokenizer) {
      if (raw.trim() === '') return { problem: 'Type a prompt first.' };
      return { request: { text: raw } };
    }
    const parts = raw.split(/[\s,]+/).filter(Boolean);
    if (parts.length === 0) return { problem: `Type token ids (whole numbers from 0 to ${c.vocabSize - 1}).` };
    const bad = parts.find((p) => !/^\d+$/.test(p) || Number(p) >= c.vocabSize);
    if (bad !== undefined) {
      return {
        problem: `“${bad}” is not a token id of this model: ids are whole numbers from 0 to ${c.vocabSize - 1}.`,
      };
    }
    return { request: { ids: parts.map(Number) } };
  }

  function decoding() {
    const sample = $.decoding.value === 'sample';
    const number = (node, fallback) => (Number.isFinite(node.valueAsNumber) ? node.valueAsNumber : fallback);
    return {
      maxNew: Math.max(0, Math.min(256, Math.floor(number($['max-new'], 16)))),
      temperature: sample ? Math.max(0.05, number($.temperature, 0.8)) : 0,
      topK: sample ? Math.max(0, Math.floor(number($['top-k'], 0))) : 0,
      seed: Math.floor(number($.seed, 1)),
    };
  }

  async function runPrompt() {
    if (!s.model) return;
    const asked = promptRequest();
    test.runError = asked.problem ?? null;
    showErrors($['run-error'], asked.problem ? [asked.problem] : []);
    if (asked.problem) return;
    const worker = await engine();
    const c = s.model.config;
    const settings = c.causal ? decoding() : {};
    const request = { ...asked.request, maxNew: 0, temperature: 0, topK: 0, seed: 1, ...settings };
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
        $.memory.textContent = memoryText(msg.memory, s.fileBytes ?? s.model.files.reduce((a, f) => a + f.bytes, 0));
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
    drawTokens(run);
    const now = performance.now();
    if (!run.done && now - s.mapsAt < MAPS_EVERY_MS) {
      schedule();
      return;
    }
    s.mapsAt = now;
    const shown = shownAttention(run);
    $.views.hidden = shown.n === 0;
    views.draw(shown, s.model.config);
    panel.dataset.drawn = String(run.done ? run.id : 0);
  }

  function drawTokens(run) {
    $.tokens.replaceChildren(
      ...run.labels.map((label, i) =>
        el(
          'span',
          {
            class: i < run.promptLength ? 'token' : 'token generated',
            'data-testid': 'om-token',
            'data-id': run.ids[i],
          },
          el('small', { text: String(run.ids[i]) }),
          label,
        ),
      ),
    );
    const continuation = run.text ?? (run.pieces.every((p) => p !== null) ? run.pieces.join('') : null);
    $.output.hidden = !(s.model.config.causal && continuation !== null);
    $.output.textContent = continuation === null ? '' : `Continuation: ${continuation}`;
    drawPredictions(run);
  }

  function drawPredictions(run) {
    const box = $.predictions;
    box.hidden = !run.predictions;
    if (!run.predictions) return;
    box.replaceChildren(
      el('h3', { text: 'What the masked-LM head puts at each position (its best three)' }),
      el(
        'ol',
        { class: 'om-predictions' },
        ...run.predictions.map((best, i) =>
          el(
            'li',
            { 'data-testid': 'om-prediction', 'data-id': best[0].id },
            el('b', { text: run.labels[i] }),
            ' → ',
            best.map((b) => `${b.label} ${(100 * b.prob).toFixed(1)} %`).join(' · '),
          ),
        ),
      ),
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

  $.folder.addEventListener('change', () => openFiles(Array.from($.folder.files), 'the chosen folder'));
  $.files.addEventListener('change', () => openFiles(Array.from($.files.files), 'the chosen files'));
  panel.addEventListener('dragover', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    $.drop.classList.add('over');
  });
  panel.addEventListener('dragleave', (e) => {
    if (!panel.contains(e.relatedTarget)) $.drop.classList.remove('over');
  });
  panel.addEventListener('drop', async (e) => {
    e.preventDefault();
    $.drop.classList.remove('over');
    let files;
    try {
      files = await filesFromDrop(e.dataTransfer);
    } catch (err) {
      refuse(`The dropped files could not be read — ${err.name}: ${err.message}.`);
      return;
    }
    await openFiles(files, 'the dropped files');
  });
  $['url-form'].addEventListener('submit', (e) => {
    e.preventDefault();
    const typed = checkpointUrl($.url.value, location.href);
    if (typed.problem) {
      refuse(typed.problem);
      return;
    }
    load({ url: typed.url }, { where: typed.url, fileBytes: null });
  });
  $['run-form'].addEventListener('submit', (e) => {
    e.preventDefault();
    runPrompt();
  });
  $.prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      runPrompt();
    }
  });
  const syncDecoding = () => {
    const sample = $.decoding.value === 'sample';
    for (const key of ['temperature', 'top-k', 'seed']) $[key].disabled = !sample;
  };
  $.decoding.addEventListener('change', syncDecoding);
  syncDecoding();
  setState('idle');
  return test;
}

const panel = document.getElementById('panel-open');
if (panel) window.__openModel = createOpenModelTab(panel);
