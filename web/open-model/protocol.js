// The "Open a model" worker's messages, for both of its sides (worker.js in the worker,
// client.js on the page). Imports nothing, so either side can load it. The worker owns
// its own engine: a checkpoint the user opens never shares memory with the poem model's engine.
//
// page → worker, then worker → page:
//   { type: 'init', threads }                        once, first
//     → { type: 'ready', info, note } | { type: 'failed', error }
//   { type: 'load', id, dtype, files: { config, tokenizer, weights: File[] } }   File objects: the
//        worker reads their bytes itself (a File crosses as a handle, its bytes are read once, there)
//   { type: 'load', id, dtype, url }                 a checkpoint folder's URL, ending in /
//     dtype: how the engine stores the weight matrices (loadModel's dtype: f32, f16, bf16, int8)
//     → { type: 'progress', id, file, loaded, total, memory }        as the bytes arrive
//     → { type: 'loaded', id, config, dtype, hasTokenizer, files: [{ name, bytes }], memory, ms }
//     | { type: 'load-failed', id, error, cancelled, memory }
//   { type: 'cancel', id }                           aborts load `id` (or stops run `id`)
//   { type: 'run', id, text | ids, maxNew, temperature, topK, seed }
//        kvDtype: how a decoder's session stores K and V (createSession's kvDtype: f32, f16, bf16)
//     a decoder → { type: 'prompt', id, ids, labels, attention }    the prompt but its last token, fed at once
//              → { type: 'token', id, token: { id, label, piece }, rows }   per new token; rows: the
//                 attention of the position that chose it (per layer [heads, keys])
//              → { type: 'done', id, ids, text, last: rows, reason, ms, memory }
//                 last: the rows of the final token; reason: 'maxNew' | 'eos' | 'stopped'
//     a bert   → { type: 'encoded', id, ids, labels, attention, predictions, ms, memory }
//                 predictions: per position [{ id, label, prob }] (the masked-LM head's best 3) or null
//     either   → { type: 'run-failed', id, error }
//   { type: 'stop', id }                             ends generation `id` after the token being computed
//   { type: 'close', id }                            cancels a load in flight, stops a run and waits
//        for its end, then disposes the model (its session went with the run)
//     → { type: 'closed', id, memory }               memory: what the engine holds once it is gone
//
// attention: per layer a Float32Array [heads, rows, keys]; memory: attn.memory().
// error: { name, message } (worker-protocol.js's thrownData / reviveError).

export const OPEN = Object.freeze({
  init: 'init',
  ready: 'ready',
  failed: 'failed',
  load: 'load',
  progress: 'progress',
  loaded: 'loaded',
  loadFailed: 'load-failed',
  cancel: 'cancel',
  run: 'run',
  prompt: 'prompt',
  token: 'token',
  done: 'done',
  encoded: 'encoded',
  runFailed: 'run-failed',
  stop: 'stop',
  close: 'close',
  closed: 'closed',
});
