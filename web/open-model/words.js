// What "Open a model" says: a loaded model's facts, loading progress, memory, and every error in
// the page's words (what went wrong and what to do), never an engine's bare message alone.
import { sizeText } from './files.js';

/** loadModel's messages start with the function's name; the page says who failed itself. */
const bare = (message) =>
  String(message).replace(/^(loadModel|readSafetensors|readModelConfig|generate|forward): /, '');

const HF_HINT = 'For a model on the Hugging Face Hub, give its page (https://huggingface.co/owner/name).';

/** A failed load (revived from the worker) as one sentence or two. */
export function loadErrorText(e, where) {
  if (e.cancelled) return 'Loading was cancelled; nothing of that model was kept.';
  const message = bare(e.message);
  if (e.name === 'CheckpointFileError') return message;
  const status = /HTTP (\d{3})/.exec(message)?.[1];
  if (/no config\.json at/.test(message) || (status === '404' && /config\.json/.test(message))) {
    return `No config.json at ${where}: that address is not a model folder (one holding config.json and its weights). ${HF_HINT}`;
  }
  if (status === '401' || status === '403') {
    return (
      `The server refused to send the model (HTTP ${status}): a gated or private model on the Hub needs an account ` +
      'that accepted its licence and a token, which this page does not send. Download it and open the folder instead.'
    );
  }
  if (status) return `The model's files could not be fetched: ${message}.`;
  if (/fetching .* failed/.test(message)) {
    return (
      `The browser could not fetch the model from ${where}: the server is unreachable, or it does not let other ` +
      `sites read its files (CORS). ${message}`
    );
  }
  if (/has neither model\.safetensors nor/.test(message)) {
    return `No weights at ${where}: neither model.safetensors nor model.safetensors.index.json is there.`;
  }
  if (e.name === 'RangeError' && /model_type/.test(message))
    return `This model's family is not one the page runs: ${message}.`;
  if (/is not valid JSON/.test(message)) return `A file of the model is broken: ${message}.`;
  if (/WebAssembly memory|too large/i.test(message))
    return `The model does not fit in the engine's memory: ${message}.`;
  if (e.name === 'TypeError' && /tensor|shape/i.test(message)) {
    return `The weights do not match config.json: ${message}.`;
  }
  return `The model could not be loaded — ${e.name}: ${message}.`;
}

/** A failed prompt or generation. */
export function runErrorText(e) {
  return `The model could not run this prompt — ${e.name}: ${bare(e.message)}.`;
}

/**
 * attn.memory() (and the checkpoint's bytes, when known) as one line; kvDtype: how the caches of the
 * run it was taken in store K and V, when it was a decoder's.
 */
export function memoryText(memory, fileBytes, kvDtype = null) {
  const parts = [];
  if (fileBytes) parts.push(`files ${sizeText(fileBytes)}`);
  if (memory) {
    parts.push(
      `engine memory ${sizeText(memory.heapBytes)} (weights ${sizeText(memory.weightBytes)}, ` +
        `caches ${sizeText(memory.cacheBytes)}${kvDtype ? `, K/V as ${kvDtype}` : ''})`,
    );
  }
  return parts.length ? `Memory: ${parts.join(' · ')}` : '';
}

/**
 * Loading progress: the fraction of the whole (when the total is known) and a line saying which file.
 * @param {{ file, loaded, total }} p   the worker's latest progress
 * @param {Map<string, number>} done    bytes read so far, per file
 * @param {number | null} totalBytes    the checkpoint's size when known (files), else null (a URL)
 */
export function progressText(p, done, totalBytes) {
  done.set(p.file, p.loaded);
  const read = Array.from(done.values()).reduce((a, b) => a + b, 0);
  const fraction = totalBytes ? Math.min(1, read / totalBytes) : p.total ? Math.min(1, p.loaded / p.total) : null;
  const of = p.total ? ` of ${sizeText(p.total)}` : '';
  const whole = totalBytes ? ` — ${sizeText(read)} of ${sizeText(totalBytes)} in all` : ` — ${sizeText(read)} so far`;
  // A weights file read whole: the engine takes the weights next (or the next shard is read).
  const next = p.total && p.loaded === p.total && /\.safetensors$/.test(p.file) ? '; then into the engine…' : '';
  return { fraction, text: `Reading ${p.file}: ${sizeText(p.loaded)}${of}${whole}${next}` };
}

/** The loaded model in one line. */
export function factsText(c, dtype = 'f32') {
  const kv = c.numKvHeads === c.numHeads ? '' : ` (${c.numKvHeads} key/value heads, grouped-query)`;
  const kind = c.causal
    ? 'a decoder: it continues a prompt'
    : 'an encoder: it encodes a text, every token seeing every other';
  return (
    `${c.modelType}, ${kind}. ${c.numLayers} layers × ${c.numHeads} heads${kv}, d_model ${c.hiddenSize}, ` +
    `heads of ${c.headDim}, ${c.vocabSize.toLocaleString('en')} tokens in its vocabulary, up to ` +
    `${c.maxPositions.toLocaleString('en')} positions. Weight matrices stored as ${dtype} in the engine.` +
    (c.causal ? '' : ' No K/V cache: it encodes the whole text at once, so the K/V choice does not apply.')
  );
}

/** Why a generation ended. */
export function endText(reason, count, ms) {
  const why = {
    maxNew: 'as many as asked',
    eos: 'the model ended the text (its end-of-sequence token)',
    stopped: 'stopped',
    maxLength: "the model's positions are full",
  }[reason];
  const per = `, ${ms.toFixed(0)} ms in the worker with the prompt`;
  return `${count} new token${count === 1 ? '' : 's'}: ${why}${per}.`;
}
