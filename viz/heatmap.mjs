// createHeatmap: one attention map [T, S] on a canvas, readable from 2 to 2,048 tokens a side.
// Zoom and pan (wheel with Ctrl or a pinch, drag, the buttons, + / − / 0 keys), labels thinned
// so they never overlap, a hover or keyboard cursor whose cell is read out as page text (an
// aria-live region), and incremental drawing: a query row appended colours only that row.
// The view itself is the Heatmap class (heatmap-view.mjs); this is its checked entry.
import { checkElement, checkKnown, checkOptions } from './checks.mjs';
import { KNOWN, VIEW, validate } from './heatmap-options.mjs';
import { Heatmap } from './heatmap-view.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';

/**
 * @param {HTMLElement} element
 * @param {{ weights: Float32Array, queryTokens: string[], keyTokens?: string[], causal?: boolean, title?: string,
 *   highlightRow?: number, onHover?: Function, onSelect?: Function, onCursor?: Function, height?: number, legend?: boolean,
 *   controls?: boolean }} options
 */
export function createHeatmap(element, options) {
  checkElement(VIEW, element);
  checkOptions(VIEW, options);
  checkKnown(VIEW, options, KNOWN);
  const o = { causal: false, highlightRow: -1, ...options, keyTokens: options.keyTokens ?? options.queryTokens };
  validate(o);
  const initialCursor = o.cursor ? { i: o.cursor.query, j: o.cursor.key } : null;
  delete o.cursor;
  ensureStyles(element.ownerDocument);
  const view = new Heatmap(element, o, initialCursor);
  return viewHandle(VIEW, KNOWN, {
    apply: (data) => view.apply(data),
    teardown: () => view.dispose(),
  });
}
