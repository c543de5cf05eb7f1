// What the page's sides of its workers (engine.js, open-model/client.js) share: starting a module
// worker, its init → ready | failed handshake, and failing once. A worker that breaks takes
// everything waiting on it down with the same reason, so no request waits for a reply that
// cannot come.
import { reviveError } from './worker-protocol.js';

/**
 * Starts `url` as a module worker named `name` and posts it { type: protocol.init, threads }.
 * Resolves to makeClient({ info, note }, link) when it answers protocol.ready; rejects with why it
 * could not start: the Worker constructor's error, its protocol.failed error (revived), or, in
 * the words of `what` (e.g. 'the engine worker'), a script that stopped or a message that could
 * not be read. Every other message goes to onMessage(msg).
 * link: { post(msg), broken (the reason it failed, or null), terminate() }.
 * After the first failure the worker is terminated and onFail(reason) is told, once, to fail
 * whatever the client has waiting.
 */
export function startWorkerClient({ url, name, what, threads, protocol, onMessage, onFail, makeClient }) {
  let worker;
  try {
    worker = new Worker(url, { type: 'module', name });
  } catch (e) {
    return Promise.reject(e);
  }
  let broken = null;

  return new Promise((resolve, reject) => {
    const fail = (error) => {
      if (broken) return;
      broken = error;
      worker.terminate();
      reject(error);
      onFail(error);
    };
    const link = {
      post: (msg) => worker.postMessage(msg),
      get broken() {
        return broken;
      },
      terminate: () => fail(new Error(`${what} was terminated`)),
    };

    worker.onmessage = ({ data: msg }) => {
      if (msg.type === protocol.ready) resolve(makeClient({ info: msg.info, note: msg.note }, link));
      else if (msg.type === protocol.failed) fail(reviveError(msg.error));
      else onMessage(msg);
    };
    worker.onmessageerror = () => fail(new Error(`a message from ${what} could not be read`));
    worker.onerror = (event) => {
      event.preventDefault();
      fail(new Error(`${what} stopped: ${event.message || 'its script could not be loaded'}`));
    };
    worker.postMessage({ type: protocol.init, threads });
  });
}
