// The heads the model learnt, as badges: models/tang-poems/heads.json (heads.py measured, over
// every poem of the anthology, the average weight a token gives to the token d places back and to
// the latest punctuation mark, and named a head after the band of distances, at most three wide,
// that takes at least 35 % of its weight). A badge names the pattern in a few words and opens the
// head; the page counts layers and heads from 1, the file from 0.
import { el } from '../shared/dom.js';

/** A few words for a heads.json pattern: what a reader looks for in the head's map. */
export function shortName(pattern) {
  const band = /the tokens? (\d+)(?:–(\d+))? back/.exec(pattern);
  if (/punctuation/.test(pattern)) return 'the latest punctuation mark';
  if (/five-character verse/.test(pattern)) return 'one half-line back (five-character verse)';
  if (/seven-character verse/.test(pattern)) return 'one half-line back (seven-character verse)';
  if (/just before/.test(pattern)) return 'the previous characters';
  if (band) return band[2] ? `${band[1]}–${band[2]} characters back` : `${band[1]} characters back`;
  return pattern;
}

/** The kind of a pattern, for the tour: 'half-line', 'previous', 'punctuation' or 'band'. */
export function kindOf(pattern) {
  if (/punctuation/.test(pattern)) return 'punctuation';
  if (/half-line/.test(pattern)) return 'half-line';
  if (/just before/.test(pattern)) return 'previous';
  return 'band';
}

/**
 * heads.json's heads as the page uses them: { layer, head (from 0), name, kind, pattern, share }, by
 * falling share: its `heads` (each head's narrowest band of look-back distances) and its `marks`
 * (heads that also put a large share on the latest punctuation mark). A TypeError names what is
 * wrong with the document.
 */
export function readHeads(doc, { numLayers, numHeads }) {
  if (!doc || !Array.isArray(doc.heads) || !(doc.marks === undefined || Array.isArray(doc.marks)))
    throw new TypeError('heads.json: expected { heads: [...], marks?: [...] }');
  const entries = [
    ...doc.heads.map((h, k) => [h, `heads[${k}]`]),
    ...(doc.marks ?? []).map((h, k) => [h, `marks[${k}]`]),
  ];
  return entries
    .map(([h, where]) => {
      const ok =
        Number.isInteger(h.layer) &&
        h.layer >= 0 &&
        h.layer < numLayers &&
        Number.isInteger(h.head) &&
        h.head >= 0 &&
        h.head < numHeads &&
        typeof h.pattern === 'string' &&
        typeof h.score === 'number';
      if (!ok) throw new TypeError(`heads.json: ${where} is not { layer, head, pattern, score } of this model`);
      return {
        layer: h.layer,
        head: h.head,
        name: shortName(h.pattern),
        kind: kindOf(h.pattern),
        pattern: h.pattern,
        share: h.score,
      };
    })
    .sort((a, b) => b.share - a.share);
}

/** A word or two for a pattern, small enough to sit on a 40 px thumbnail (the full name is in its title). */
export function tinyName(h) {
  if (h.kind === 'half-line') return '½ line';
  if (h.kind === 'previous') return 'previous';
  if (h.kind === 'punctuation') return 'punct.';
  return h.name.replace(' characters', '');
}

/**
 * Marks the model view's thumbnails (wasm-attention/viz cells [data-testid=thumb] with data-layer and
 * data-head, counted from 0) with the names of their learnt patterns: a small label over the map's
 * masked corner, where the grid has no weights to hide, and the names in the cell's accessible name.
 * Again after every drawing (a new run builds the grid anew); marks of other heads are removed.
 */
export function markThumbnails(grid, heads) {
  for (const cell of grid.querySelectorAll('[data-testid=thumb]')) {
    const mine = heads.filter((h) => h.layer === Number(cell.dataset.layer) && h.head === Number(cell.dataset.head));
    const text = mine.map(tinyName).join('\n');
    const old = cell.querySelector('[data-testid=thumb-badge]');
    if (old ? old.textContent === text : !mine.length) continue;
    old?.remove();
    cell.dataset.baseLabel ??= cell.getAttribute('aria-label') ?? '';
    const names = mine.map((h) => h.name).join('; ');
    cell.setAttribute(
      'aria-label',
      mine.length ? `${cell.dataset.baseLabel}; learnt: ${names}` : cell.dataset.baseLabel,
    );
    cell.title = mine.length ? `learnt: ${names}` : '';
    if (mine.length)
      cell.append(el('span', { class: 'thumb-badge', 'data-testid': 'thumb-badge', 'aria-hidden': 'true', text }));
  }
}

/** Draws the badges into `box`; a click (or Enter) on one calls open(layer, head). */
export function renderHeadBadges(box, heads, open) {
  const items = heads.map((h) =>
    el(
      'li',
      {},
      el(
        'button',
        {
          type: 'button',
          class: 'head-badge',
          'data-testid': 'head-badge',
          'data-layer': String(h.layer),
          'data-head': String(h.head),
          title: `${h.pattern}: ${Math.round(100 * h.share)} % of its weight, over the whole anthology`,
        },
        el('strong', { text: `L${h.layer + 1} H${h.head + 1}` }),
        ` ${h.name} `,
        el('small', { text: `${Math.round(100 * h.share)} %` }),
      ),
    ),
  );
  box.replaceChildren(...items);
  box.onclick = (e) => {
    const b = e.target.closest('[data-testid=head-badge]');
    if (b) open(Number(b.dataset.layer), Number(b.dataset.head));
  };
}
