// The trained poem model's half of the engine worker (engine-worker.js routes its messages
// here): loads the model folder with the package's loadModel, runs a prompt and the generation
// token by token, answers the four steps of one head. The page's thread only posts requests and
// draws what comes back. Its messages (model-*) are worker-protocol.js's.
import { MESSAGE, UNAVAILABLE, thrownData, transferList } from '../shared/worker-protocol.js';
import { fetchModelFiles } from './model/files.js';

// The runtime (poem/model/) is imported when a model is asked for, so the textbook's engine
// starts even where the runtime cannot load.
const RUNTIME_URL = './model/index.js';

let runtime = null; // the module at RUNTIME_URL
let model = null;
let current = null; // { id, session, stopped }

async function load({ url }, post, pkg, attn) {
  const files = await fetchModelFiles(url);
  if (files.missing) {
    post({ type: MESSAGE.modelMissing, ...files.missing });
    return;
  }
  runtime = await import(RUNTIME_URL);
  model?.dispose();
  model = null;
  model = await runtime.openPoemModel(pkg, attn, files);
  post({ type: MESSAGE.modelReady, config: { ...model.config }, vocab: Array.from(model.vocab) });
}

const copyAttention = (attention) => attention.map((a) => new Float32Array(a));

function end(job) {
  job.stopped = true;
  job.resume?.();
  job.session.dispose();
}

async function run(msg, post) {
  if (current) end(current);
  const ids = Array.from(model.encode(msg.text)); // the poem start, then the prompt's characters
  const maxLength = Math.min(model.config.maxPositions, ids.length + msg.maxNew);
  const session = model.createSession({ maxLength });
  const job = { id: msg.id, session, stopped: false, resume: null, steps: null };
  current = job;
  const fed = session.feed(ids);
  const top = model.topTokens(fed.logits, msg.topCount, msg.temperature > 0 ? msg.temperature : 1);
  const attention = copyAttention(fed.attention);
  // The logits go with each step so the page can show its bars at any temperature (live).
  const logits = new Float32Array(fed.logits);
  post(
    { type: MESSAGE.modelPrompt, id: msg.id, ids, texts: ids.map((t) => model.tokenText(t)), top, attention, logits },
    transferList({ attention, logits }),
  );
  const steps = runtime.generate(session, {
    maxNew: maxLength - ids.length,
    temperature: msg.temperature,
    topK: msg.topK,
    seed: msg.seed,
    stopAtPoemStart: msg.stopAtPoemStart,
    topCount: msg.topCount,
  });
  job.steps = steps;
  // One token, then wait until the page has drawn it (model-next): the page sees every token
  // on its own, never a backlog, and meanwhile the worker reads its messages (a stop, a steps
  // request, a newer generation).
  for (let index = 0; ; index++) {
    const start = performance.now();
    const step = steps.next();
    if (step.done) {
      const after = session.logits; // what would come next: the page's bars after the run
      post(
        { type: MESSAGE.modelDone, id: msg.id, reason: step.value.stop, top: step.value.top, logits: after },
        after ? [after.buffer] : [],
      );
      return;
    }
    const { id, text, top: stepTop, attention: rows, logits: stepLogits, temperature } = step.value;
    const att = copyAttention(rows);
    // the worker's time for this token: choosing it, the model's forward, its attention rows
    const ms = performance.now() - start;
    post(
      {
        type: MESSAGE.modelToken,
        id: msg.id,
        index,
        token: { id, text, top: stepTop, temperature },
        attention: att,
        logits: stepLogits,
        ms,
      },
      transferList({ att, stepLogits }),
    );
    await new Promise((resolve) => {
      job.resume = resolve;
    });
    job.resume = null;
    if (job.stopped || current !== job) {
      post({ type: MESSAGE.modelDone, id: msg.id, reason: 'stopped', top: null });
      return;
    }
  }
}

async function steps({ id, run: runId, layer, head, query }, post) {
  const reply = { type: MESSAGE.modelSteps, id, run: runId, layer, head, query };
  if (!current || current.id !== runId) {
    post({ ...reply, error: UNAVAILABLE.generation });
    return;
  }
  try {
    const s = await current.session.headSteps(layer, head, query);
    const out = Object.fromEntries(
      Object.entries(s).map(([k, v]) => [k, ArrayBuffer.isView(v) ? new Float32Array(v) : v]),
    );
    post({ ...reply, steps: out }, transferList(out));
  } catch (e) {
    post({ ...reply, error: thrownData(e) });
  }
}

/**
 * Handles a model-* message; false for any other.
 * @param {object} msg
 * @param {{ post(msg, transfer?), attn, pkg }} ctx   pkg: the package's module (loadModel …)
 */
export async function handleModelMessage(msg, { post, attn, pkg }) {
  switch (msg.type) {
    case MESSAGE.modelLoad:
      try {
        await load(msg, post, pkg, attn);
      } catch (e) {
        post({ type: MESSAGE.modelFailed, error: thrownData(e) });
      }
      return true;
    case MESSAGE.modelGenerate:
      if (!model) {
        post({ type: MESSAGE.modelDone, id: msg.id, reason: 'error', error: UNAVAILABLE.model });
        return true;
      }
      try {
        await run(msg, post);
      } catch (e) {
        post({ type: MESSAGE.modelDone, id: msg.id, reason: 'error', error: thrownData(e) });
      }
      return true;
    case MESSAGE.modelNext:
      if (current && current.id === msg.id) current.resume?.();
      return true;
    case MESSAGE.modelSampling:
      // Applies from the next token on; a finished or replaced generation has nothing to change.
      if (current && current.id === msg.id && current.steps && !current.stopped)
        current.steps.setSampling({ temperature: msg.temperature, topK: msg.topK });
      return true;
    case MESSAGE.modelStop:
      if (current && current.id === msg.id) {
        current.stopped = true;
        current.resume?.();
      }
      return true;
    case MESSAGE.modelSteps:
      await steps(msg, post);
      return true;
    default:
      return false;
  }
}
