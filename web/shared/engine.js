// The page's side of the engine worker (engine-worker.js): starts it, and turns its messages
// (worker-protocol.js) into promises. Nothing here computes; the page's thread only posts inputs
// and receives results, so it never waits for the engine (or for the engine's own threads).

import { MESSAGE, isModelMessage, reviveError } from './worker-protocol.js';
import { startWorkerClient } from './worker-client.js';

/** A request answered once, by id: its promise, its waiter kept in st.pending. */
function request(st, worker, msg) {
  if (worker.broken) return Promise.reject(worker.broken);
  const id = st.nextId++;
  return new Promise((resolve, reject) => {
    st.pending.set(id, { resolve, reject });
    worker.post({ ...msg, id });
  });
}

/** The poem model's half of the client (see startEngine). */
function modelClient(st, worker) {
  return {
    load(url) {
      if (worker.broken) return Promise.reject(worker.broken);
      return new Promise((resolveLoad, rejectLoad) => {
        st.loading = { resolve: resolveLoad, reject: rejectLoad };
        worker.post({ type: MESSAGE.modelLoad, url: String(url) });
      });
    },
    generate(request, onEvent) {
      const id = st.nextId++;
      st.listeners.clear(); // only the newest generation is followed
      if (worker.broken) {
        // Told after it returns, as a live worker's events are: the caller has its id by then.
        const error = worker.broken;
        queueMicrotask(() => onEvent({ type: MESSAGE.modelDone, id, reason: 'error', error }));
        return id;
      }
      st.listeners.set(id, onEvent);
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
    steps: (asked) => request(st, worker, { type: MESSAGE.modelSteps, ...asked }),
  };
}

/** A reply to model-load: the model's facts, its absence, or why it failed. */
function onModelLoad(st, msg) {
  const waiter = st.loading;
  st.loading = null;
  if (!waiter) return;
  if (msg.type === MESSAGE.modelReady) waiter.resolve({ ready: true, config: msg.config, vocab: msg.vocab });
  else if (msg.type === MESSAGE.modelMissing)
    waiter.resolve({ ready: false, missing: true, url: msg.url, status: msg.status });
  else waiter.reject(reviveError(msg.error));
}

function onModel(st, msg) {
  if (msg.type === MESSAGE.modelReady || msg.type === MESSAGE.modelMissing || msg.type === MESSAGE.modelFailed) {
    onModelLoad(st, msg);
  } else if (msg.type === MESSAGE.modelSteps) {
    const waiter = st.pending.get(msg.id);
    if (!waiter) return;
    st.pending.delete(msg.id);
    if (msg.error) waiter.reject(reviveError(msg.error));
    else waiter.resolve(msg.steps);
  } else {
    const onEvent = st.listeners.get(msg.id);
    if (!onEvent) return;
    if (msg.type === MESSAGE.modelDone) {
      st.listeners.delete(msg.id);
      if (msg.error) msg.error = reviveError(msg.error);
    }
    onEvent(msg);
  }
}

function onMessage(st, msg) {
  if (msg.type === MESSAGE.result) {
    const waiter = st.pending.get(msg.id);
    if (!waiter) return;
    st.pending.delete(msg.id);
    waiter.resolve({
      results: msg.results,
      errors: msg.errors.map(({ label, error }) => ({ label, error: reviveError(error) })),
      engineMs: msg.engineMs,
    });
  } else if (isModelMessage(msg.type)) {
    onModel(st, msg);
  }
}

// A worker that broke answers nothing more: a model still loading and the followed generation end
// with its reason too (a generation as the worker would end it, with model-done and an error).
function onFail(st, error) {
  for (const { reject } of st.pending.values()) reject(error);
  st.pending.clear();
  const waiter = st.loading;
  st.loading = null;
  waiter?.reject(error);
  for (const [id, onEvent] of st.listeners) onEvent({ type: MESSAGE.modelDone, id, reason: 'error', error });
  st.listeners.clear();
}

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
  const st = {
    pending: new Map(), // request id → { resolve, reject }
    listeners: new Map(), // generation id → onEvent
    loading: null, // { resolve, reject } of model.load
    nextId: 1,
  };
  return startWorkerClient({
    url,
    name: 'wasm-attention engine',
    what: 'the engine worker',
    threads,
    protocol: MESSAGE,
    onMessage: (msg) => onMessage(st, msg),
    onFail: (error) => onFail(st, error),
    makeClient: ({ info, note }, worker) => ({
      info,
      note,
      run: (groups) => request(st, worker, { type: MESSAGE.run, groups }),
      model: modelClient(st, worker),
      terminate: worker.terminate,
    }),
  });
}
