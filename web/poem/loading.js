// Loading the poem model into the worker, and what the model tab says when the file is missing
// (a host that serves web/ without the package's models/ folder) or cannot be used; the model's
// one-line description.
import { showErrors } from '../shared/status.js';

const $ = (id) => document.getElementById(id);

function describeModel(c, vocab) {
  return (
    `${c.numLayers} layers × ${c.numHeads} heads (${c.numKvHeads} key/value heads, grouped-query), d_model ${c.hiddenSize}, ` +
    `heads of ${c.headDim}, rotary positions (RoPE), ${vocab.length.toLocaleString('en')} tokens (one per character).`
  );
}

/** The tab gives up on the model: it says why (already shown) and hides the form. */
function withoutModel(test, state) {
  test.state = state;
  document.body.dataset.model = state;
  $('poem-controls').hidden = true;
}

/**
 * Asks the worker for the model in the folder at modelUrl. Resolves to { config, vocab }, or to null when the
 * tab has said why there is no model.
 * @param {{ model: object }} engine   engine.js's client
 * @param {URL} modelUrl
 * @param {object} test   window.__poem (its state is set here)
 */
export async function loadPoemModel(engine, modelUrl, test) {
  let loaded;
  try {
    loaded = await engine.model.load(modelUrl);
  } catch (e) {
    $('poem-status').textContent = '';
    showErrors($('poem-error'), [
      `The poem model could not be loaded from ${modelUrl.pathname} — ${e.name}: ${e.message}. The textbook tab works without it.`,
    ]);
    withoutModel(test, 'failed');
    return null;
  }
  $('poem-status').textContent = '';
  if (!loaded.ready) {
    showErrors($('poem-error'), [
      `The trained poem model is not here: ${new URL(loaded.url ?? modelUrl).pathname} answered ${loaded.status ? `HTTP ${loaded.status}` : 'nothing'}. ` +
        'The package ships it in the folder models/tang-poems/ next to web/ (`npx wasm-attention` serves both): ' +
        'a static host must serve that folder too. Everything else works: the textbook tab shows attention on random weights.',
    ]);
    withoutModel(test, 'missing');
    return null;
  }
  $('poem-model-facts').textContent = describeModel(loaded.config, loaded.vocab);
  test.state = 'ready';
  document.body.dataset.model = 'ready';
  return { config: loaded.config, vocab: loaded.vocab };
}
