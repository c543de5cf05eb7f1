// The floating readout of one heatmap cell (query, key, exact weight), placed next to the
// pointer or, for the keyboard, next to the cell. Plain DOM; knows nothing of the engine.
import { el } from './dom.js';

/** A weight as its float32 value, with enough digits to identify it exactly. */
export function formatWeight(v) {
  if (!Number.isFinite(v)) return String(v);
  return String(parseFloat(v.toPrecision(9)));
}

/**
 * @param {HTMLElement} tip
 * @param {{ x: number, y: number }} at   viewport point to place it by
 * @param {{ i: number, j: number, query: string, key?: string, weight?: number, masked?: boolean, label: string }} hit
 *   j = -1: a row label
 */
export function showTooltip(tip, at, hit) {
  if (hit.j < 0) {
    tip.replaceChildren(
      el(
        'div',
        {},
        'query ',
        el('span', { class: 'tok', text: hit.query }),
        ` #${hit.i + 1}: click to follow this row`,
      ),
    );
  } else {
    tip.replaceChildren(
      el(
        'div',
        {},
        'query ',
        el('span', { class: 'tok', 'data-testid': 'tip-query', text: hit.query }),
        ` #${hit.i + 1} → key `,
        el('span', { class: 'tok', 'data-testid': 'tip-key', text: hit.key }),
        ` #${hit.j + 1}`,
      ),
      el(
        'div',
        {},
        'weight ',
        el('b', { 'data-testid': 'tip-weight', text: formatWeight(hit.weight) }),
        hit.masked ? ' (masked: later token)' : '',
      ),
      el('div', { class: 'muted', text: hit.label }),
    );
  }
  tip.hidden = false;
  const pad = 14;
  const box = tip.getBoundingClientRect();
  let x = at.x + pad;
  let y = at.y + pad;
  if (x + box.width > window.innerWidth - 4) x = at.x - pad - box.width;
  if (y + box.height > window.innerHeight - 4) y = at.y - pad - box.height;
  tip.style.left = `${Math.max(4, x)}px`;
  tip.style.top = `${Math.max(4, y)}px`;
}

export function hideTooltip(tip) {
  tip.hidden = true;
}
