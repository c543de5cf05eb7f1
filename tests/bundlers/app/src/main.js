// The consumer app's page script: ?mode=main runs the example on the main thread, ?mode=worker in
// a module Web Worker, ?mode=threads with createAttention({ threads: 2 }) in that worker;
// ?mode=model&model=<folder URL>&prompt=<text>&n=<tokens> loads a model and generates greedily;
// ?mode=viz draws with wasm-attention/viz.
import { createAttention, loadModel } from 'wasm-attention';
import { runExample } from './example.js';
import { runModel } from './model.js';
import { runViz } from './viz.js';

const query = new URLSearchParams(location.search);
const mode = query.get('mode') ?? 'main';
const modelArgs = () => ({
  model: query.get('model'),
  prompt: query.get('prompt'),
  maxNewTokens: Number(query.get('n')),
});

function inWorker(options) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) =>
      reject(new Error(`the app's worker failed to start or threw: ${e.message ?? 'no message'}`));
    worker.postMessage(options);
  });
}

const run =
  mode === 'viz'
    ? runViz()
    : mode === 'model'
      ? runModel(createAttention, loadModel, modelArgs())
      : mode === 'main'
        ? runExample(createAttention, {})
        : inWorker(mode === 'threads' ? { threads: 2 } : {});

run
  .then(
    (result) => result,
    (e) => ({ error: `${e?.stack ?? e}` }),
  )
  .then((result) => {
    window.__result = result;
    document.getElementById('status').textContent = result.error ? 'failed' : 'done';
  });
