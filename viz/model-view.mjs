// createModelView: every layer × head of a model as a thumbnail on one colour scale (BertViz's
// model view). Heads that share a K/V head (grouped-query attention) sit in one framed group,
// named in text and in each thumbnail's accessible name. The grid is one tab stop: arrow keys,
// Home/End and Page Up/Down move inside it (roving tabindex); a click, Enter or Space calls
// onSelect({ layer, head }), both counted from 0 as they index `attention`. The view is the
// ModelView class below; its elements come from model-view-grid.mjs.
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
import { buildGrid, groupNameNodes } from './model-view-grid.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';

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

const computedLayers = (attention) => attention.map((a, l) => (a ? l : -1)).filter((l) => l >= 0);

// The cell a key moves the grid's focus to from { layer, head }, before layers and heads are clamped.
function keyTarget(e, { layer, head }, layers, heads) {
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
  return moves[e.key];
}

class ModelView {
  constructor(element, o, shape) {
    this.element = element;
    this.o = o;
    this.shape = shape;
    this.tracker = createTracker();
    this.summary = el('span', { class: 'wa-viz-title' });
    this.groupNames = el('div', { class: 'wa-viz-bar', 'data-testid': 'viz-kv-groups' });
    this.grid = el('div', { class: 'wa-viz-grid', role: 'grid', 'data-testid': 'viz-model-grid' });
    const root = el(
      'div',
      { class: 'wa-viz wa-viz-modelview', 'data-testid': 'viz-model-view' },
      el('div', { class: 'wa-viz-bar' }, this.summary, legend()),
      this.groupNames,
      this.grid,
    );
    element.append(this.tracker.root(root));
    this.cells = []; // [layer][head] → { node, thumb }
    this.active = { layer: 0, head: 0 };
    this.builtShape = '';
    this.listen();
    this.build();
    this.setData();
    this.draw();
  }

  // The grid again when the computed layers, the heads, the K/V groups or the numbering changed.
  build() {
    const { o, shape } = this;
    const present = computedLayers(o.attention);
    const base = o.numberFrom ?? 0;
    const key = `${present.join(',')}x${shape.heads}/${shape.kv}/${base}`;
    if (key === this.builtShape) return;
    this.disposeThumbs();
    this.groupNames.replaceChildren(...groupNameNodes(shape, base));
    const { cells, rows } = buildGrid(o.attention, shape, base);
    this.cells = cells;
    this.grid.replaceChildren(...rows);
    this.grid.style.gridTemplateColumns = `${ROW_HEADER_PX}px repeat(${shape.kv}, max-content)`;
    this.builtShape = key;
    const { active } = this;
    if (!o.attention[active.layer] || active.head >= shape.heads) this.active = { layer: present[0], head: 0 };
    this.setActive(this.active, false);
  }

  setActive(next, focus) {
    const prev = this.cells[this.active.layer]?.[this.active.head];
    if (prev) prev.node.tabIndex = -1;
    this.active = next;
    const cell = this.cells[next.layer][next.head];
    cell.node.tabIndex = 0;
    if (focus) cell.node.focus();
  }

  thumbSize() {
    const { heads, kv } = this.shape;
    // Each thumbnail adds its border, padding, gap and the row marker's margin; each group its frame.
    const room =
      (this.element.clientWidth || 600) - ROW_HEADER_PX - 10 - kv * 16 - heads * (THUMB_EXTRA_PX + MARKER_PX);
    return Math.max(MIN_THUMB, Math.min(MAX_THUMB, Math.floor(room / heads)));
  }

  setData() {
    const { o, cells } = this;
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
    this.summary.textContent = `${present.length} layers${some} × ${this.shape.heads} heads, ${T} tokens`;
    this.grid.setAttribute(
      'aria-label',
      `Attention maps of every layer and head (${T} tokens). Arrow keys move between maps; Enter opens one.`,
    );
  }

  draw() {
    const { o } = this;
    const size = this.thumbSize();
    const highlight = o.highlightRow ?? -1;
    this.cells.forEach((row, l) =>
      row.forEach((c, h) => {
        c.thumb.draw(size, highlight);
        const selected = Boolean(o.selected && o.selected.layer === l && o.selected.head === h);
        c.node.setAttribute('aria-selected', String(selected));
      }),
    );
  }

  // The drawn layer nearest to l going in direction `towards` (layers not computed have no row).
  nearestLayer(l, towards) {
    const { attention } = this.o;
    const drawn = computedLayers(attention);
    const clamped = Math.max(drawn[0], Math.min(drawn[drawn.length - 1], l));
    if (attention[clamped]) return clamped;
    const step = towards < 0 ? -1 : 1;
    for (let k = clamped; k >= 0 && k < attention.length; k += step) if (attention[k]) return k;
    return this.active.layer;
  }

  pick(layer, head) {
    this.setActive({ layer, head }, false);
    if (this.o.onSelect) this.o.onSelect({ layer, head });
  }

  keyDown(e) {
    if (e.altKey || e.metaKey) return;
    const heads = this.shape.heads;
    const { layer, head } = this.active;
    const target = keyTarget(e, this.active, this.o.attention.length, heads);
    if (target) {
      e.preventDefault();
      const [l, h] = target;
      this.setActive({ layer: this.nearestLayer(l, l - layer), head: Math.max(0, Math.min(heads - 1, h)) }, true);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.pick(layer, head);
    }
  }

  listen() {
    const { tracker, grid } = this;
    tracker.on(grid, 'click', (e) => {
      const node = e.target.closest('[role=gridcell]');
      if (node) this.pick(Number(node.dataset.layer), Number(node.dataset.head));
    });
    tracker.on(grid, 'keydown', (e) => this.keyDown(e));
    tracker.on(grid, 'focusin', (e) => {
      const node = e.target.closest('[role=gridcell]');
      if (node) this.setActive({ layer: Number(node.dataset.layer), head: Number(node.dataset.head) }, false);
    });
    onWidthChange(tracker, this.element, () => this.draw());
  }

  /** update(data), its options already known: checked as a whole, then shown. */
  apply(data) {
    const next = { ...this.o, ...data };
    this.shape = validate(next);
    this.o = next;
    this.build();
    this.setData();
    this.draw();
  }

  disposeThumbs() {
    for (const row of this.cells) for (const c of row) c.thumb.dispose();
  }

  dispose() {
    this.disposeThumbs();
    this.cells = [];
    this.tracker.undo();
  }
}

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
  const o = { highlightRow: -1, selected: null, ...options };
  const shape = validate(o);
  ensureStyles(element.ownerDocument);
  const view = new ModelView(element, o, shape);
  return viewHandle(VIEW, KNOWN, {
    apply: (data) => view.apply(data),
    teardown: () => view.dispose(),
  });
}
