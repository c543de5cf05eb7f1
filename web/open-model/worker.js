// The page's model worker, one per model on screen ("Open a model", and the poem tab's), with its
// own engine: reads the checkpoint (Files, read here so their bytes are copied once, or a URL
// through loadModel; a folder opened with its head steps through the poem runtime), loads it with
// the package's loadModel, and runs a prompt: a decoder's continuation token by token, or a bert's
// encoding, each with the attention of every layer and head, or a paced run with the four steps of
// a head. The page's thread only posts requests and draws what comes back. Messages: protocol.js;
// the runs: runner.js and paced.js.
import { thrownData } from '../shared/worker-protocol.js';
import { OPEN } from './protocol.js';
import { changeRunSampling, nextRunToken, releaseRuns, runPrompt, runsEnded, stopRun } from './runner.js';
import { headSteps } from './paced.js';
import { fetchModelFiles } from '../poem/model/files.js';

const ENGINE_URL = '../../dist/index.mjs';
// The runtime that keeps what head steps need (poem/model/), imported only when a model is opened
// with them, so "Open a model" never loads it.
const RUNTIME_URL = '../poem/model/index.js';
// How often reading progress is posted: often enough to move a bar, rarely enough not to flood.
const PROGRESS_MS = 80;

let pkg = null;
let attn = null;
let model = null;
let opened = null; // the model opened with its head steps (openPoemModel's), or null
let runtime = null; // the module at RUNTIME_URL, once imported
let tokenized = false; // whether the model has a tokenizer (encode and decode work)
let loading = null; // { id, controller } of the load in flight

const post = (msg, transfer = []) => self.postMessage(msg, transfer);

async function init(threads) {
  pkg = await import(ENGINE_URL);
  try {
    attn = await pkg.createAttention({ threads });
    return '';
  } catch (e) {
    if (threads === 1) throw e;
    // A threaded build that cannot start here (no SharedArrayBuffer) must not keep the tab from working.
    attn = await pkg.createAttention({ threads: 1 });
    return `threads: ${threads} failed (${thrownData(e).message}); using 1`;
  }
}

/** A File's bytes, read in chunks into one buffer of its size, reporting progress; stops when aborted. */
async function readFileBytes(file, signal, onBytes) {
  const bytes = new Uint8Array(file.size);
  const reader = file.stream().getReader();
  let loaded = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      bytes.set(value, loaded);
      loaded += value.length;
      onBytes(loaded);
    }
  } finally {
    reader.releaseLock();
  }
  return bytes;
}

/** An Error whose message the page shows as it is (its name tells the page it is about a file). */
function fileError(name, message) {
  const e = new Error(message);
  e.name = 'CheckpointFileError';
  e.file = name;
  return e;
}

function progressPoster(id) {
  let last = 0;
  let latest = null; // progress held back by the throttle, posted when its time comes
  let timer = 0;
  const send = () => {
    clearTimeout(timer);
    timer = 0;
    last = performance.now();
    post({ type: OPEN.progress, id, ...latest, memory: attn.memory() });
  };
  return ({ file, loaded, total }, force = false) => {
    latest = { file, loaded, total };
    const wait = PROGRESS_MS - (performance.now() - last);
    if (force || loaded === total || wait <= 0) send();
    else if (!timer) timer = setTimeout(send, wait);
  };
}

/** { config, tokenizer, weights } of Files: each read once, the safetensors checked one by one. */
async function readFiles({ config, tokenizer, weights }, signal, progress) {
  let tokenizerJson = null;
  if (tokenizer) {
    const bytes = await readFileBytes(tokenizer, signal, (loaded) =>
      progress({ file: tokenizer.name, loaded, total: tokenizer.size }),
    );
    try {
      tokenizerJson = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw fileError(tokenizer.name, `${tokenizer.name} is not valid JSON (${e.message}).`);
    }
  }
  const tensors = [];
  for (const file of weights) {
    const bytes = await readFileBytes(file, signal, (loaded) =>
      progress({ file: file.name, loaded, total: file.size }),
    );
    progress({ file: file.name, loaded: bytes.length, total: file.size }, true);
    try {
      // Read here, one file at a time, so a broken file is named; 16-bit tensors stay 16-bit.
      tensors.push(pkg.readSafetensors(bytes, { widen: false }));
    } catch (e) {
      throw fileError(file.name, `${file.name} is not a readable safetensors file: ${e.message}`);
    }
  }
  return { config, weights: tensors, tokenizer: tokenizerJson };
}

/** An Error saying which file of the folder did not come: { url, status } as `missing`. */
function missingError(missing) {
  const e = new Error(`${missing.url} answered ${missing.status ? `HTTP ${missing.status}` : 'nothing'}`);
  e.missing = missing;
  return e;
}

/** The folder at `url` opened with its head steps: config.json, tokenizer.json, model.safetensors. */
async function openWithSteps(url) {
  const files = await fetchModelFiles(url);
  if (files.missing) throw missingError(files.missing);
  runtime ??= await import(RUNTIME_URL);
  return runtime.openPoemModel(pkg, attn, files);
}

/** Each query head's K/V head: the package's rule, so the page needs none of its own. */
const kvHeadsOf = ({ numHeads, numKvHeads }) =>
  Array.from({ length: numHeads }, (_, h) => pkg.kvHeadOf(h, numHeads, numKvHeads));

/** The model and what it holds go (a paced run's session, the head steps' tensors). */
function disposeModel(m, withSteps) {
  releaseRuns();
  if (withSteps) withSteps.dispose();
  else m?.dispose();
}

async function load(msg) {
  loading?.controller.abort();
  const controller = new AbortController();
  const job = { id: msg.id, controller };
  loading = job;
  // The open model goes, but only once a generation still using it has returned (as close waits).
  stopRun();
  const previous = model;
  const previousOpened = opened;
  model = null;
  opened = null;
  await runsEnded();
  if (previous) disposeModel(previous, previousOpened);
  const progress = progressPoster(msg.id);
  const sizes = new Map();
  const start = performance.now();
  try {
    // a close or a newer load that came while the run ended cancels this one before it begins
    if (controller.signal.aborted) throw new Error('cancelled');
    const withSteps = msg.withSteps ? await openWithSteps(msg.url) : null;
    const loaded = withSteps ? withSteps.model : await loadSource(msg, controller.signal, progress, sizes);
    if (loading !== job) {
      (withSteps ?? loaded).dispose(); // never run: no paced run of it holds a session
      return;
    }
    model = loaded;
    opened = withSteps;
    tokenized = hasTokenizer(model);
    post({
      type: OPEN.loaded,
      id: msg.id,
      config: { ...model.config },
      dtype: msg.dtype ?? 'f32',
      hasTokenizer: tokenized,
      files: Array.from(sizes, ([name, bytes]) => ({ name, bytes })),
      memory: attn.memory(),
      ms: performance.now() - start,
      ...(withSteps ? { vocab: Array.from(withSteps.vocab), kvHeads: kvHeadsOf(model.config) } : {}),
    });
  } catch (e) {
    post({
      type: OPEN.loadFailed,
      id: msg.id,
      error: thrownData(e),
      cancelled: controller.signal.aborted,
      memory: attn.memory(),
      ...(e?.missing ? { missing: e.missing } : {}),
    });
  } finally {
    if (loading === job) loading = null;
  }
}

/** The checkpoint of a load message (its Files, or its URL) through loadModel; sizes gets each file's bytes. */
async function loadSource(msg, signal, progress, sizes) {
  let source;
  if (msg.url) {
    source = msg.url;
  } else {
    source = await readFiles(msg.files, signal, progress);
    for (const f of [msg.files.tokenizer, ...msg.files.weights]) if (f) sizes.set(f.name, f.size);
  }
  return pkg.loadModel(attn, source, {
    dtype: msg.dtype ?? 'f32',
    signal,
    onProgress: (p) => {
      sizes.set(p.file, p.loaded);
      progress(p);
    },
  });
}

/** Frees the model: a load in flight disposes what it gets (it is no longer `loading`). */
async function close(msg) {
  loading?.controller.abort();
  loading = null;
  stopRun();
  const closing = model;
  await runsEnded();
  // a load that began meanwhile has disposed this model itself, and the new one is not ours to close
  if (model === closing) {
    if (model) disposeModel(model, opened);
    model = null;
    opened = null;
    tokenized = false;
  }
  post({ type: OPEN.closed, id: msg.id, memory: attn ? attn.memory() : null });
}

function hasTokenizer(m) {
  try {
    m.decode([]);
    return true;
  } catch {
    return false;
  }
}

self.onmessage = async ({ data: msg }) => {
  switch (msg.type) {
    case OPEN.init:
      try {
        const note = await init(msg.threads);
        post({ type: OPEN.ready, info: { ...attn.info }, note });
      } catch (e) {
        post({ type: OPEN.failed, error: thrownData(e) });
      }
      break;
    case OPEN.load:
      await load(msg);
      break;
    case OPEN.cancel:
      if (loading?.id === msg.id) loading.controller.abort();
      break;
    case OPEN.run:
      await runPrompt({ model, tokenized, attn, post, poem: opened, generate: runtime?.generate }, msg);
      break;
    case OPEN.stop:
      stopRun(msg.id);
      break;
    case OPEN.next:
      nextRunToken(msg.id);
      break;
    case OPEN.sampling:
      changeRunSampling(msg);
      break;
    case OPEN.headSteps:
      await headSteps(msg, post, pkg);
      break;
    case OPEN.close:
      await close(msg);
      break;
    default:
      break;
  }
};
