// The page's inputs: the settings form, the heatmaps (pointer and keyboard), the query
// pickers and the export buttons, turned into calls of the handlers main.js passes in.
// Knows nothing of the engine or of how views are drawn.
import { cellAt } from './heatmap.js';
import { validHeadCounts } from './settings.js';
import { el } from './dom.js';

const DEBOUNCE_MS = 150;

/**
 * @param {object} h   handlers
 * @param {(delayMs: number) => void} h.settingsChanged
 * @param {(canvas) => object|null} h.mapOf               → { key, layout } of a heatmap canvas
 * @param {(canvas, cell: {i, j}, at: {x, y}) => void} h.hover    cell = null: left the grid
 * @param {(canvas, i: number) => void} h.pickRow          click on a cell or row label
 * @param {(canvas, key: string) => void} h.key            a key pressed on a focused heatmap
 * @param {(canvas, focused: boolean) => void} h.focus
 * @param {(query: number) => void} h.pickQuery
 * @param {(view: string) => void} h.pickView
 * @param {() => void} h.exportJSON
 * @param {() => void} h.exportPNG
 */
export function bindControls(h) {
  const $ = (id) => document.getElementById(id);
  const form = $('controls');

  const hitOf = (event) => {
    const canvas = event.target;
    if (!(canvas instanceof HTMLCanvasElement)) return null;
    const meta = h.mapOf(canvas);
    if (!meta) return null;
    const rect = canvas.getBoundingClientRect();
    return { canvas, cell: cellAt(meta.layout, event.clientX - rect.left, event.clientY - rect.top) };
  };
  for (const id of ['self-map', 'mha-maps']) {
    const area = $(id);
    area.addEventListener('mousemove', (e) => {
      const hit = hitOf(e);
      if (hit) h.hover(hit.canvas, hit.cell, { x: e.clientX, y: e.clientY });
    });
    area.addEventListener('mouseleave', () => h.hover(null, null, null));
    area.addEventListener('click', (e) => {
      const hit = hitOf(e);
      if (hit && hit.cell) h.pickRow(hit.canvas, hit.cell.i);
    });
    area.addEventListener('keydown', (e) => {
      if (!(e.target instanceof HTMLCanvasElement) || !h.mapOf(e.target)) return;
      if (['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'Enter', ' '].includes(e.key)) {
        e.preventDefault();
        h.key(e.target, e.key);
      }
    });
    area.addEventListener('focusin', (e) => {
      if (h.mapOf(e.target)) h.focus(e.target, true);
    });
    area.addEventListener('focusout', (e) => {
      if (h.mapOf(e.target)) h.focus(e.target, false);
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
