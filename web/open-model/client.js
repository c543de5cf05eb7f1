// The page's side of the "Open a model" worker (open-model-worker.js): starts it, and turns its
// messages (open-model-protocol.js) into promises and callbacks. Nothing here computes or reads
// a checkpoint's bytes: Files are posted as they are (handles), and the worker reads them.
import { reviveError } from '../shared/worker-protocol.js';
import { OPEN } from './protocol.js';
import { startWorkerClient } from '../shared/worker-client.js';

/**
 * Starts the worker and its engine. Resolves to the client once the engine is loaded; rejects with
 * the reason it could not load.
 *   load({ files } | { url }, onProgress) → { id, done: Promise<loaded> }; done rejects with the
 *     worker's error (revived), its `cancelled` true when cancel(id) stopped it
 *   cancel(id); run(request, onEvent) → id, onEvent(msg) for each of its messages; stop(id);
 *   close() → Promise<{ memory }> once the worker has freed the model; terminate()
 */
export function startOpenModelWorker({ threads = 'auto', url = new URL('./worker.js', import.meta.url) } = {}) {
  const loads = new Map(); // id → { resolve, reject, onProgress }
  const runs = new Map(); // id → onEvent
  const closes = new Map(); // id → resolve
  let nextId = 1;

  const client = ({ info, note }, worker) => ({
    info,
    note,
    load(source, onProgress = () => {}) {
      const id = nextId++;
      const done = worker.broken
        ? Promise.reject(worker.broken)
        : new Promise((resolveLoad, rejectLoad) => {
            loads.set(id, { resolve: resolveLoad, reject: rejectLoad, onProgress });
            worker.post({ type: OPEN.load, id, ...source });
          });
      return { id, done };
    },
    cancel(id) {
      worker.post({ type: OPEN.cancel, id });
    },
    run(request, onEvent) {
      const id = nextId++;
      runs.clear(); // only the newest run is followed
      runs.set(id, onEvent);
      worker.post({ type: OPEN.run, id, ...request });
      return id;
    },
    stop(id) {
      worker.post({ type: OPEN.stop, id });
    },
    close() {
      if (worker.broken) return Promise.reject(worker.broken);
      const id = nextId++;
      runs.clear(); // what the closed model's run still sends is not wanted
      return new Promise((resolve, reject) => {
        closes.set(id, { resolve, reject });
        worker.post({ type: OPEN.close, id });
      });
    },
    terminate: worker.terminate,
  });

  const onLoad = (msg) => {
    const waiter = loads.get(msg.id);
    if (!waiter) return;
    if (msg.type === OPEN.progress) {
      waiter.onProgress(msg);
      return;
    }
    loads.delete(msg.id);
    if (msg.type === OPEN.loaded) waiter.resolve(msg);
    else {
      const error = reviveError(msg.error);
      error.cancelled = msg.cancelled;
      error.memory = msg.memory;
      waiter.reject(error);
    }
  };

  const onRun = (msg) => {
    const onEvent = runs.get(msg.id);
    if (!onEvent) return;
    if (msg.type === OPEN.runFailed) msg.error = reviveError(msg.error);
    if (msg.type === OPEN.done || msg.type === OPEN.encoded || msg.type === OPEN.runFailed) runs.delete(msg.id);
    onEvent(msg);
  };

  const onClosed = (msg) => {
    closes.get(msg.id)?.resolve(msg);
    closes.delete(msg.id);
  };

  const onMessage = (msg) => {
    if (msg.type === OPEN.closed) onClosed(msg);
    else if (msg.type === OPEN.progress || msg.type === OPEN.loaded || msg.type === OPEN.loadFailed) onLoad(msg);
    else onRun(msg);
  };

  const onFail = (error) => {
    for (const { reject } of loads.values()) reject(error);
    loads.clear();
    for (const onEvent of runs.values()) onEvent({ type: OPEN.runFailed, error });
    runs.clear();
    for (const { reject } of closes.values()) reject(error);
    closes.clear();
  };

  return startWorkerClient({
    url,
    name: 'wasm-attention open-model',
    what: 'the worker of "Open a model"',
    threads,
    protocol: OPEN,
    onMessage,
    onFail,
    makeClient: client,
  });
}
