// Starting the tab's model worker and opening the poem model in it with its head steps, and what
// the model tab says when a file is missing (a host that serves web/ without the package's models/
// folder) or the model cannot be used; the model's one-line description.
import { showErrors } from '../shared/status.js';
import { startOpenModelWorker } from '../open-model/client.js';

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

/** A file of the folder did not come: where the model should be, and that the rest works. */
function sayMissing(missing, modelUrl) {
  showErrors($('poem-error'), [
    `The trained poem model is not here: ${new URL(missing.url ?? modelUrl).pathname} answered ${missing.status ? `HTTP ${missing.status}` : 'nothing'}. ` +
      'The package ships it in the folder models/tang-poems/ next to web/ (`npx wasm-attention` serves both): ' +
      'a static host must serve that folder too. Everything else works: the textbook tab shows attention on random weights.',
  ]);
}

/** The model worker, started with the page's threads (s.worker), and its answer to opening the folder. */
async function openInWorker(s, modelUrl, threads) {
  s.worker = await startOpenModelWorker({
    threads,
    name: 'wasm-attention poem model',
    what: "the poem model's worker",
  });
  return s.worker.load({ url: String(modelUrl), withSteps: true }).done;
}

/**
 * Starts the tab's model worker (s.worker) and opens the model in the folder at modelUrl with its
 * head steps. Resolves to { config, vocab, kvHeads }, or to null when the tab has said why there is no model.
 * @param {object} s   the tab's state
 * @param {URL} modelUrl
 * @param {object} test   window.__poem (its state is set here)
 * @param {{ threads }} options   the threads of the worker's engine
 */
export async function loadPoemModel(s, modelUrl, test, { threads }) {
  let loaded;
  try {
    loaded = await openInWorker(s, modelUrl, threads);
  } catch (e) {
    $('poem-status').textContent = '';
    if (e.missing) {
      sayMissing(e.missing, modelUrl);
      withoutModel(test, 'missing');
    } else {
      showErrors($('poem-error'), [
        `The poem model could not be loaded from ${modelUrl.pathname} — ${e.name}: ${e.message}. The textbook tab works without it.`,
      ]);
      withoutModel(test, 'failed');
    }
    return null;
  }
  $('poem-status').textContent = '';
  $('poem-model-facts').textContent = describeModel(loaded.config, loaded.vocab);
  test.state = 'ready';
  document.body.dataset.model = 'ready';
  return { config: loaded.config, vocab: loaded.vocab, kvHeads: loaded.kvHeads };
}
