// The engine's home: a module Web Worker that owns the WebAssembly engine, so the page's
// thread never waits for it. With threads 'auto' on a cross-origin-isolated page this loads
// the pthreads build; its pool workers are nested workers of this one, and the blocking
// waits of its threads happen here, never on the page's thread.
// It answers the textbook's requests (the poem model has a model worker of its own,
// open-model/worker.js); the messages are worker-protocol.js's.
import { MESSAGE, UNAVAILABLE, thrownData, transferList } from './worker-protocol.js';

const ENGINE_URL = '../../dist/index.mjs';
const METHODS = new Set(['selfAttention', 'multiHeadAttention']);

let engine = null;

async function init(threads) {
  const { createAttention } = await import(ENGINE_URL);
  try {
    return { attn: await createAttention({ threads }), note: '' };
  } catch (e) {
    if (threads === 1) throw e;
    // A threaded build that cannot start here (e.g. no SharedArrayBuffer) must not hide the demo.
    const { name, message } = thrownData(e);
    return {
      attn: await createAttention({ threads: 1 }),
      note: `threads: ${threads} failed (${name}: ${message}); using 1`,
    };
  }
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
      errors.push({ label, error: thrownData(e) });
    }
  }
  self.postMessage({ type: MESSAGE.result, id, results, errors, engineMs }, transferList(results));
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === MESSAGE.init) {
    try {
      const { attn, note } = await init(msg.threads);
      engine = attn;
      self.postMessage({ type: MESSAGE.ready, info: { ...attn.info }, note });
    } catch (e) {
      self.postMessage({ type: MESSAGE.failed, error: thrownData(e) });
    }
  } else if (msg.type === MESSAGE.run) {
    if (!engine) {
      self.postMessage({
        type: MESSAGE.result,
        id: msg.id,
        results: {},
        errors: [{ label: 'Engine', error: UNAVAILABLE.engine }],
        engineMs: 0,
      });
      return;
    }
    run(msg);
  }
};
