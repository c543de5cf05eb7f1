// loadModel(attn, source, options): a checkpoint as Hugging Face publishes it → a model whose every
// token runs in the engine (docs/models.md). The steps: the source's files (model-source.mjs), the
// tokenizer (loaded by a dynamic import, so an attention-only page never fetches it), the plan of
// tensors by name (checkpoint.mjs), and the model in the engine that users hold (model.mjs).
import { engineOf } from '../attention/api.mjs';
import { describe } from '../attention/checks.mjs';
import { parseWeightDtype } from '../attention/storage-dtypes.mjs';
import { planCheckpoint } from './checkpoint.mjs';
import { LOAD_OPTIONS, callback, optionsOf } from './model-args.mjs';
import { createModel } from './model.mjs';
import { readModelSource, throwIfAborted } from './model-source.mjs';

const FN = 'loadModel';

function loadOptions(options) {
  const c = optionsOf(FN, options, LOAD_OPTIONS);
  const opts = {
    dtype: parseWeightDtype(c, 'dtype'),
    onProgress: callback(c, 'onProgress'),
    fetch: callback(c, 'fetch'),
    signal: c.args.signal,
    fetchOptions: c.args.fetchOptions,
  };
  const { signal, fetchOptions } = opts;
  if (
    signal !== undefined &&
    (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || !('reason' in signal))
  ) {
    throw c.typeError('signal', 'an AbortSignal', signal);
  }
  if (fetchOptions !== undefined && (fetchOptions === null || typeof fetchOptions !== 'object')) {
    throw c.typeError('fetchOptions', "an object of fetch()'s options (headers, credentials, …)", fetchOptions);
  }
  return opts;
}

/**
 * @param files the Node entry's file access ({ readFile, join, resolve, fileURLToPath }), or null
 *   where there are no files (browsers, workers: every source string is a URL)
 */
export async function loadModelWith(files, attn, source, options) {
  const engine = engineOf(attn);
  if (engine === undefined) {
    throw new TypeError(`${FN}: attn must be an engine made by createAttention, got ${describe(attn)}`);
  }
  if (attn.disposed) throw new Error(`${FN}: this engine was disposed; create a new one with createAttention`);
  const opts = loadOptions(options);
  const { config, tokenizer: tokenizerJson, weights } = await readModelSource(FN, source, files, opts);
  let tokenizer = null;
  if (tokenizerJson !== null) {
    const { createTokenizer } = await import('./tokenizer.mjs');
    tokenizer = createTokenizer(tokenizerJson);
  }
  const plan = planCheckpoint(config, weights);
  throwIfAborted(opts.signal);
  if (attn.disposed) throw new Error(`${FN}: the engine was disposed while the model loaded`);
  return createModel(engine, plan, { dtype: opts.dtype, tokenizer });
}
