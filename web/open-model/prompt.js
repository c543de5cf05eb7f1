// The run form of an opened model: set up for what it is (a decoder generates, an encoder
// encodes; text with a tokenizer, token ids without one), read and checked in the page's words
// before the worker sees it.

const DEFAULT_PROMPT = { decoder: 'Once upon a time', encoder: 'The cat sat on the [MASK].' };
const DECODING_FIELDS = ['max-new', 'decoding', 'temperature', 'top-k', 'seed'];

/** Fits the form to the model just opened ({ config, hasTokenizer } of the worker's answer). */
export function fitRunForm($, { config: c, hasTokenizer }) {
  const decoder = c.causal;
  for (const key of DECODING_FIELDS) $[key].closest('label').hidden = !decoder;
  $.stop.hidden = !decoder;
  // an encoder keeps no K/V cache (factsText says so), so there is nothing for the choice to store
  $['kv-dtype'].disabled = !decoder;
  $.run.textContent = decoder ? 'Generate' : 'Encode';
  const help = $['prompt-help'];
  if (hasTokenizer) {
    $['prompt-label'].textContent = 'Prompt (Ctrl+Enter runs)';
    $.prompt.value = decoder ? DEFAULT_PROMPT.decoder : DEFAULT_PROMPT.encoder;
    $.prompt.placeholder = '';
    help.hidden = true;
    return;
  }
  $['prompt-label'].textContent = 'Token ids (Ctrl+Enter runs)';
  $.prompt.value = '';
  $.prompt.placeholder = `e.g. 1 2 3 (0 … ${c.vocabSize - 1})`;
  help.hidden = false;
  help.textContent =
    'This checkpoint came without tokenizer.json, so the page cannot turn text into tokens or tokens into text. ' +
    `Type token ids instead (whole numbers from 0 to ${c.vocabSize - 1}, separated by spaces or commas), ` +
    'or open the folder again together with its tokenizer.json.';
}

/** The prompt as the worker takes it: text, or ids typed by the user (checked here). */
function promptOf($, { config: c, hasTokenizer }) {
  const raw = $.prompt.value;
  if (hasTokenizer) return raw.trim() === '' ? { problem: 'Type a prompt first.' } : { request: { text: raw } };
  const parts = raw.split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return { problem: `Type token ids (whole numbers from 0 to ${c.vocabSize - 1}).` };
  const bad = parts.find((p) => !/^\d+$/.test(p) || Number(p) >= c.vocabSize);
  if (bad !== undefined) {
    return { problem: `“${bad}” is not a token id of this model: ids are whole numbers from 0 to ${c.vocabSize - 1}.` };
  }
  return { request: { ids: parts.map(Number) } };
}

/** How a decoder continues: greedy, or sampled with a temperature, top-k and seed. */
function decodingOf($) {
  const sample = $.decoding.value === 'sample';
  const number = (node, fallback) => (Number.isFinite(node.valueAsNumber) ? node.valueAsNumber : fallback);
  return {
    maxNew: Math.max(0, Math.min(256, Math.floor(number($['max-new'], 16)))),
    temperature: sample ? Math.max(0.05, number($.temperature, 0.8)) : 0,
    topK: sample ? Math.max(0, Math.floor(number($['top-k'], 0))) : 0,
    seed: Math.floor(number($.seed, 1)),
    kvDtype: $['kv-dtype'].value,
  };
}

/** The worker's run request for the form as it is, or { problem } in the page's words. */
export function readRunForm($, model) {
  const asked = promptOf($, model);
  if (asked.problem) return asked;
  const decoding = model.config.causal ? decodingOf($) : { maxNew: 0, temperature: 0, topK: 0, seed: 1 };
  return { request: { ...asked.request, ...decoding } };
}

/** Submit and Ctrl+Enter run; the sampling fields are live only when sampling. */
export function bindRunForm($, onRun) {
  $['run-form'].addEventListener('submit', (e) => {
    e.preventDefault();
    onRun();
  });
  $.prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      onRun();
    }
  });
  const syncDecoding = () => {
    const sample = $.decoding.value === 'sample';
    for (const key of ['temperature', 'top-k', 'seed']) $[key].disabled = !sample;
  };
  $.decoding.addEventListener('change', syncDecoding);
  syncDecoding();
}
