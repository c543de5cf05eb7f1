// The queue of computations to the engine worker: at most one request is with the worker;
// of the requests made meanwhile only the newest is sent next, and a reply is delivered only
// if no newer request was made since (a newer result, or a page-level refusal, stays shown).
// Knows nothing of the views; `run(groups)` is shared/engine.js's.

/**
 * @param {(groups: object[]) => Promise<object>} run       engine.run
 * @returns {{ request(job), refuse(), busy: boolean, settled(): Promise<void> }}
 *   request({ groups, ...rest }, deliver) — deliver(reply | null, error | null) when current
 *   refuse() — a newer change needs no engine: older replies are dropped
 */
export function createRequests(run) {
  let generation = 0;
  let busy = false;
  let wanted = null;
  const idle = [];

  function pump() {
    if (busy) return;
    const job = wanted;
    if (!job) {
      for (const resolve of idle.splice(0)) resolve();
      return;
    }
    wanted = null;
    busy = true;
    run(job.groups)
      .then(
        (reply) => {
          if (job.generation === generation) job.deliver(reply, null);
        },
        (e) => {
          if (job.generation === generation) job.deliver(null, e);
        },
      )
      .finally(() => {
        busy = false;
        pump();
      });
  }

  return {
    request(groups, deliver) {
      generation += 1;
      wanted = { generation, groups, deliver };
      pump();
    },
    refuse() {
      generation += 1;
      wanted = null;
    },
    get busy() {
      return busy;
    },
    get pending() {
      return busy || wanted !== null;
    },
    settled() {
      return new Promise((resolve) => {
        if (!busy && !wanted) resolve();
        else idle.push(resolve);
      });
    },
  };
}
