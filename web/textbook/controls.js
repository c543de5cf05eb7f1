// The page's inputs: the settings form, the heatmaps (pointer and keyboard), the query
// pickers and the export buttons, turned into calls of the handlers main.js passes in.
// Knows nothing of the engine or of how views are drawn.
import { validHeadCounts } from './settings.js';
import { el } from '../shared/dom.js';

const DEBOUNCE_MS = 150;

/** The row whose label (left of the grid) a click is on, or -1 (from the map's drawn layout). */
function rowLabelAt(canvas, e) {
  const layout = JSON.parse(canvas.dataset.layout);
  const r = canvas.getBoundingClientRect();
  const x = e.clientX - r.left;
  const y = e.clientY - r.top;
  if (x >= layout.grid.x || y < layout.grid.y || y >= layout.grid.y + layout.grid.height) return -1;
  const i = Math.floor((y - layout.y0) / layout.cellHeight);
  return i >= 0 && i < layout.rows ? i : -1;
}

/**
 * @param {object} h   handlers
 * @param {(delayMs: number) => void} h.settingsChanged
 * @param {(canvas) => object|null} h.mapOf               → the map of a heatmap canvas, or null
 * @param {(canvas, i: number) => void} h.pickRow          click on a row label
 * @param {(canvas, focused: boolean) => void} h.focus
 * @param {(query: number) => void} h.pickQuery
 * @param {(view: string) => void} h.pickView
 * @param {() => void} h.exportJSON
 * @param {() => void} h.exportPNG
 */
export function bindControls(h) {
  const $ = (id) => document.getElementById(id);
  const form = $('controls');

  // The maps (wasm-attention/viz heatmaps) read out the hovered cell and call onSelect on a click
  // or Enter themselves and report their keyboard cursor (onCursor); the page adds the row labels' click.
  const mapCanvas = (e) => (e.target instanceof HTMLCanvasElement && h.mapOf(e.target) ? e.target : null);
  for (const id of ['self-map', 'mha-maps']) {
    const area = $(id);
    area.addEventListener('click', (e) => {
      const canvas = mapCanvas(e);
      const i = canvas ? rowLabelAt(canvas, e) : -1;
      if (i >= 0) h.pickRow(canvas, i);
    });
    area.addEventListener('focusin', (e) => {
      if (mapCanvas(e)) h.focus(e.target, true);
    });
    area.addEventListener('focusout', (e) => {
      if (mapCanvas(e)) h.focus(e.target, false);
    });
  }

  form.addEventListener('input', (e) => {
    if (e.target.id === 'size-preset') applySize(e.target.value);
    if (e.target.id === 'dModel' || e.target.id === 'heads') showSize();
    if (e.target.id === 'dModel') offerHeadCounts();
    const immediate = e.target.type === 'radio' || e.target.type === 'checkbox' || e.target.tagName === 'SELECT';
    h.settingsChanged(immediate ? 0 : DEBOUNCE_MS);
  });
  $('query').addEventListener('change', () => h.pickQuery(Number($('query').value)));
  $('source').addEventListener('change', () => h.pickView($('source').value));
  $('export-json').addEventListener('click', () => h.exportJSON());
  $('export-png').addEventListener('click', () => h.exportPNG());
  offerHeadCounts();
  showSize();
}

/** A size preset ("16x2": d_model × heads) written into the two fields; "custom" leaves them. */
function applySize(value) {
  const m = /^(\d+)x(\d+)$/.exec(value);
  if (!m) return;
  document.getElementById('dModel').value = m[1];
  document.getElementById('heads').value = m[2];
  offerHeadCounts();
}

/** The size picker names the fields' values: a preset, or "other". */
function showSize() {
  const picker = document.getElementById('size-preset');
  const value = `${document.getElementById('dModel').value.trim()}x${document.getElementById('heads').value.trim()}`;
  picker.value = Array.from(picker.options, (o) => o.value).includes(value) ? value : 'custom';
}

/** The heads field suggests the head counts that divide d_model (a datalist). */
export function offerHeadCounts() {
  const dModel = Number(document.getElementById('dModel').value);
  const list = document.getElementById('head-counts');
  list.replaceChildren(...validHeadCounts(dModel).map((k) => el('option', { value: String(k) })));
}
