// The page's side of a model worker (worker.js; "Open a model" and the poem tab start one each):
// starts it, and turns its messages (protocol.js) into promises and callbacks. Nothing here computes or reads
// a checkpoint's bytes: Files are posted as they are (handles), and the worker reads them.
import { reviveError } from '../shared/worker-protocol.js';
import { OPEN } from './protocol.js';
import { startWorkerClient } from '../shared/worker-client.js';

// The messages after which a run sends nothing more.
const RUN_ENDS = new Set([OPEN.done, OPEN.encoded, OPEN.pacedDone, OPEN.runFailed]);

/** The client's methods over the worker's link (see startOpenModelWorker). */
function clientOf(st, worker) {
  return {
    load(source, onProgress = () => {}) {
      const id = st.nextId++;
      const done = worker.broken
        ? Promise.reject(worker.broken)
        : new Promise((resolveLoad, rejectLoad) => {
            st.loads.set(id, { resolve: resolveLoad, reject: rejectLoad, onProgress });
            worker.post({ type: OPEN.load, id, ...source });
          });
      return { id, done };
    },
    cancel(id) {
      worker.post({ type: OPEN.cancel, id });
    },
    ...runMethods(st, worker),
    close() {
      if (worker.broken) return Promise.reject(worker.broken);
      const id = st.nextId++;
      st.runs.clear(); // what the closed model's run still sends is not wanted
      return new Promise((resolve, reject) => {
        st.closes.set(id, { resolve, reject });
        worker.post({ type: OPEN.close, id });
      });
    },
    terminate: worker.terminate,
  };
}

/** A run's methods: run, stop, and for a paced run next, sampling and headSteps. */
function runMethods(st, worker) {
  return {
    run(request, onEvent) {
      const id = st.nextId++;
      st.runs.clear(); // only the newest run is followed
      if (worker.broken) {
        // Told after it returns, as a live worker's events are: the caller has its id by then.
        const error = worker.broken;
        queueMicrotask(() => onEvent({ type: OPEN.runFailed, id, error }));
        return id;
      }
      st.runs.set(id, onEvent);
      worker.post({ type: OPEN.run, id, ...request });
      return id;
    },
    stop(id) {
      worker.post({ type: OPEN.stop, id });
    },
    next(id) {
      worker.post({ type: OPEN.next, id });
    },
    sampling(id, { temperature, topK }) {
      worker.post({ type: OPEN.sampling, id, temperature, topK });
    },
    headSteps(request) {
      if (worker.broken) return Promise.reject(worker.broken);
      const id = st.nextId++;
      return new Promise((resolve, reject) => {
        st.steps.set(id, { resolve, reject });
        worker.post({ type: OPEN.headSteps, id, ...request });
      });
    },
  };
}

function onLoad(st, msg) {
  const waiter = st.loads.get(msg.id);
  if (!waiter) return;
  if (msg.type === OPEN.progress) {
    waiter.onProgress(msg);
    return;
  }
  st.loads.delete(msg.id);
  if (msg.type === OPEN.loaded) waiter.resolve(msg);
  else {
    const error = reviveError(msg.error);
    error.cancelled = msg.cancelled;
    error.memory = msg.memory;
    if (msg.missing) error.missing = msg.missing;
    waiter.reject(error);
  }
}

function onRun(st, msg) {
  const onEvent = st.runs.get(msg.id);
  if (!onEvent) return;
  if (msg.type === OPEN.runFailed) msg.error = reviveError(msg.error);
  if (RUN_ENDS.has(msg.type)) st.runs.delete(msg.id);
  onEvent(msg);
}

function onSteps(st, msg) {
  const waiter = st.steps.get(msg.id);
  if (!waiter) return;
  st.steps.delete(msg.id);
  if (msg.error) waiter.reject(reviveError(msg.error));
  else waiter.resolve(msg.steps);
}

function onMessage(st, msg) {
  if (msg.type === OPEN.headSteps) onSteps(st, msg);
  else if (msg.type === OPEN.closed) {
    st.closes.get(msg.id)?.resolve(msg);
    st.closes.delete(msg.id);
  } else if (msg.type === OPEN.progress || msg.type === OPEN.loaded || msg.type === OPEN.loadFailed) onLoad(st, msg);
  else onRun(st, msg);
}

function onFail(st, error) {
  for (const { reject } of st.loads.values()) reject(error);
  st.loads.clear();
  for (const [id, onEvent] of st.runs) onEvent({ type: OPEN.runFailed, id, error });
  st.runs.clear();
  for (const { reject } of st.closes.values()) reject(error);
  st.closes.clear();
  for (const { reject } of st.steps.values()) reject(error);
  st.steps.clear();
}

/**
 * Starts the worker and its engine (name: the worker's, what: how errors call it). Resolves to the client once the engine is loaded; rejects with
 * the reason it could not load.
 *   load({ files } | { url }, onProgress) → { id, done: Promise<loaded> }; done rejects with the
 *     worker's error (revived), its `cancelled` true when cancel(id) stopped it
 *     (and, for a folder opened withSteps, its `missing` { url, status } when a file is not there)
 *   cancel(id); run(request, onEvent) → id, onEvent(msg) for each of its messages (a worker that
 *     broke: one run-failed); stop(id);
 *   next(id), sampling(id, { temperature, topK }): a paced run's next token, its new sampling;
 *   headSteps({ run, layer, head, query }) → Promise<steps> of the latest paced run;
 *   close() → Promise<{ memory }> once the worker has freed the model; terminate()
 */
export function startOpenModelWorker({
  threads = 'auto',
  url = new URL('./worker.js', import.meta.url),
  name = 'wasm-attention open-model',
  what = 'the worker of "Open a model"',
} = {}) {
  const st = {
    loads: new Map(), // id → { resolve, reject, onProgress }
    runs: new Map(), // id → onEvent
    closes: new Map(), // id → { resolve, reject }
    steps: new Map(), // id → { resolve, reject } of headSteps
    nextId: 1,
  };
  return startWorkerClient({
    url,
    name,
    what,
    threads,
    protocol: OPEN,
    onMessage: (msg) => onMessage(st, msg),
    onFail: (error) => onFail(st, error),
    makeClient: ({ info, note }, worker) => ({ info, note, ...clientOf(st, worker) }),
  });
}
