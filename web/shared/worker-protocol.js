// The engine worker's protocol, for both of its sides (engine-worker.js in the worker, engine.js
// on the page): the message types, the transfer list of a reply, and errors as they cross the
// boundary, which the model worker's protocol (open-model/protocol.js) shares. Imports nothing, so
// either side can load it.
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
// error: { name, message } (e.g. RangeError + the engine's text), revived on the page as the
// same class where it is a standard one.

export const MESSAGE = Object.freeze({
  init: 'init',
  ready: 'ready',
  failed: 'failed',
  run: 'run',
  result: 'result',
});

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

// What the engine worker says when asked before it is ready.
export const UNAVAILABLE = Object.freeze({
  engine: errorData('Error', 'the engine is not loaded'),
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
