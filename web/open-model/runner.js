// The worker's runs of an opened model (worker.js hands them here): a decoder's prompt
// and continuation token by token through model.generate, or an encoder's forward, each with the
// attention of every layer and head, posted as protocol.js says; a paced run (paced.js) for a
// model opened with its head steps.
import { thrownData, transferList } from '../shared/worker-protocol.js';
import { OPEN } from './protocol.js';
import { changeSampling, dropHeld, nextToken, pacedRun } from './paced.js';

let running = null; // { id, stopped, resume? } of the generation in flight
let ended = Promise.resolve(); // settles when the run in flight (if any) has returned

/** A token's text as a label: decoded alone, special tokens kept; its id without a tokenizer. */
const labeller =
  ({ model, tokenized }) =>
  (id) =>
    tokenized ? model.decode([id], { skipSpecialTokens: false }) : `#${id}`;

const promptIds = (model, msg) => (msg.ids ? Int32Array.from(msg.ids) : model.encode(msg.text));

const copyRows = (attention) => attention.map((a) => new Float32Array(a));

/** The three most likely tokens of each position, by softmax of its logits. */
function predictions(logits, n, vocab, labelOf) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = logits.subarray(i * vocab, (i + 1) * vocab);
    let max = -Infinity;
    for (const v of row) if (v > max) max = v;
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    const best = [];
    for (let id = 0; id < vocab; id++) {
      if (best.length < 3 || row[id] > row[best[best.length - 1]]) {
        best.push(id);
        best.sort((a, b) => row[b] - row[a] || a - b);
        if (best.length > 3) best.pop();
      }
    }
    out.push(best.map((id) => ({ id, label: labelOf(id), prob: Math.exp(row[id] - max) / sum })));
  }
  return out;
}

function encode(ctx, msg, ids) {
  const { model, attn, post } = ctx;
  const labelOf = labeller(ctx);
  const start = performance.now();
  const { logits, attention } = model.forward(ids, { attention: true, logits: 'all' });
  const att = copyRows(attention);
  post(
    {
      type: OPEN.encoded,
      id: msg.id,
      ids: Array.from(ids),
      labels: Array.from(ids, labelOf),
      attention: att,
      predictions: logits ? predictions(logits, ids.length, model.config.vocabSize, labelOf) : null,
      ms: performance.now() - start,
      memory: attn.memory(),
    },
    transferList(att),
  );
}

async function generate(ctx, msg, ids) {
  const { model, attn, post } = ctx;
  const labelOf = labeller(ctx);
  const { maxPositions } = model.config;
  const maxNew = Math.max(0, Math.min(msg.maxNew, maxPositions - ids.length));
  const job = { id: msg.id, stopped: false };
  running = job;
  const session = model.createSession({ maxLength: ids.length + maxNew, kvDtype: msg.kvDtype ?? 'f32' });
  const start = performance.now();
  try {
    // The prompt but its last token at once (its maps); generate feeds the last one, and the row
    // that token's position gets arrives with the first new token.
    const head = ids.subarray(0, ids.length - 1);
    const first = head.length
      ? copyRows(model.forward(head, { session, attention: true, logits: 'none' }).attention)
      : [];
    post(
      { type: OPEN.prompt, id: msg.id, ids: Array.from(ids), labels: Array.from(ids, labelOf), attention: first },
      transferList(first),
    );
    let result = { ids: new Int32Array(0), text: '' };
    if (maxNew > 0) {
      result = await model.generate(ids.subarray(head.length), {
        session,
        maxNewTokens: maxNew,
        temperature: msg.temperature,
        topK: msg.topK,
        seed: msg.seed,
        attention: true,
        onToken: ({ id, text, attention }) => {
          const rows = copyRows(attention);
          post(
            { type: OPEN.token, id: msg.id, token: { id, label: labelOf(id), piece: text }, rows },
            transferList(rows),
          );
          // generate gives the event loop a turn between tokens, so a stop posted by the page is read.
          return !job.stopped && running === job;
        },
      });
    }
    // The final token's own row: generate feeds it without attention, so feed it again.
    const all = session.length;
    const lastId = all > ids.length ? result.ids[result.ids.length - 1] : ids[ids.length - 1];
    if (session.length === ids.length + result.ids.length) session.truncate(all - 1);
    const last = copyRows(model.forward([lastId], { session, attention: true, logits: 'none' }).attention);
    const ended = result.ids.length < maxNew;
    post(
      {
        type: OPEN.done,
        id: msg.id,
        ids: Array.from(result.ids),
        text: result.text,
        last,
        reason: job.stopped ? 'stopped' : ended ? 'eos' : 'maxNew',
        ms: performance.now() - start,
        memory: attn.memory(),
      },
      transferList(last),
    );
  } finally {
    session.dispose();
    if (running === job) running = null;
  }
}

/** Stops a run after the token being computed (a paced one waiting for the page at once). */
function stopJob(job) {
  job.stopped = true;
  job.resume?.();
}

/**
 * Runs a prompt (a 'run' message) on the model in `context`: { model, tokenized, attn, post, poem,
 * generate } (poem and generate: the model opened with its head steps, and its paced generator).
 * A newer run stops the one in flight.
 */
export function runPrompt(context, msg) {
  if (running) stopJob(running);
  dropHeld();
  const run = runOnce(context, msg);
  ended = run;
  return run;
}

async function runOnce(context, msg) {
  const { model, post } = context;
  try {
    if (!model) throw new Error('no model is loaded');
    if (msg.paced) {
      // the model's own encoding (the poem start first), its checks in its words
      await paced(context, msg);
      return;
    }
    const ids = promptIds(model, msg);
    if (ids.length === 0) throw new RangeError('the prompt has no tokens');
    if (ids.length > model.config.maxPositions) {
      throw new RangeError(
        `the prompt has ${ids.length} tokens, more than the ${model.config.maxPositions} positions this model holds`,
      );
    }
    if (model.config.causal) await generate(context, msg, ids);
    else encode(context, msg, ids);
  } catch (e) {
    post({ type: OPEN.runFailed, id: msg.id, error: thrownData(e) });
  }
}

/**
 * Settles once no run is in flight: a model may be disposed only then, since generate still reads
 * it (and its session) between the tokens.
 */
export function runsEnded() {
  return ended;
}

/** A paced run, the one in flight while it lasts; its session stays for head steps (paced.js). */
async function paced(context, msg) {
  const job = { id: msg.id, stopped: false };
  running = job;
  try {
    await pacedRun(context, msg, job);
  } finally {
    if (running === job) running = null;
  }
}

/** Ends generation `id` after the token being computed (every one, without an id). */
export function stopRun(id) {
  if (running && (id === undefined || running.id === id)) stopJob(running);
}

/** The paced run `id` may compute its next token: the page drew the last one. */
export function nextRunToken(id) {
  nextToken(running, id);
}

/** The paced run `id` samples so from its next token on. */
export function changeRunSampling(msg) {
  changeSampling(running, msg);
}

/** Frees what a finished paced run kept for head steps (before its model goes). */
export const releaseRuns = dropHeld;
