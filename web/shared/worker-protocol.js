// The engine worker's protocol, for both of its sides (engine-worker.js and poem/worker.js in the
// worker, engine.js on the page): the message types, the transfer list of a reply, and errors as
// they cross the boundary. Imports nothing, so either side can load it.
//
// Every message is a plain object; typed arrays travel as structured clones, and a reply's
// result buffers are transferred, not copied.
//
// The textbook (engine-worker.js):
//   page → worker  { type: 'init', threads }                     once, first
//   worker → page  { type: 'ready', info, note }  or  { type: 'failed', error }
//   page → worker  { type: 'run', id, groups: [{ label, calls: [{ key, method, args }] }] }
//   worker → page  { type: 'result', id, results: { [key]: result | null },
//                    errors: [{ label, error }], engineMs }
// The calls of a group run in order and stop at the group's first error, which empties the
// whole group; groups are independent. engineMs is the time inside the engine calls only.
//
// The trained poem model (poem/worker.js), page → worker, then worker → page:
//   { type: 'model-load', url }                         url: the model's folder (ends in /)
//     → { type: 'model-ready', config, vocab }          config: loadModel's model.config
//     | { type: 'model-missing', url, status }          a file of the folder is not there (e.g. HTTP 404)
//     | { type: 'model-failed', error }
//   { type: 'model-generate', id, text, maxNew, temperature, topK, seed, stopAtPoemStart, topCount }
//     text: the prompt (the poem start, token 0, goes before it); temperature 0 is greedy
//     → { type: 'model-prompt', id, ids, texts, top, attention, logits }      the prompt fed at once
//     → { type: 'model-token', id, index, token: { id, text, top, temperature }, attention, logits, ms }   per new token
//        temperature: the one the token was drawn at (0: greedy; model-sampling changes it)
//        ms: the worker's time for the token (choosing it, the model's forward, its attention rows)
//     → { type: 'model-done', id, reason, top, logits, error? }
//        reason: 'maxNew' | 'maxLength' | 'poemStart' (the model began a new poem; that token is
//        not kept, top is what it was drawn from) | 'stopped' | 'error'
//   { type: 'model-next', id }       the page drew the last token: compute the next one
//   { type: 'model-stop', id }       ends generation `id` after the token being computed
//   { type: 'model-sampling', id, temperature, topK }   generation `id` samples so from its next token
//   { type: 'model-steps', id, run, layer, head, query }
//     → { type: 'model-steps', id, run, layer, head, query, steps } | { …, error }
// attention: one Float32Array per layer, [nHeads, rows, keys] (rows = the tokens just fed).
// top: [{ id, text, prob }] the most probable next tokens, most probable first.
// logits: Float32Array(vocabSize), those the step's token was chosen from (model-done: after the
// last token, or null), so the page can show the candidates at another temperature.
// Only the newest generation's session is kept; steps of an older one answer with an error.
//
// error: { name, message } (e.g. RangeError + the engine's text), revived on the page as the
// same class where it is a standard one.

export const MESSAGE = Object.freeze({
  init: 'init',
  ready: 'ready',
  failed: 'failed',
  run: 'run',
  result: 'result',
  modelLoad: 'model-load',
  modelReady: 'model-ready',
  modelMissing: 'model-missing',
  modelFailed: 'model-failed',
  modelGenerate: 'model-generate',
  modelPrompt: 'model-prompt',
  modelToken: 'model-token',
  modelDone: 'model-done',
  modelNext: 'model-next',
  modelStop: 'model-stop',
  modelSampling: 'model-sampling',
  modelSteps: 'model-steps',
});

/** Whether a message type is the poem model's (poem/worker.js answers those). */
export const isModelMessage = (type) => typeof type === 'string' && type.startsWith('model-');

/** The ArrayBuffers behind every typed array in a reply (each once), to transfer them. */
export function transferList(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    // A SharedArrayBuffer cannot be transferred (and needs not be).
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferList(v, out);
  }
  return [...out];
}

/** An error as it crosses the boundary: { name, message }. */
export const errorData = (name, message) => ({ name, message });

/** Anything thrown, as { name, message }: the worker's side. */
export function thrownData(e) {
  if (e && typeof e === 'object') {
    const name = typeof e.name === 'string' && e.name !== '' ? e.name : e.constructor?.name || 'Error';
    return errorData(name, typeof e.message === 'string' ? e.message : String(e));
  }
  return errorData('Error', String(e));
}

// What a worker says when asked before it is ready, or about a generation it no longer holds.
export const UNAVAILABLE = Object.freeze({
  engine: errorData('Error', 'the engine is not loaded'),
  model: errorData('Error', 'the model is not loaded'),
  generation: errorData('Error', 'that generation is gone (a newer one replaced it)'),
});

// The classes an error comes back as, so `e instanceof RangeError` and `${e.name}: ${e.message}` hold.
const ERROR_CLASSES = {
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
  RuntimeError: globalThis.WebAssembly?.RuntimeError ?? Error,
};

/** { name, message } back as an Error of that class (an unknown name: an Error so named): the page's side. */
export function reviveError({ name, message }) {
  const Class = Object.hasOwn(ERROR_CLASSES, name) ? ERROR_CLASSES[name] : Error;
  const e = new Class(message);
  if (e.name !== name) e.name = name;
  return e;
}
