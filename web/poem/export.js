// The model tab's exports: the attention of every layer and head of the run on screen as one JSON
// document (with the tokens, the model's shape and the settings), and the opened head's map as a
// CSV table (token labels on both axes), for a spreadsheet or a plotting script.
import { matrixOf, tokenLabel } from './run.js';
import { toRows, download } from '../shared/export-files.js';

/**
 * The JSON document: attention[layer][head] = [query][key] weights (causal: 0 right of the diagonal),
 * each row summing to 1, the float32 values the engine computed.
 */
export function attentionDocument(run, { config, settings }) {
  const n = run.n;
  return {
    format: 'wasm-attention-demo-model/1',
    description:
      'Attention weights of the trained poem model for the tokens shown: attention[layer][head] is ' +
      '[query][key], layers and heads counted from 0; heads h and h2 with the same kvHeads entry share a K/V head.',
    model: config,
    settings,
    tokens: run.texts.slice(0, n),
    ids: run.ids.slice(0, n),
    promptLength: run.promptLength,
    kvHeads: [...run.kvHeads], // each query head's K/V head, as the model worker computed them
    attention: Array.from({ length: run.nLayers }, (_, l) =>
      Array.from({ length: run.nHeads }, (_, h) => toRows(matrixOf(run, l, h), n, n)),
    ),
  };
}

const csvCell = (s) => (/[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

/** One head's map as CSV: a header of key tokens, then per query token its weights. */
export function headCSV(run, layer, head) {
  const n = run.n;
  const m = matrixOf(run, layer, head);
  const labels = run.texts.slice(0, n).map((t, i) => `${i + 1} ${tokenLabel(t)}`);
  const lines = [['query \\ key', ...labels].map(csvCell).join(',')];
  for (let i = 0; i < n; i++) lines.push([csvCell(labels[i]), ...Array.from(m.subarray(i * n, (i + 1) * n))].join(','));
  return `${lines.join('\r\n')}\r\n`;
}

export function saveAttentionJSON(run, meta) {
  const blob = new Blob([JSON.stringify(attentionDocument(run, meta))], { type: 'application/json' });
  download(blob, 'poem-attention.json');
}

export function saveHeadCSV(run, layer, head) {
  const blob = new Blob([headCSV(run, layer, head)], { type: 'text/csv' });
  download(blob, `poem-layer${layer + 1}-head${head + 1}.csv`);
}
