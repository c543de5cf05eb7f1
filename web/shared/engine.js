// The page's side of the engine worker (engine-worker.js): starts it, and turns its messages
// (worker-protocol.js) into promises. Nothing here computes; the page's thread only posts inputs
// and receives results, so it never waits for the engine (or for the engine's own threads).
// The textbook's only: the poem model runs in a model worker of its own (open-model/client.js).

import { MESSAGE, reviveError } from './worker-protocol.js';
import { startWorkerClient } from './worker-client.js';

/**
 * Starts the engine in a module worker. Resolves, once the engine is loaded, to
 * { info, note, run(groups), terminate() }; rejects with the reason the engine could not load.
 * run(groups) → Promise<{ results, errors: [{ label, error: Error }], engineMs }> (see
 * worker-protocol.js). Replies come in the order of the requests.
 */
export function startEngine({ threads = 'auto', url = new URL('./engine-worker.js', import.meta.url) } = {}) {
  const pending = new Map(); // request id → { resolve, reject }
  let nextId = 1;

  const onMessage = (msg) => {
    if (msg.type !== MESSAGE.result) return;
    const waiter = pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    waiter.resolve({
      results: msg.results,
      errors: msg.errors.map(({ label, error }) => ({ label, error: reviveError(error) })),
      engineMs: msg.engineMs,
    });
  };

  // A worker that broke answers nothing more: every request waiting fails with its reason.
  const onFail = (error) => {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };

  return startWorkerClient({
    url,
    name: 'wasm-attention engine',
    what: 'the engine worker',
    threads,
    protocol: MESSAGE,
    onMessage,
    onFail,
    makeClient: ({ info, note }, worker) => ({
      info,
      note,
      run(groups) {
        if (worker.broken) return Promise.reject(worker.broken);
        const id = nextId++;
        return new Promise((resolve, reject) => {
          pending.set(id, { resolve, reject });
          worker.post({ type: MESSAGE.run, id, groups });
        });
      },
      terminate: worker.terminate,
    }),
  });
}
