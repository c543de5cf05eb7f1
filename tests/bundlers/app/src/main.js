// The consumer app's page script: ?mode=main runs the example on the main thread, ?mode=worker in
// a module Web Worker, ?mode=threads with createAttention({ threads: 2 }) in that worker.
import { createAttention } from 'wasm-attention';
import { runExample } from './example.js';

const mode = new URLSearchParams(location.search).get('mode') ?? 'main';

function inWorker(options) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) =>
      reject(new Error(`the app's worker failed to start or threw: ${e.message ?? 'no message'}`));
    worker.postMessage(options);
  });
}

const run = mode === 'main' ? runExample(createAttention, {}) : inWorker(mode === 'threads' ? { threads: 2 } : {});

run
  .then(
    (result) => result,
    (e) => ({ error: `${e?.stack ?? e}` }),
  )
  .then((result) => {
    window.__result = result;
    document.getElementById('status').textContent = result.error ? 'failed' : 'done';
  });
