// The page's side of the engine worker (engine-worker.js): starts it, and turns its messages
// into promises. Nothing here computes; the page's thread only posts inputs and receives
// results, so it never waits for the engine (or for the engine's own threads).

// Errors cross the worker boundary as { name, message }; they come back as the same class
// where it is a standard one, so `e instanceof RangeError` and `${e.name}: ${e.message}` hold.
const ERROR_CLASSES = {
  Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError,
  RuntimeError: globalThis.WebAssembly?.RuntimeError ?? Error,
};

export function reviveError({ name, message }) {
  const Class = Object.hasOwn(ERROR_CLASSES, name) ? ERROR_CLASSES[name] : Error;
  const e = new Class(message);
  if (e.name !== name) e.name = name;
  return e;
}

/**
 * Starts the engine in a module worker. Resolves, once the engine is loaded, to
 * { info, note, run(groups), model, terminate() }; rejects with the reason the engine could not load.
 * model (the trained poem model, protocol in poem-worker.js):
 *   load(url) → Promise<{ ready: true, config, vocab } | { ready: false, missing: true, url, status }>
 *     (rejects when the file is there but cannot be used)
 *   generate(request, onEvent) → id; onEvent({ type: 'model-prompt' | 'model-token' | 'model-done', … })
 *   next(id): the last token is drawn, compute the next; stop(id); steps({ run, layer, head, query }) → Promise<steps>
 * run(groups) → Promise<{ results, errors: [{ label, error: Error }], engineMs }> (see the
 * protocol in engine-worker.js). Replies come in the order of the requests.
 */
export function startEngine({ threads = 'auto', url = new URL('./engine-worker.js', import.meta.url) } = {}) {
  let worker;
  try {
    worker = new Worker(url, { type: 'module', name: 'wasm-attention engine' });
  } catch (e) {
    return Promise.reject(e);
  }
  const pending = new Map();
  const listeners = new Map(); // generation id → onEvent
  let loading = null; // { resolve, reject } of model.load
  let nextId = 1;
  let broken = null;

  return new Promise((resolve, reject) => {
    const fail = (error) => {
      if (broken) return;
      broken = error;
      worker.terminate();
      reject(error);
      for (const { reject: rejectRun } of pending.values()) rejectRun(error);
      pending.clear();
    };

    const client = (info, note) => ({
      info,
      note,
      run(groups) {
        if (broken) return Promise.reject(broken);
        const id = nextId++;
        return new Promise((resolveRun, rejectRun) => {
          pending.set(id, { resolve: resolveRun, reject: rejectRun });
          worker.postMessage({ type: 'run', id, groups });
        });
      },
      model: {
        load(url) {
          return new Promise((resolveLoad, rejectLoad) => {
            loading = { resolve: resolveLoad, reject: rejectLoad };
            worker.postMessage({ type: 'model-load', url: String(url) });
          });
        },
        generate(request, onEvent) {
          const id = nextId++;
          listeners.clear(); // only the newest generation is followed
          listeners.set(id, onEvent);
          worker.postMessage({ type: 'model-generate', id, ...request });
          return id;
        },
        next(id) {
          worker.postMessage({ type: 'model-next', id });
        },
        stop(id) {
          worker.postMessage({ type: 'model-stop', id });
        },
        steps(request) {
          if (broken) return Promise.reject(broken);
          const id = nextId++;
          return new Promise((resolveRun, rejectRun) => {
            pending.set(id, { resolve: resolveRun, reject: rejectRun });
            worker.postMessage({ type: 'model-steps', id, ...request });
          });
        },
      },
      terminate() {
        fail(new Error('the engine worker was terminated'));
      },
    });

    const onModel = (msg) => {
      if (msg.type === 'model-ready' || msg.type === 'model-missing' || msg.type === 'model-failed') {
        const waiter = loading;
        loading = null;
        if (!waiter) return;
        if (msg.type === 'model-ready') waiter.resolve({ ready: true, config: msg.config, vocab: msg.vocab });
        else if (msg.type === 'model-missing') waiter.resolve({ ready: false, missing: true, url: msg.url, status: msg.status });
        else waiter.reject(reviveError(msg.error));
      } else if (msg.type === 'model-steps') {
        const waiter = pending.get(msg.id);
        if (!waiter) return;
        pending.delete(msg.id);
        if (msg.error) waiter.reject(reviveError(msg.error));
        else waiter.resolve(msg.steps);
      } else {
        const onEvent = listeners.get(msg.id);
        if (!onEvent) return;
        if (msg.type === 'model-done') {
          listeners.delete(msg.id);
          if (msg.error) msg.error = reviveError(msg.error);
        }
        onEvent(msg);
      }
    };

    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === 'ready') {
        resolve(client(msg.info, msg.note));
      } else if (msg.type === 'failed') {
        fail(reviveError(msg.error));
      } else if (msg.type === 'result') {
        const waiter = pending.get(msg.id);
        if (!waiter) return;
        pending.delete(msg.id);
        waiter.resolve({
          results: msg.results,
          errors: msg.errors.map(({ label, error }) => ({ label, error: reviveError(error) })),
          engineMs: msg.engineMs,
        });
      } else if (typeof msg.type === 'string' && msg.type.startsWith('model-')) {
        onModel(msg);
      }
    };
    worker.onmessageerror = () => fail(new Error('a message from the engine worker could not be read'));
    worker.onerror = (event) => {
      event.preventDefault();
      fail(new Error(`the engine worker stopped: ${event.message || 'its script could not be loaded'}`));
    };
    worker.postMessage({ type: 'init', threads });
  });
}
