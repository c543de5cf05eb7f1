// createHeadView: BertViz's head view. One layer's heads as lines from each query token (left)
// to the key tokens it attends to (right), one colour per head; head toggles are buttons with
// aria-pressed; pointing at or moving the keyboard focus to a token shows only its lines, and
// its strongest keys are read out as page text. The view is the HeadView class below.
import {
  checkAttention,
  checkElement,
  checkIndex,
  checkNumberFrom,
  checkKnown,
  checkOptions,
  checkTokens,
  describe,
} from './checks.mjs';
import { headColour } from './colour-scale.mjs';
import { createTracker, el, onWidthChange, tokenText, readoutLine, sizeCanvas } from './dom.mjs';
import { FONT_FAMILY } from './heatmap-draw.mjs';
import { HEAD_FONT_PX, headLayout, paintHeadView, tokenAt } from './head-view-draw.mjs';
import { describeFocus } from './head-view-readout.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';

const VIEW = 'createHeadView';
const KNOWN = ['attention', 'tokens', 'layer', 'numberFrom'];
const LABEL_MAX_PX = 110;

function validate(o) {
  checkTokens(VIEW, 'tokens', o.tokens);
  const heads = checkAttention(VIEW, o.attention, o.tokens);
  if (typeof o.layer !== 'number' || !Number.isInteger(o.layer))
    throw new TypeError(`${VIEW}: layer must be an integer, got ${describe(o.layer)}`);
  checkIndex(VIEW, 'layer', o.layer, 0, o.attention.length - 1);
  checkNumberFrom(VIEW, o.numberFrom);
  if (o.attention[o.layer] == null)
    throw new RangeError(`${VIEW}: layer ${o.layer} was not computed (attention[${o.layer}] is null)`);
  return heads;
}

// The keyboard's next token from `cursor` ({ side, i }), before it is kept inside 0 … T−1.
function keyMove(key, cursor, T, page) {
  const moves = {
    ArrowUp: () => ({ ...cursor, i: cursor.i - 1 }),
    ArrowDown: () => ({ ...cursor, i: cursor.i + 1 }),
    ArrowLeft: () => ({ ...cursor, side: 'query' }),
    ArrowRight: () => ({ ...cursor, side: 'key' }),
    Home: () => ({ ...cursor, i: 0 }),
    End: () => ({ ...cursor, i: T - 1 }),
    PageUp: () => ({ ...cursor, i: cursor.i - page }),
    PageDown: () => ({ ...cursor, i: cursor.i + page }),
  };
  return moves[key] ? moves[key]() : null;
}

const sameToken = (a, b) => a?.i === b?.i && a?.side === b?.side;

class HeadView {
  constructor(element, o, numHeads) {
    this.element = element;
    this.o = o;
    this.numHeads = numHeads;
    this.tracker = createTracker();
    this.buildElements();
    this.measure = document.createElement('canvas').getContext('2d');
    this.measure.font = `${HEAD_FONT_PX}px ${FONT_FAMILY}`;
    this.shown = [];
    this.labels = [];
    this.labelWidth = 0;
    this.hover = null;
    this.pinned = null; // a clicked token keeps its lines after the pointer leaves
    this.cursor = null; // the keyboard's token while the canvas has focus
    this.layout = null;
    this.listen();
    this.setData();
    this.draw();
  }

  buildElements() {
    this.title = el('span', { class: 'wa-viz-title' });
    this.toggles = el('div', { class: 'wa-viz-heads', role: 'group', 'aria-label': 'Heads shown' });
    this.canvas = el('canvas', { tabindex: '0', role: 'img', 'data-testid': 'viz-head-canvas' });
    this.readout = readoutLine();
    this.root = this.tracker.root(
      el(
        'div',
        { class: 'wa-viz wa-viz-headview', 'data-testid': 'viz-head-view' },
        el('div', { class: 'wa-viz-bar' }, this.title, this.toggles),
        el('div', { class: 'wa-viz-scroll' }, this.canvas),
        this.readout,
      ),
    );
    this.element.append(this.root);
    this.ctx = this.canvas.getContext('2d');
  }

  base() {
    return this.o.numberFrom ?? 0;
  }

  buildToggles() {
    const { numHeads } = this;
    if (this.toggles.children.length === numHeads) return;
    this.shown = Array.from({ length: numHeads }, (_, h) => this.shown[h] ?? true);
    this.toggles.replaceChildren(
      ...this.shown.map((on, h) => {
        const button = el(
          'button',
          { type: 'button', 'aria-pressed': String(on), 'data-head': String(h), 'data-testid': 'viz-head-toggle' },
          el('span', { class: 'wa-viz-swatch', 'aria-hidden': 'true' }),
          `head ${h + this.base()}`,
        );
        button.firstChild.style.background = headColour(h);
        return button;
      }),
    );
  }

  setData() {
    const { o } = this;
    this.labels = o.tokens.map(tokenText);
    let widest = 0;
    for (const t of this.labels) widest = Math.max(widest, this.measure.measureText(t).width);
    this.labelWidth = Math.min(LABEL_MAX_PX, widest) + 6;
    this.buildToggles();
    const T = o.tokens.length;
    for (const f of [this.hover, this.pinned, this.cursor]) if (f && f.i >= T) f.i = T - 1;
    this.title.textContent = `Layer ${o.layer + this.base()}`;
    this.canvas.setAttribute(
      'aria-label',
      `Head view of layer ${o.layer + this.base()}: ${T} tokens, queries on the left, keys on the right, a line per weight, one colour per head. ` +
        'Up and Down move between tokens, Left and Right between the query and key columns; the strongest links are read out below.',
    );
  }

  draw() {
    const { o, canvas } = this;
    const dpr = window.devicePixelRatio || 1;
    const room = Math.min(640, this.element.clientWidth || this.root.clientWidth || 480);
    const T = o.tokens.length;
    const height = Math.min(T * 20, Math.max(240, Math.round((window.innerHeight || 800) * 0.7)));
    const layout = headLayout({ T, width: room, height, labelWidth: this.labelWidth });
    this.layout = layout;
    sizeCanvas(canvas, this.ctx, layout.width, layout.height, dpr);
    const focus = this.hover ?? this.cursor ?? this.pinned;
    const weights = o.attention[o.layer];
    const { shown, labels } = this;
    const drawn = paintHeadView(this.ctx, layout, { weights, heads: shown, labels, focus });
    if (focus)
      this.readout.textContent = describeFocus(focus, {
        weights,
        T,
        shown,
        numHeads: this.numHeads,
        labels,
        base: this.base(),
      });
    else if (drawn.lines === null)
      this.readout.textContent = `${T} tokens: too many lines to draw at once; point at or focus a token to see its lines.`;
    canvas.dataset.layout = JSON.stringify({
      top: layout.top,
      rowHeight: layout.rowHeight,
      left: layout.left,
      right: layout.right,
      labelStep: layout.labelStep,
      labelsDrawn: drawn.labelsDrawn,
      lines: drawn.lines,
      minWeight: drawn.minWeight,
      focus: focus ?? null,
    });
  }

  listen() {
    const { tracker, canvas } = this;
    tracker.on(this.toggles, 'click', (e) => this.toggle(e));
    tracker.on(canvas, 'pointermove', (e) => {
      const at = this.pointAt(e);
      if (sameToken(at, this.hover)) return;
      this.hover = at;
      this.draw();
    });
    tracker.on(canvas, 'pointerleave', () => {
      this.hover = null;
      this.draw();
    });
    tracker.on(canvas, 'click', (e) => {
      const at = this.pointAt(e);
      this.pinned = at && !(this.pinned && sameToken(this.pinned, at)) ? at : null;
      this.hover = at;
      this.draw();
    });
    tracker.on(canvas, 'focus', () => {
      this.cursor = this.cursor ?? this.pinned ?? { side: 'query', i: 0 };
      this.draw();
    });
    tracker.on(canvas, 'blur', () => {
      this.pinned = this.cursor;
      this.cursor = null;
      this.draw();
    });
    tracker.on(canvas, 'keydown', (e) => this.keyDown(e));
    onWidthChange(tracker, this.element, () => this.draw());
  }

  toggle(e) {
    const button = e.target.closest('button[data-head]');
    if (!button) return;
    const h = Number(button.dataset.head);
    this.shown[h] = !this.shown[h];
    button.setAttribute('aria-pressed', String(this.shown[h]));
    this.draw();
  }

  pointAt(e) {
    const box = this.canvas.getBoundingClientRect();
    return this.layout ? tokenAt(this.layout, e.clientX - box.left, e.clientY - box.top) : null;
  }

  keyDown(e) {
    if (!this.cursor || e.altKey || e.ctrlKey || e.metaKey) return;
    const T = this.o.tokens.length;
    const page = Math.max(1, Math.floor(400 / this.layout.rowHeight));
    const next = keyMove(e.key, this.cursor, T, page);
    if (!next) return;
    e.preventDefault();
    this.cursor = { side: next.side, i: Math.max(0, Math.min(T - 1, next.i)) };
    this.draw();
  }

  /** update(data), its options already known: checked as a whole, then shown. */
  apply(data) {
    const next = { ...this.o, ...data };
    this.numHeads = validate(next);
    this.o = next;
    this.setData();
    this.draw();
  }

  dispose() {
    this.tracker.undo();
  }
}

/**
 * @param {HTMLElement} element
 * @param {{ attention: Float32Array[], tokens: string[], layer?: number }} options
 */
export function createHeadView(element, options) {
  checkElement(VIEW, element);
  checkOptions(VIEW, options);
  checkKnown(VIEW, options, KNOWN);
  const o = { layer: 0, ...options };
  const numHeads = validate(o);
  ensureStyles(element.ownerDocument);
  const view = new HeadView(element, o, numHeads);
  return viewHandle(VIEW, KNOWN, {
    apply: (data) => view.apply(data),
    teardown: () => view.dispose(),
  });
}
