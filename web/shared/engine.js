// The page's side of the engine worker (engine-worker.js): starts it, and turns its messages
// (worker-protocol.js) into promises. Nothing here computes; the page's thread only posts inputs
// and receives results, so it never waits for the engine (or for the engine's own threads).

import { MESSAGE, isModelMessage, reviveError } from './worker-protocol.js';
import { startWorkerClient } from './worker-client.js';

/**
 * Starts the engine in a module worker. Resolves, once the engine is loaded, to
 * { info, note, run(groups), model, terminate() }; rejects with the reason the engine could not load.
 * model (the trained poem model, its messages in worker-protocol.js):
 *   load(url) → Promise<{ ready: true, config, vocab } | { ready: false, missing: true, url, status }>
 *     (rejects when the file is there but cannot be used)
 *   generate(request, onEvent) → id; onEvent({ type: 'model-prompt' | 'model-token' | 'model-done', … })
 *   next(id): the last token is drawn, compute the next; stop(id); steps({ run, layer, head, query }) → Promise<steps>
 * run(groups) → Promise<{ results, errors: [{ label, error: Error }], engineMs }> (see
 * worker-protocol.js). Replies come in the order of the requests.
 */
export function startEngine({ threads = 'auto', url = new URL('./engine-worker.js', import.meta.url) } = {}) {
  const pending = new Map();
  const listeners = new Map(); // generation id → onEvent
  let loading = null; // { resolve, reject } of model.load
  let nextId = 1;

  const client = ({ info, note }, worker) => ({
    info,
    note,
    run(groups) {
      if (worker.broken) return Promise.reject(worker.broken);
      const id = nextId++;
      return new Promise((resolveRun, rejectRun) => {
        pending.set(id, { resolve: resolveRun, reject: rejectRun });
        worker.post({ type: MESSAGE.run, id, groups });
      });
    },
    model: {
      load(url) {
        if (worker.broken) return Promise.reject(worker.broken);
        return new Promise((resolveLoad, rejectLoad) => {
          loading = { resolve: resolveLoad, reject: rejectLoad };
          worker.post({ type: MESSAGE.modelLoad, url: String(url) });
        });
      },
      generate(request, onEvent) {
        const id = nextId++;
        listeners.clear(); // only the newest generation is followed
        if (worker.broken) {
          // Told after it returns, as a live worker's events are: the caller has its id by then.
          const error = worker.broken;
          queueMicrotask(() => onEvent({ type: MESSAGE.modelDone, id, reason: 'error', error }));
          return id;
        }
        listeners.set(id, onEvent);
        worker.post({ type: MESSAGE.modelGenerate, id, ...request });
        return id;
      },
      next(id) {
        worker.post({ type: MESSAGE.modelNext, id });
      },
      stop(id) {
        worker.post({ type: MESSAGE.modelStop, id });
      },
      sampling(id, { temperature, topK }) {
        worker.post({ type: MESSAGE.modelSampling, id, temperature, topK });
      },
      steps(request) {
        if (worker.broken) return Promise.reject(worker.broken);
        const id = nextId++;
        return new Promise((resolveRun, rejectRun) => {
          pending.set(id, { resolve: resolveRun, reject: rejectRun });
          worker.post({ type: MESSAGE.modelSteps, id, ...request });
        });
      },
    },
    terminate: worker.terminate,
  });

  const onModel = (msg) => {
    if (msg.type === MESSAGE.modelReady || msg.type === MESSAGE.modelMissing || msg.type === MESSAGE.modelFailed) {
      const waiter = loading;
      loading = null;
      if (!waiter) return;
      if (msg.type === MESSAGE.modelReady) waiter.resolve({ ready: true, config: msg.config, vocab: msg.vocab });
      else if (msg.type === MESSAGE.modelMissing)
        waiter.resolve({ ready: false, missing: true, url: msg.url, status: msg.status });
      else waiter.reject(reviveError(msg.error));
    } else if (msg.type === MESSAGE.modelSteps) {
      const waiter = pending.get(msg.id);
      if (!waiter) return;
      pending.delete(msg.id);
      if (msg.error) waiter.reject(reviveError(msg.error));
      else waiter.resolve(msg.steps);
    } else {
      const onEvent = listeners.get(msg.id);
      if (!onEvent) return;
      if (msg.type === MESSAGE.modelDone) {
        listeners.delete(msg.id);
        if (msg.error) msg.error = reviveError(msg.error);
      }
      onEvent(msg);
    }
  };

  const onMessage = (msg) => {
    if (msg.type === MESSAGE.result) {
      const waiter = pending.get(msg.id);
      if (!waiter) return;
      pending.delete(msg.id);
      waiter.resolve({
        results: msg.results,
        errors: msg.errors.map(({ label, error }) => ({ label, error: reviveError(error) })),
        engineMs: msg.engineMs,
      });
    } else if (isModelMessage(msg.type)) {
      onModel(msg);
    }
  };

  // A worker that broke answers nothing more: a model still loading and the followed generation end
  // with its reason too (a generation as the worker would end it, with model-done and an error).
  const onFail = (error) => {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
    const waiter = loading;
    loading = null;
    waiter?.reject(error);
    for (const [id, onEvent] of listeners) onEvent({ type: MESSAGE.modelDone, id, reason: 'error', error });
    listeners.clear();
  };

  return startWorkerClient({
    url,
    name: 'wasm-attention engine',
    what: 'the engine worker',
    threads,
    protocol: MESSAGE,
    onMessage,
    onFail,
    makeClient: client,
  });
}
