// The model worker's messages, for both of its sides (worker.js in the worker, client.js on the
// page): "Open a model" and the poem tab each start one, and each worker owns its own engine, so a
// checkpoint the user opens never shares memory with the poem model's. Imports nothing, so either
// side can load it.
//
// page → worker, then worker → page:
//   { type: 'init', threads }                        once, first
//     → { type: 'ready', info, note } | { type: 'failed', error }
//   { type: 'load', id, dtype, files: { config, tokenizer, weights: File[] } }   File objects: the
//        worker reads their bytes itself (a File crosses as a handle, its bytes are read once, there)
//   { type: 'load', id, dtype, url }                 a checkpoint folder's URL, ending in /
//     dtype: how the engine stores the weight matrices (loadModel's dtype: f32, f16, bf16, int8)
//   { type: 'load', id, url, withSteps: true }      a folder opened with its head steps (the poem
//        model's: config.json, tokenizer.json, model.safetensors; its tensors kept for the steps)
//     → { type: 'progress', id, file, loaded, total, memory }        as the bytes arrive
//     → { type: 'loaded', id, config, dtype, hasTokenizer, files: [{ name, bytes }], memory, ms }
//        withSteps: + vocab, each token's own text ('<s>' kept), and kvHeads, each query head's K/V
//        head (the package's kvHeadOf)
//     | { type: 'load-failed', id, error, cancelled, memory }
//        withSteps: + missing: { url, status } when a file of the folder is not there (e.g. HTTP 404)
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
//     either   → { type: 'run-failed', id, error }           (a paced run too)
//   { type: 'run', id, text, maxNew, temperature, topK, seed, paced: true, stopAtPoemStart, topCount }
//        a paced run, of a model opened withSteps; text: the prompt (the poem start goes before it),
//        temperature 0 is greedy
//     → { type: 'paced-prompt', id, ids, texts, top, attention, logits }   the prompt fed at once, every row
//     → { type: 'paced-token', id, index, token: { id, text, top, temperature }, attention, logits, ms }
//        per new token, each once the page asked for it (next); attention: the new token's rows
//        (per layer [heads, 1, keys]); temperature: the one it was drawn at (0: greedy); ms: the
//        worker's time for it (choosing it, the model's forward, its attention rows)
//     → { type: 'paced-done', id, reason, top, logits }
//        reason: 'maxNew' | 'maxLength' | 'poemStart' (the model began a new poem; that token is
//        not kept, top is what it was drawn from) | 'stopped'
//     top: [{ id, text, prob }] the most probable next tokens (topCount of them), most probable first;
//     logits: Float32Array(vocabSize), those the step's token was chosen from (paced-done: after the
//     last token, or null), so the page can show the candidates at another temperature
//   { type: 'next', id }                             paced run `id`: the page drew the last token, compute the next
//   { type: 'sampling', id, temperature, topK }      paced run `id` samples so from its next token
//   { type: 'head-steps', id, run, layer, head, query }   the four steps of one head over paced run
//        `run`'s tokens (only the latest run's session is kept)
//     → { type: 'head-steps', id, run, layer, head, query, steps } | { …, error }
//        steps: { q, keys, values, scores, scaledScores, weights, output, kvHead, scale } (head-steps.js)
//        and masked: [keys] booleans, the keys the query may not see (the package's isKeyMasked)
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
  pacedPrompt: 'paced-prompt',
  pacedToken: 'paced-token',
  pacedDone: 'paced-done',
  next: 'next',
  sampling: 'sampling',
  headSteps: 'head-steps',
  stop: 'stop',
  close: 'close',
  closed: 'closed',
});
