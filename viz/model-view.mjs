// createModelView: every layer × head of a model as a thumbnail on one colour scale (BertViz's
// model view). Heads that share a K/V head (grouped-query attention) sit in one framed group,
// named in text and in each thumbnail's accessible name. The grid is one tab stop: arrow keys,
// Home/End and Page Up/Down move inside it (roving tabindex); a click, Enter or Space calls
// onSelect({ layer, head }), both counted from 0 as they index `attention`.
import {
  checkAttention,
  checkElement,
  checkFunction,
  checkIndex,
  checkNumberFrom,
  checkKnown,
  checkOptions,
  checkTokens,
  describe,
} from './checks.mjs';
import { createTracker, el, onWidthChange } from './dom.mjs';
import { legend } from './legend.mjs';
import { MARKER_PX } from './heatmap-layout.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';
import { createThumbnail } from './thumbnail.mjs';

const VIEW = 'createModelView';
const KNOWN = ['attention', 'tokens', 'numKvHeads', 'onSelect', 'highlightRow', 'selected', 'numberFrom'];
const ROW_HEADER_PX = 54;
const MIN_THUMB = 36;
const THUMB_EXTRA_PX = 11;
const MAX_THUMB = 120;

function validate(o) {
  checkTokens(VIEW, 'tokens', o.tokens);
  const heads = checkAttention(VIEW, o.attention, o.tokens);
  const kv = o.numKvHeads ?? heads;
  if (typeof kv !== 'number' || !Number.isInteger(kv))
    throw new TypeError(`${VIEW}: numKvHeads must be an integer, got ${describe(kv)}`);
  if (kv < 1 || kv > heads || heads % kv !== 0)
    throw new RangeError(`${VIEW}: numKvHeads must divide the ${heads} heads (1 … ${heads}), got ${kv}`);
  checkFunction(VIEW, 'onSelect', o.onSelect);
  checkNumberFrom(VIEW, o.numberFrom);
  checkIndex(VIEW, 'highlightRow', o.highlightRow, -1, Number.MAX_SAFE_INTEGER);
  if (o.selected != null) {
    if (typeof o.selected !== 'object')
      throw new TypeError(`${VIEW}: selected must be { layer, head } or null, got ${describe(o.selected)}`);
    checkIndex(VIEW, 'selected.layer', o.selected.layer, 0, o.attention.length - 1);
    checkIndex(VIEW, 'selected.head', o.selected.head, 0, heads - 1);
  }
  return { heads, kv };
}

/** Whether the map has only zeros above its diagonal: a causal model's (drawn with the mask). */
function looksCausal(weights, T) {
  if (T < 2) return false;
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) if (weights[i * T + j] !== 0) return false;
  return true;
}

// Visible numbers count from `base` (0, as attention is indexed, or 1); onSelect always from 0.
const headRange = (g, size, base) =>
  size === 1 ? `head ${g * size + base}` : `heads ${g * size + base}–${g * size + size - 1 + base}`;

/**
 * @param {HTMLElement} element
 * @param {{ attention: Float32Array[], tokens: string[], numKvHeads?: number,
 *   onSelect?: (pick: { layer: number, head: number }) => void, highlightRow?: number,
 *   selected?: { layer: number, head: number } | null }} options
 */
export function createModelView(element, options) {
  checkElement(VIEW, element);
  checkOptions(VIEW, options);
  checkKnown(VIEW, options, KNOWN);
  let o = { highlightRow: -1, selected: null, ...options };
  let shape = validate(o);
  ensureStyles(element.ownerDocument);

  const tracker = createTracker();
  const summary = el('span', { class: 'wa-viz-title' });
  const groupNames = el('div', { class: 'wa-viz-bar', 'data-testid': 'viz-kv-groups' });
  const grid = el('div', { class: 'wa-viz-grid', role: 'grid', 'data-testid': 'viz-model-grid' });
  const root = tracker.root(
    el(
      'div',
      { class: 'wa-viz wa-viz-modelview', 'data-testid': 'viz-model-view' },
      el('div', { class: 'wa-viz-bar' }, summary, legend()),
      groupNames,
      grid,
    ),
  );
  element.append(root);

  let cells = []; // [layer][head] → { node, thumb }
  let active = { layer: 0, head: 0 };
  let builtShape = '';

  function build() {
    const { heads, kv } = shape;
    const present = o.attention.map((a, l) => (a ? l : -1)).filter((l) => l >= 0);
    const layers = o.attention.length;
    const base = o.numberFrom ?? 0;
    const key = `${present.join(',')}x${heads}/${kv}/${base}`;
    if (key === builtShape) return;
    for (const row of cells) for (const c of row) c.thumb.dispose();
    const size = heads / kv;
    groupNames.replaceChildren(
      ...(kv < heads
        ? [
            el('span', { text: `Grouped-query attention: ${heads} query heads share ${kv} K/V heads, ${size} each:` }),
            ...Array.from({ length: kv }, (_, g) =>
              el('span', { class: 'wa-viz-groupname', text: `K/V head ${g + base}: ${headRange(g, size, base)}` }),
            ),
          ]
        : []),
    );
    cells = [];
    const rows = [];
    for (let l = 0; l < layers; l++) {
      const row = [];
      if (!o.attention[l]) {
        cells.push(row);
        continue;
      }
      const groups = [];
      for (let g = 0; g < kv; g++) {
        const members = [];
        for (let h = g * size; h < (g + 1) * size; h++) {
          const canvas = el('canvas', {
            'aria-hidden': 'true',
            'data-testid': 'thumb-map',
            'data-layer': String(l),
            'data-head': String(h),
          });
          const groupText = kv < heads ? `, K/V head ${g + base} (shared by ${headRange(g, size, base)})` : '';
          const node = el(
            'div',
            {
              class: 'wa-viz-thumb',
              role: 'gridcell',
              tabindex: '-1',
              'aria-selected': 'false',
              'aria-label': `Layer ${l + base}, head ${h + base}${groupText}`,
              'data-layer': String(l),
              'data-head': String(h),
              'data-kv-head': String(g),
              'data-testid': 'thumb',
            },
            canvas,
            el('div', { 'aria-hidden': 'true', text: `L${l + base} H${h + base}` }),
          );
          row.push({ node, thumb: createThumbnail(canvas) });
          members.push(node);
        }
        groups.push(
          kv < heads
            ? el(
                'div',
                { class: 'wa-viz-group', title: `K/V head ${g + base}: ${headRange(g, size, base)}` },
                ...members,
              )
            : el('div', { class: 'wa-viz-group wa-viz-group-plain' }, ...members),
        );
      }
      cells.push(row);
      rows.push(
        el(
          'div',
          { role: 'row', class: 'wa-viz-row' },
          el('div', { role: 'rowheader', class: 'wa-viz-rowhead', text: `layer ${l + base}` }),
          ...groups,
        ),
      );
    }
    grid.replaceChildren(...rows);
    grid.style.gridTemplateColumns = `${ROW_HEADER_PX}px repeat(${kv}, max-content)`;
    builtShape = key;
    if (!o.attention[active.layer] || active.head >= heads) active = { layer: present[0], head: 0 };
    setActive(active, false);
  }

  function setActive(next, focus) {
    const prev = cells[active.layer]?.[active.head];
    if (prev) prev.node.tabIndex = -1;
    active = next;
    const cell = cells[active.layer][active.head];
    cell.node.tabIndex = 0;
    if (focus) cell.node.focus();
  }

  function thumbSize() {
    const { heads, kv } = shape;
    // Each thumbnail adds its border, padding, gap and the row marker's margin; each group its frame.
    const room = (element.clientWidth || 600) - ROW_HEADER_PX - 10 - kv * 16 - heads * (THUMB_EXTRA_PX + MARKER_PX);
    return Math.max(MIN_THUMB, Math.min(MAX_THUMB, Math.floor(room / heads)));
  }

  function setData() {
    const T = o.tokens.length;
    const present = o.attention.filter(Boolean);
    const causal = looksCausal(present[0], T);
    const cellsPerHead = T * T;
    o.attention.forEach((layer, l) =>
      cells[l].forEach((c, h) =>
        c.thumb.setData(layer.subarray(h * cellsPerHead, (h + 1) * cellsPerHead), T, T, causal),
      ),
    );
    const some = present.length < o.attention.length ? ` (of ${o.attention.length})` : '';
    summary.textContent = `${present.length} layers${some} × ${shape.heads} heads, ${T} tokens`;
    grid.setAttribute(
      'aria-label',
      `Attention maps of every layer and head (${T} tokens). Arrow keys move between maps; Enter opens one.`,
    );
  }

  function draw() {
    const size = thumbSize();
    const highlight = o.highlightRow ?? -1;
    cells.forEach((row, l) =>
      row.forEach((c, h) => {
        c.thumb.draw(size, highlight);
        const selected = Boolean(o.selected && o.selected.layer === l && o.selected.head === h);
        c.node.setAttribute('aria-selected', String(selected));
      }),
    );
  }

  // The drawn layer nearest to l going in direction `towards` (layers not computed have no row).
  function nearestLayer(l, towards) {
    const drawn = o.attention.map((a, k) => (a ? k : -1)).filter((k) => k >= 0);
    const clamped = Math.max(drawn[0], Math.min(drawn[drawn.length - 1], l));
    if (o.attention[clamped]) return clamped;
    const step = towards < 0 ? -1 : 1;
    for (let k = clamped; k >= 0 && k < o.attention.length; k += step) if (o.attention[k]) return k;
    return active.layer;
  }

  function pick(layer, head) {
    setActive({ layer, head }, false);
    if (o.onSelect) o.onSelect({ layer, head });
  }

  tracker.on(grid, 'click', (e) => {
    const node = e.target.closest('[role=gridcell]');
    if (node) pick(Number(node.dataset.layer), Number(node.dataset.head));
  });
  tracker.on(grid, 'keydown', (e) => {
    if (e.altKey || e.metaKey) return;
    const layers = o.attention.length;
    const heads = shape.heads;
    const { layer, head } = active;
    const moves = {
      ArrowUp: [layer - 1, head],
      ArrowDown: [layer + 1, head],
      ArrowLeft: [layer, head - 1],
      ArrowRight: [layer, head + 1],
      Home: e.ctrlKey ? [0, 0] : [layer, 0],
      End: e.ctrlKey ? [layers - 1, heads - 1] : [layer, heads - 1],
      PageUp: [0, head],
      PageDown: [layers - 1, head],
    };
    if (moves[e.key]) {
      e.preventDefault();
      const [l, h] = moves[e.key];
      setActive({ layer: nearestLayer(l, l - layer), head: Math.max(0, Math.min(heads - 1, h)) }, true);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      pick(layer, head);
    }
  });
  tracker.on(grid, 'focusin', (e) => {
    const node = e.target.closest('[role=gridcell]');
    if (node) setActive({ layer: Number(node.dataset.layer), head: Number(node.dataset.head) }, false);
  });
  onWidthChange(tracker, element, draw);

  build();
  setData();
  draw();

  return viewHandle(VIEW, KNOWN, {
    apply(data) {
      const next = { ...o, ...data };
      shape = validate(next);
      o = next;
      build();
      setData();
      draw();
    },
    teardown() {
      for (const row of cells) for (const c of row) c.thumb.dispose();
      cells = [];
      tracker.undo();
    },
  });
}
