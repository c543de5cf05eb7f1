// The runner's extension for a model opened with its head steps (the poem tab's, `load` with
// withSteps): a paced run, which feeds the prompt at once and then computes one token per `next`
// from the page, each with the candidates it was drawn from and its logits, its sampling changeable
// between tokens; and the four steps of one head over the last paced run's tokens, whose session is
// kept for them until the next run. Messages: protocol.js; the model: poem/model/ (openPoemModel).
import { errorData, thrownData, transferList } from '../shared/worker-protocol.js';
import { OPEN } from './protocol.js';

// Steps asked of a run that is no longer the last one: its session is gone.
const GONE = errorData('Error', 'that generation is gone (a newer one replaced it)');

let held = null; // the last paced run: { id, session, stopped, resume, steps }

const copyAttention = (attention) => attention.map((a) => new Float32Array(a));

/** Frees the last paced run's session (a new run replaces it; a closed model takes it). */
export function dropHeld() {
  held?.session?.dispose();
  held = null;
}

/** The prompt fed at once: every row of its attention, the first new token's candidates and logits. */
function feedPrompt({ poem, post }, msg, session, ids) {
  const fed = session.feed(ids);
  const top = poem.topTokens(fed.logits, msg.topCount, msg.temperature > 0 ? msg.temperature : 1);
  const attention = copyAttention(fed.attention);
  // The logits go with each step so the page can show its bars at any temperature (live).
  const logits = new Float32Array(fed.logits);
  post(
    { type: OPEN.pacedPrompt, id: msg.id, ids, texts: ids.map((t) => poem.tokenText(t)), top, attention, logits },
    transferList({ attention, logits }),
  );
}

/** One generated token as the page gets it; ms: the worker's time for it (choosing it, the forward, its rows). */
function postToken(post, msg, index, step, ms) {
  const { id, text, top, attention: rows, logits, temperature } = step;
  const attention = copyAttention(rows);
  post(
    { type: OPEN.pacedToken, id: msg.id, index, token: { id, text, top, temperature }, attention, logits, ms },
    transferList({ attention, logits }),
  );
}

/**
 * A paced run of `msg` ({ id, text, maxNew, temperature, topK, seed, stopAtPoemStart, topCount })
 * on context.poem, as `job` ({ id, stopped }, the runner's; its resume is set here while it waits).
 */
export async function pacedRun(context, msg, job) {
  const { poem, generate, post } = context;
  if (!poem) throw new Error('the model was not opened with its head steps');
  const ids = Array.from(poem.encode(msg.text)); // the poem start, then the prompt's characters
  const maxLength = Math.min(poem.config.maxPositions, ids.length + msg.maxNew);
  job.session = poem.createSession({ maxLength });
  held = job;
  feedPrompt(context, msg, job.session, ids);
  const { temperature, topK, seed, stopAtPoemStart, topCount } = msg;
  job.steps = generate(job.session, {
    maxNew: maxLength - ids.length,
    temperature,
    topK,
    seed,
    stopAtPoemStart,
    topCount,
  });
  // One token, then wait until the page has drawn it (next): the page sees every token on its own,
  // never a backlog, and meanwhile the worker reads its messages (a stop, head steps, a newer run).
  for (let index = 0; ; index++) {
    const start = performance.now();
    const step = job.steps.next();
    if (step.done) {
      const after = job.session.logits; // what would come next: the page's bars after the run
      const { stop: reason, top } = step.value;
      post({ type: OPEN.pacedDone, id: msg.id, reason, top, logits: after }, after ? [after.buffer] : []);
      return;
    }
    postToken(post, msg, index, step.value, performance.now() - start);
    await new Promise((resolve) => {
      job.resume = resolve;
    });
    job.resume = null;
    if (job.stopped) {
      post({ type: OPEN.pacedDone, id: msg.id, reason: 'stopped', top: null });
      return;
    }
  }
}

/** The paced run `id` draws its next token (the page drew the last one). */
export function nextToken(job, id) {
  if (job && job.id === id) job.resume?.();
}

/** Paced run `id` samples so from its next token on; a finished or replaced run has nothing to change. */
export function changeSampling(job, { id, temperature, topK }) {
  if (job && job.id === id && job.steps && !job.stopped) job.steps.setSampling({ temperature, topK });
}

// The poem model is a decoder: a token sees itself and the tokens before it, no window.
const CAUSAL = Object.freeze({ isCausal: true });

/**
 * The four steps of one head for one query, over the tokens of the last paced run (its id: run),
 * with masked[j] for each key (pkg: the package's module, its isKeyMasked).
 */
export async function headSteps({ id, run, layer, head, query }, post, pkg) {
  const reply = { type: OPEN.headSteps, id, run, layer, head, query };
  if (!held || held.id !== run) {
    post({ ...reply, error: GONE });
    return;
  }
  try {
    const s = await held.session.headSteps(layer, head, query);
    const steps = Object.fromEntries(
      Object.entries(s).map(([k, v]) => [k, ArrayBuffer.isView(v) ? new Float32Array(v) : v]),
    );
    steps.masked = Array.from(s.weights, (_, j) => pkg.isKeyMasked(CAUSAL, query, j));
    post({ ...reply, steps }, transferList(steps));
  } catch (e) {
    post({ ...reply, error: thrownData(e) });
  }
}
