// The "Open a model" tab's elements, built into its (empty) panel of index.html, so the page's
// markup stays one line for this tab. Returns the nodes the tab's modules use, by role.
import { el } from '../shared/dom.js';
import { FAMILIES } from './files.js';

const field = (text, input) => el('label', {}, text, input);
/** A select of [value, text] options, the first chosen. */
const choice = (testid, options) =>
  el('select', { 'data-testid': testid }, ...options.map(([value, text]) => el('option', { value, text })));

function fileButton(text, attrs) {
  return el('label', { class: 'file-button' }, text, el('input', { type: 'file', class: 'visually-hidden', ...attrs }));
}

/** What the tab runs and what a checkpoint's folder holds. */
function introduction() {
  const families = `${FAMILIES.slice(0, -1).join(', ')} or ${FAMILIES[FAMILIES.length - 1]}`;
  return [
    el('h2', { id: 'om-heading', text: 'Open a model: your checkpoint, every layer and head' }),
    el('p', {
      class: 'caption',
      text:
        `Any Hugging Face checkpoint of the ${families} families runs here with the package's loadModel, in a Web ` +
        'Worker on this computer (nothing is uploaded): its folder holds config.json, the weights (model.safetensors, ' +
        'or shards with model.safetensors.index.json) and usually tokenizer.json.',
    }),
  ];
}

function dropZone() {
  return el(
    'div',
    { class: 'om-drop', 'data-testid': 'om-drop' },
    el('p', { text: 'Drop a model folder or its files here, or' }),
    el(
      'div',
      { class: 'buttons' },
      fileButton('Choose a folder…', { webkitdirectory: '', 'data-testid': 'om-folder', id: 'om-folder' }),
      fileButton('Choose files…', {
        multiple: '',
        accept: '.json,.safetensors',
        'data-testid': 'om-files',
        id: 'om-files',
      }),
    ),
  );
}

/** The address form, with how the weights and each run's K/V cache are stored. */
function urlForm() {
  return el(
    'form',
    { class: 'controls', 'data-testid': 'om-url-form', autocomplete: 'off' },
    el(
      'label',
      { class: 'wide' },
      'or the address of a model folder',
      el('input', {
        type: 'text',
        inputmode: 'url',
        spellcheck: 'false',
        'data-testid': 'om-url',
        placeholder: 'https://huggingface.co/owner/name',
      }),
    ),
    el('div', { class: 'buttons' }, el('button', { type: 'submit', 'data-testid': 'om-open-url', text: 'Open' })),
    field(
      'weights in the engine (any source)',
      choice('om-dtype', [
        ['f32', 'f32: as float32'],
        ['f16', 'f16: half the bytes'],
        ['bf16', 'bf16: half the bytes'],
        ['int8', 'int8: a quarter, per-row scales'],
      ]),
    ),
    field(
      'K/V cache of each run',
      choice('om-kv-dtype', [
        ['f32', 'f32: as float32'],
        ['f16', 'f16: half the bytes'],
        ['bf16', 'bf16: half the bytes'],
      ]),
    ),
  );
}

/** The progress bar and Cancel, the status and memory lines, Close model and the error box. */
function loadingLines() {
  return [
    el(
      'div',
      { class: 'om-loading', 'data-testid': 'om-loading', hidden: '' },
      el('progress', { 'data-testid': 'om-progress', max: '1', 'aria-label': 'loading progress' }),
      el('button', { type: 'button', 'data-testid': 'om-cancel', text: 'Cancel' }),
    ),
    el('p', { class: 'status', 'aria-live': 'polite', 'data-testid': 'om-status' }),
    el('p', { class: 'status', 'data-testid': 'om-memory' }),
    el(
      'div',
      { class: 'buttons' },
      el('button', {
        type: 'button',
        'data-testid': 'om-close',
        disabled: '',
        title: 'Stops what it is doing, frees its memory in the engine, and lets you open another',
        text: 'Close model',
      }),
    ),
    el('div', { class: 'error', role: 'alert', 'data-testid': 'om-error', hidden: '' }),
  ];
}

function sourceSection() {
  return el(
    'section',
    { class: 'settings', 'aria-labelledby': 'om-heading' },
    ...introduction(),
    dropZone(),
    urlForm(),
    ...loadingLines(),
  );
}

function runForm() {
  return el(
    'form',
    { class: 'controls', 'data-testid': 'om-run-form', autocomplete: 'off' },
    el(
      'label',
      { class: 'wide' },
      el('span', { 'data-testid': 'om-prompt-label', text: 'Prompt (Ctrl+Enter runs)' }),
      el('textarea', { rows: '2', spellcheck: 'false', 'data-testid': 'om-prompt' }),
    ),
    field(
      'new tokens',
      el('input', { type: 'number', value: '16', min: '0', max: '256', step: '1', 'data-testid': 'om-max-new' }),
    ),
    field(
      'decoding',
      choice('om-decoding', [
        ['greedy', 'greedy: the most probable'],
        ['sample', 'sample with a temperature'],
      ]),
    ),
    field(
      'temperature',
      el('input', {
        type: 'number',
        value: '0.8',
        min: '0.05',
        max: '3',
        step: '0.05',
        'data-testid': 'om-temperature',
      }),
    ),
    field('top-k', el('input', { type: 'number', value: '40', min: '0', step: '1', 'data-testid': 'om-top-k' })),
    field('seed', el('input', { type: 'number', value: '1', step: '1', 'data-testid': 'om-seed' })),
    el(
      'div',
      { class: 'buttons' },
      el('button', { type: 'submit', 'data-testid': 'om-run', text: 'Generate' }),
      el('button', { type: 'button', 'data-testid': 'om-stop', disabled: '', text: 'Stop' }),
    ),
  );
}

function modelSection() {
  return el(
    'section',
    { class: 'view', 'aria-labelledby': 'om-model-heading', 'data-testid': 'om-model', hidden: '' },
    el('h2', { id: 'om-model-heading', text: 'The model' }),
    el('p', { class: 'caption', 'data-testid': 'om-facts' }),
    el('p', { class: 'caption', 'data-testid': 'om-files-list' }),
    el('p', { class: 'caption', 'data-testid': 'om-prompt-help', hidden: '' }),
    runForm(),
    el('div', { class: 'error', role: 'alert', 'data-testid': 'om-run-error', hidden: '' }),
    el('p', { class: 'status', 'aria-live': 'polite', 'data-testid': 'om-run-status' }),
    el('h3', { text: 'Tokens' }),
    el('p', { class: 'tokens', 'data-testid': 'om-tokens' }),
    el('p', { class: 'om-output', 'data-testid': 'om-output', hidden: '' }),
    el('div', { 'data-testid': 'om-predictions', hidden: '' }),
  );
}

function viewsSection() {
  return el(
    'section',
    { class: 'view', 'aria-labelledby': 'om-views-heading', 'data-testid': 'om-views', hidden: '' },
    el('h2', { id: 'om-views-heading', text: 'Every layer and head' }),
    el('p', {
      class: 'caption',
      text: 'One thumbnail per layer (rows, in the order they run) and head; click one, or Tab to it and press Enter, to open it below.',
    }),
    el('div', { class: 'om-model-view', 'data-testid': 'om-model-view' }),
    el('h3', { 'data-testid': 'om-head-title' }),
    el('div', { class: 'om-heatmap', 'data-testid': 'om-heatmap' }),
    el('h3', { text: 'Head view: lines from each token to the tokens it attends to' }),
    el('div', { class: 'om-head-view', 'data-testid': 'om-head-view' }),
  );
}

/** Builds the tab into `panel`; returns its nodes by data-testid (without the om- prefix). */
export function buildOpenModelPanel(panel) {
  panel.replaceChildren(sourceSection(), modelSection(), viewsSection());
  const nodes = {};
  for (const node of panel.querySelectorAll('[data-testid^=om-]')) nodes[node.dataset.testid.slice(3)] = node;
  return nodes;
}
