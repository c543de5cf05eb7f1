// The engine's home: a module Web Worker that owns the WebAssembly engine, so the page's
// thread never waits for it. With threads 'auto' on a cross-origin-isolated page this loads
// the pthreads build; its pool workers are nested workers of this one, and the blocking
// waits of its threads happen here, never on the page's thread.
//
// Protocol (every message is a plain object; Float32Arrays travel as structured clones):
//   page → worker  { type: 'init', threads }                     once, first
//   worker → page  { type: 'ready', info, note }  or  { type: 'failed', error }
//   page → worker  { type: 'run', id, groups: [{ label, calls: [{ key, method, args }] }] }
//   worker → page  { type: 'result', id, results: { [key]: result | null },
//                    errors: [{ label, error }], engineMs }
// The calls of a group run in order and stop at the group's first error, which empties the
// whole group; groups are independent. engineMs is the time inside the engine calls only.
// error: { name, message } (e.g. RangeError + the engine's text). The result buffers are
// transferred, not copied.
// The trained poem model's messages (model-*) are poem-worker.js's; see the protocol there.
import { handleModelMessage } from './poem-worker.js';

const ENGINE_URL = '../dist/index.mjs';
const METHODS = new Set(['selfAttention', 'multiHeadAttention']);

let engine = null;
let pkg = null; // the package module (readSafetensors for the model)

function errorData(e) {
  if (e && typeof e === 'object') {
    const name = typeof e.name === 'string' && e.name !== '' ? e.name : e.constructor?.name || 'Error';
    return { name, message: typeof e.message === 'string' ? e.message : String(e) };
  }
  return { name: 'Error', message: String(e) };
}

async function init(threads) {
  pkg = await import(ENGINE_URL);
  const { createAttention } = pkg;
  try {
    return { attn: await createAttention({ threads }), note: '' };
  } catch (e) {
    if (threads === 1) throw e;
    // A threaded build that cannot start here (e.g. no SharedArrayBuffer) must not hide the demo.
    const { name, message } = errorData(e);
    return { attn: await createAttention({ threads: 1 }), note: `threads: ${threads} failed (${name}: ${message}); using 1` };
  }
}

/** The ArrayBuffers behind every typed array of a result (each once), to transfer them. */
function buffersOf(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer); // never a SharedArrayBuffer
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) buffersOf(v, out);
  }
  return out;
}

function run({ id, groups }) {
  const results = {};
  const errors = [];
  let engineMs = 0;
  for (const { label, calls } of groups) {
    for (const { key } of calls) results[key] = null;
    try {
      for (const { key, method, args } of calls) {
        if (!METHODS.has(method)) throw new TypeError(`engine worker: unknown method ${method}`);
        const start = performance.now();
        try {
          results[key] = engine[method](args);
        } finally {
          engineMs += performance.now() - start;
        }
      }
    } catch (e) {
      for (const { key } of calls) results[key] = null;
      errors.push({ label, error: errorData(e) });
    }
  }
  self.postMessage({ type: 'result', id, results, errors, engineMs }, [...buffersOf(results)]);
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'init') {
    try {
      const { attn, note } = await init(msg.threads);
      engine = attn;
      self.postMessage({ type: 'ready', info: { ...attn.info }, note });
    } catch (e) {
      self.postMessage({ type: 'failed', error: errorData(e) });
    }
  } else if (msg.type === 'run') {
    if (!engine) {
      self.postMessage({ type: 'result', id: msg.id, results: {}, errors: [{ label: 'Engine', error: { name: 'Error', message: 'the engine is not loaded' } }], engineMs: 0 });
      return;
    }
    run(msg);
  } else if (msg.type.startsWith('model-')) {
    if (!engine) {
      self.postMessage({ type: 'model-failed', error: { name: 'Error', message: 'the engine is not loaded' } });
      return;
    }
    await handleModelMessage(msg, {
      post: (reply, transfer = []) => self.postMessage(reply, transfer),
      attn: engine,
      readSafetensors: pkg.readSafetensors,
      errorData,
    });
  }
};
