// "Open a model" in its own module Web Worker, with its own engine: reads the checkpoint the user
// gave (Files, read here so their bytes are copied once, or a URL through loadModel), loads it
// with the package's loadModel, and runs a prompt: a decoder's continuation token by token, or a
// bert's encoding, each with the attention of every layer and head. The page's thread only posts
// requests and draws what comes back. Messages: open-model-protocol.js.
import { thrownData, transferList } from './worker-protocol.js';
import { OPEN } from './open-model-protocol.js';

const ENGINE_URL = '../dist/index.mjs';
// How often reading progress is posted: often enough to move a bar, rarely enough not to flood.
const PROGRESS_MS = 80;

let pkg = null;
let attn = null;
let model = null;
let tokenized = false; // whether the model has a tokenizer (encode and decode work)
let loading = null; // { id, controller } of the load in flight
let running = null; // { id, stopped } of the generation in flight

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
  return ({ file, loaded, total }, force = false) => {
    const now = performance.now();
    if (!force && loaded !== total && now - last < PROGRESS_MS) return;
    last = now;
    post({ type: OPEN.progress, id, file, loaded, total, memory: attn.memory() });
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

async function load(msg) {
  loading?.controller.abort();
  running && (running.stopped = true);
  model?.dispose();
  model = null;
  const controller = new AbortController();
  const job = { id: msg.id, controller };
  loading = job;
  const progress = progressPoster(msg.id);
  const sizes = new Map();
  const start = performance.now();
  try {
    let source;
    if (msg.url) {
      source = msg.url;
    } else {
      source = await readFiles(msg.files, controller.signal, progress);
      for (const f of [msg.files.tokenizer, ...msg.files.weights]) if (f) sizes.set(f.name, f.size);
    }
    const loaded = await pkg.loadModel(attn, source, {
      signal: controller.signal,
      onProgress: (p) => {
        sizes.set(p.file, p.loaded);
        progress(p);
      },
    });
    if (loading !== job) {
      loaded.dispose();
      return;
    }
    model = loaded;
    tokenized = hasTokenizer(model);
    post({
      type: OPEN.loaded,
      id: msg.id,
      config: { ...model.config },
      hasTokenizer: tokenized,
      files: Array.from(sizes, ([name, bytes]) => ({ name, bytes })),
      memory: attn.memory(),
      ms: performance.now() - start,
    });
  } catch (e) {
    post({ type: OPEN.loadFailed, id: msg.id, error: thrownData(e), cancelled: controller.signal.aborted });
  } finally {
    if (loading === job) loading = null;
  }
}

function hasTokenizer(m) {
  try {
    m.decode([]);
    return true;
  } catch {
    return false;
  }
}

/** A token's text as a label: decoded alone, special tokens kept; its id without a tokenizer. */
function labelOf(id) {
  if (!tokenized) return `#${id}`;
  return model.decode([id], { skipSpecialTokens: false });
}

function promptIds(msg) {
  if (msg.ids) return Int32Array.from(msg.ids);
  return model.encode(msg.text);
}

const copyRows = (attention) => attention.map((a) => new Float32Array(a));

/** The three most likely tokens of each position, by softmax of its logits. */
function predictions(logits, n, vocab) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = logits.subarray(i * vocab, (i + 1) * vocab);
    let max = -Infinity;
    for (const v of row) if (v > max) max = v;
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    const best = [];
    for (let id = 0; id < vocab; id++) {
      if (best.length < 3 || row[id] > row[best[best.length - 1]]) {
        best.push(id);
        best.sort((a, b) => row[b] - row[a] || a - b);
        if (best.length > 3) best.pop();
      }
    }
    out.push(best.map((id) => ({ id, label: labelOf(id), prob: Math.exp(row[id] - max) / sum })));
  }
  return out;
}

function encode(msg, ids) {
  const start = performance.now();
  const { logits, attention } = model.forward(ids, { attention: true, logits: 'all' });
  const att = copyRows(attention);
  post(
    {
      type: OPEN.encoded,
      id: msg.id,
      ids: Array.from(ids),
      labels: Array.from(ids, labelOf),
      attention: att,
      predictions: logits ? predictions(logits, ids.length, model.config.vocabSize) : null,
      ms: performance.now() - start,
      memory: attn.memory(),
    },
    transferList(att),
  );
}

async function generate(msg, ids) {
  const { maxPositions } = model.config;
  const maxNew = Math.max(0, Math.min(msg.maxNew, maxPositions - ids.length));
  const job = { id: msg.id, stopped: false };
  running = job;
  const session = model.createSession({ maxLength: ids.length + maxNew });
  const start = performance.now();
  try {
    // The prompt but its last token at once (its maps); generate feeds the last one, and the row
    // that token's position gets arrives with the first new token.
    const head = ids.subarray(0, ids.length - 1);
    const first = head.length
      ? copyRows(model.forward(head, { session, attention: true, logits: 'none' }).attention)
      : [];
    post(
      { type: OPEN.prompt, id: msg.id, ids: Array.from(ids), labels: Array.from(ids, labelOf), attention: first },
      transferList(first),
    );
    let result = { ids: new Int32Array(0), text: '' };
    if (maxNew > 0) {
      result = await model.generate(ids.subarray(head.length), {
        session,
        maxNewTokens: maxNew,
        temperature: msg.temperature,
        topK: msg.topK,
        seed: msg.seed,
        attention: true,
        onToken: ({ id, text, attention }) => {
          const rows = copyRows(attention);
          post(
            { type: OPEN.token, id: msg.id, token: { id, label: labelOf(id), piece: text }, rows },
            transferList(rows),
          );
          return !job.stopped && running === job;
        },
      });
    }
    // The final token's own row: generate feeds it without attention, so feed it again.
    const all = session.length;
    const lastId = all > ids.length ? result.ids[result.ids.length - 1] : ids[ids.length - 1];
    if (session.length === ids.length + result.ids.length) session.truncate(all - 1);
    const last = copyRows(model.forward([lastId], { session, attention: true, logits: 'none' }).attention);
    const ended = result.ids.length < maxNew;
    post(
      {
        type: OPEN.done,
        id: msg.id,
        ids: Array.from(result.ids),
        text: result.text,
        last,
        reason: job.stopped ? 'stopped' : ended ? 'eos' : 'maxNew',
        ms: performance.now() - start,
        memory: attn.memory(),
      },
      transferList(last),
    );
  } finally {
    session.dispose();
    if (running === job) running = null;
  }
}

async function run(msg) {
  if (running) running.stopped = true;
  try {
    if (!model) throw new Error('no model is loaded');
    const ids = promptIds(msg);
    if (ids.length === 0) throw new RangeError('the prompt has no tokens');
    if (ids.length > model.config.maxPositions) {
      throw new RangeError(
        `the prompt has ${ids.length} tokens, more than the ${model.config.maxPositions} positions this model holds`,
      );
    }
    if (model.config.causal) await generate(msg, ids);
    else encode(msg, ids);
  } catch (e) {
    post({ type: OPEN.runFailed, id: msg.id, error: thrownData(e) });
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
      await run(msg);
      break;
    case OPEN.stop:
      if (running?.id === msg.id) running.stopped = true;
      break;
    default:
      break;
  }
};
