// The trained poem model's half of the engine worker (engine-worker.js routes its messages
// here): loads the weights, runs a prompt and the generation token by token, answers the
// four steps of one head. The page's thread only posts requests and draws what comes back.
//
// Protocol (page → worker, then worker → page):
//   { type: 'model-load', url }
//     → { type: 'model-ready', config, vocab }
//     | { type: 'model-missing', url, status }          the file is not there (e.g. HTTP 404)
//     | { type: 'model-failed', error }
//   { type: 'model-generate', id, text, maxNew, temperature, topK, seed, stopAtPoemStart, topCount }
//     text: the prompt (the poem start, token 0, goes before it); temperature 0 is greedy
//     → { type: 'model-prompt', id, ids, texts, top, attention }      the prompt fed at once
//     → { type: 'model-token', id, index, token: { id, text, top }, attention }   per new token
//     → { type: 'model-done', id, reason, top, error? }
//        reason: 'maxNew' | 'maxLength' | 'poemStart' (the model began a new poem; that token is
//        not kept, top is what it was drawn from) | 'stopped' | 'error'
//   { type: 'model-next', id }       the page drew the last token: compute the next one
//   { type: 'model-stop', id }       ends generation `id` after the token being computed
//   { type: 'model-steps', id, run, layer, head, query }
//     → { type: 'model-steps', id, run, layer, head, query, steps } | { …, error }
// attention: one Float32Array per layer, [nHeads, rows, keys] (rows = the tokens just fed).
// top: [{ id, text, prob }] the most probable next tokens, most probable first.
// Only the newest generation's session is kept; steps of an older one answer with an error.

// The runtime (web/model/) is imported when a model is asked for, so the textbook's engine
// starts even where the runtime cannot load.
const RUNTIME_URL = './model/index.js';

const BOS = 0; // the corpus starts every poem with token 0, '<s>'; so does the page's prompt

let runtime = null; // the module at RUNTIME_URL
let model = null;
let current = null; // { id, session, stopped }

const buffersOf = (arrays) => arrays.map((a) => a.buffer);

async function load({ url }, post, readSafetensors, attn) {
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    post({ type: 'model-missing', url, status: 0, error: String(e && e.message ? e.message : e) });
    return;
  }
  if (!response.ok) {
    post({ type: 'model-missing', url, status: response.status });
    return;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  runtime = await import(RUNTIME_URL);
  model = runtime.createPoemModel(attn, readSafetensors(bytes));
  post({ type: 'model-ready', config: { ...model.config }, vocab: Array.from(model.vocab) });
}

const copyAttention = (attention) => attention.map((a) => new Float32Array(a));

function end(job) {
  job.stopped = true;
  job.resume?.();
  job.session.dispose();
}

async function run(msg, post) {
  if (current) end(current);
  const ids = [BOS, ...model.encode(msg.text)];
  const maxLength = Math.min(model.config.maxLen, ids.length + msg.maxNew);
  const session = model.createSession({ maxLength });
  const job = { id: msg.id, session, stopped: false, resume: null };
  current = job;
  const fed = session.feed(ids);
  const top = model.topTokens(fed.logits, msg.topCount, msg.temperature > 0 ? msg.temperature : 1);
  const attention = copyAttention(fed.attention);
  post({ type: 'model-prompt', id: msg.id, ids, texts: ids.map((t) => model.tokenText(t)), top, attention }, buffersOf(attention));
  const steps = runtime.generate(session, {
    maxNew: maxLength - ids.length, temperature: msg.temperature, topK: msg.topK, seed: msg.seed,
    stopAtPoemStart: msg.stopAtPoemStart, topCount: msg.topCount,
  });
  // One token, then wait until the page has drawn it (model-next): the page sees every token
  // on its own, never a backlog, and meanwhile the worker reads its messages (a stop, a steps
  // request, a newer generation).
  for (let index = 0; ; index++) {
    const step = steps.next();
    if (step.done) {
      post({ type: 'model-done', id: msg.id, reason: step.value.stop, top: step.value.top });
      return;
    }
    const { id, text, top: stepTop, attention: rows } = step.value;
    const att = copyAttention(rows);
    post({ type: 'model-token', id: msg.id, index, token: { id, text, top: stepTop }, attention: att }, buffersOf(att));
    await new Promise((resolve) => { job.resume = resolve; });
    job.resume = null;
    if (job.stopped || current !== job) {
      post({ type: 'model-done', id: msg.id, reason: 'stopped', top: null });
      return;
    }
  }
}

function steps({ id, run: runId, layer, head, query }, post, errorData) {
  const reply = { type: 'model-steps', id, run: runId, layer, head, query };
  if (!current || current.id !== runId) {
    post({ ...reply, error: { name: 'Error', message: 'that generation is gone (a newer one replaced it)' } });
    return;
  }
  try {
    const s = current.session.headSteps(layer, head, query);
    const out = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, ArrayBuffer.isView(v) ? new Float32Array(v) : v]));
    post({ ...reply, steps: out }, Object.values(out).filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer));
  } catch (e) {
    post({ ...reply, error: errorData(e) });
  }
}

/**
 * Handles a model-* message; false for any other.
 * @param {object} msg
 * @param {{ post(msg, transfer?), attn, readSafetensors, errorData(e) }} ctx
 */
export async function handleModelMessage(msg, { post, attn, readSafetensors, errorData }) {
  switch (msg.type) {
    case 'model-load':
      try {
        await load(msg, post, readSafetensors, attn);
      } catch (e) {
        post({ type: 'model-failed', error: errorData(e) });
      }
      return true;
    case 'model-generate':
      if (!model) {
        post({ type: 'model-done', id: msg.id, reason: 'error', error: { name: 'Error', message: 'the model is not loaded' } });
        return true;
      }
      try {
        await run(msg, post);
      } catch (e) {
        post({ type: 'model-done', id: msg.id, reason: 'error', error: errorData(e) });
      }
      return true;
    case 'model-next':
      if (current && current.id === msg.id) current.resume?.();
      return true;
    case 'model-stop':
      if (current && current.id === msg.id) {
        current.stopped = true;
        current.resume?.();
      }
      return true;
    case 'model-steps':
      steps(msg, post, errorData);
      return true;
    default:
      return false;
  }
}
