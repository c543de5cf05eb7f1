// createHeadView: BertViz's head view. One layer's heads as lines from each query token (left)
// to the key tokens it attends to (right), one colour per head; head toggles are buttons with
// aria-pressed; pointing at or moving the keyboard focus to a token shows only its lines, and
// its strongest keys are read out as page text.
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
import { createTracker, el, formatWeight, onWidthChange, tokenText, readoutLine, sizeCanvas } from './dom.mjs';
import { FONT_FAMILY } from './heatmap-draw.mjs';
import { HEAD_FONT_PX, headLayout, paintHeadView, tokenAt } from './head-view-draw.mjs';
import { ensureStyles } from './styles.mjs';
import { viewHandle } from './view-handle.mjs';

const VIEW = 'createHeadView';
const KNOWN = ['attention', 'tokens', 'layer', 'numberFrom'];
const TOP_KEYS = 3;
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

/**
 * @param {HTMLElement} element
 * @param {{ attention: Float32Array[], tokens: string[], layer?: number }} options
 */
export function createHeadView(element, options) {
  checkElement(VIEW, element);
  checkOptions(VIEW, options);
  checkKnown(VIEW, options, KNOWN);
  let o = { layer: 0, ...options };
  let numHeads = validate(o);
  ensureStyles(element.ownerDocument);

  const tracker = createTracker();
  const title = el('span', { class: 'wa-viz-title' });
  const toggles = el('div', { class: 'wa-viz-heads', role: 'group', 'aria-label': 'Heads shown' });
  const canvas = el('canvas', { tabindex: '0', role: 'img', 'data-testid': 'viz-head-canvas' });
  const readout = readoutLine();
  const root = tracker.root(
    el(
      'div',
      { class: 'wa-viz wa-viz-headview', 'data-testid': 'viz-head-view' },
      el('div', { class: 'wa-viz-bar' }, title, toggles),
      el('div', { class: 'wa-viz-scroll' }, canvas),
      readout,
    ),
  );
  element.append(root);
  const ctx = canvas.getContext('2d');
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = `${HEAD_FONT_PX}px ${FONT_FAMILY}`;

  let shown = [];
  let labels = [];
  let labelWidth = 0;
  let hover = null;
  let pinned = null; // a clicked token keeps its lines after the pointer leaves
  let cursor = null; // the keyboard's token while the canvas has focus
  let layout = null;
  const base = () => o.numberFrom ?? 0;

  function buildToggles() {
    if (toggles.children.length === numHeads) return;
    shown = Array.from({ length: numHeads }, (_, h) => shown[h] ?? true);
    toggles.replaceChildren(
      ...shown.map((on, h) => {
        const button = el(
          'button',
          { type: 'button', 'aria-pressed': String(on), 'data-head': String(h), 'data-testid': 'viz-head-toggle' },
          el('span', { class: 'wa-viz-swatch', 'aria-hidden': 'true' }),
          `head ${h + base()}`,
        );
        button.firstChild.style.background = headColour(h);
        return button;
      }),
    );
  }

  function setData() {
    labels = o.tokens.map(tokenText);
    let widest = 0;
    for (const t of labels) widest = Math.max(widest, measure.measureText(t).width);
    labelWidth = Math.min(LABEL_MAX_PX, widest) + 6;
    buildToggles();
    const T = o.tokens.length;
    for (const f of [hover, pinned, cursor]) if (f && f.i >= T) f.i = T - 1;
    title.textContent = `Layer ${o.layer + base()}`;
    canvas.setAttribute(
      'aria-label',
      `Head view of layer ${o.layer + base()}: ${T} tokens, queries on the left, keys on the right, a line per weight, one colour per head. ` +
        'Up and Down move between tokens, Left and Right between the query and key columns; the strongest links are read out below.',
    );
  }

  const focusNow = () => hover ?? cursor ?? pinned;

  function describeFocus(f) {
    const T = o.tokens.length;
    const weights = o.attention[o.layer];
    const heads = shown.map((on, h) => (on ? h : -1)).filter((h) => h >= 0);
    if (heads.length === 0) return `${f.side} “${labels[f.i]}” (#${f.i + base()}): no head shown`;
    const mean = new Float64Array(T);
    for (const h of heads)
      for (let k = 0; k < T; k++)
        mean[k] += f.side === 'query' ? weights[h * T * T + f.i * T + k] : weights[h * T * T + k * T + f.i];
    const order = Array.from(mean.keys())
      .sort((a, b) => mean[b] - mean[a])
      .slice(0, TOP_KEYS);
    const which =
      heads.length === numHeads
        ? 'all heads'
        : `head${heads.length > 1 ? 's' : ''} ${heads.map((h) => h + base()).join(', ')}`;
    const links = order
      .map((k) => `“${labels[k]}” (#${k + base()}) ${formatWeight(mean[k] / heads.length)}`)
      .join(', ');
    return f.side === 'query'
      ? `query “${labels[f.i]}” (#${f.i + base()}) attends most to ${links} (mean of ${which})`
      : `key “${labels[f.i]}” (#${f.i + base()}) is attended most by ${links} (mean of ${which})`;
  }

  function draw() {
    const dpr = window.devicePixelRatio || 1;
    const room = Math.min(640, element.clientWidth || root.clientWidth || 480);
    const T = o.tokens.length;
    const height = Math.min(T * 20, Math.max(240, Math.round((window.innerHeight || 800) * 0.7)));
    layout = headLayout({ T, width: room, height, labelWidth });
    sizeCanvas(canvas, ctx, layout.width, layout.height, dpr);
    const focus = focusNow();
    const drawn = paintHeadView(ctx, layout, { weights: o.attention[o.layer], heads: shown, labels, focus });
    if (focus) readout.textContent = describeFocus(focus);
    else if (drawn.lines === null)
      readout.textContent = `${T} tokens: too many lines to draw at once; point at or focus a token to see its lines.`;
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

  tracker.on(toggles, 'click', (e) => {
    const button = e.target.closest('button[data-head]');
    if (!button) return;
    const h = Number(button.dataset.head);
    shown[h] = !shown[h];
    button.setAttribute('aria-pressed', String(shown[h]));
    draw();
  });
  const pointAt = (e) => {
    const box = canvas.getBoundingClientRect();
    return layout ? tokenAt(layout, e.clientX - box.left, e.clientY - box.top) : null;
  };
  tracker.on(canvas, 'pointermove', (e) => {
    const at = pointAt(e);
    if (at?.i === hover?.i && at?.side === hover?.side) return;
    hover = at;
    draw();
  });
  tracker.on(canvas, 'pointerleave', () => {
    hover = null;
    draw();
  });
  tracker.on(canvas, 'click', (e) => {
    const at = pointAt(e);
    pinned = at && !(pinned && pinned.i === at.i && pinned.side === at.side) ? at : null;
    hover = at;
    draw();
  });
  tracker.on(canvas, 'focus', () => {
    cursor = cursor ?? pinned ?? { side: 'query', i: 0 };
    draw();
  });
  tracker.on(canvas, 'blur', () => {
    pinned = cursor;
    cursor = null;
    draw();
  });
  tracker.on(canvas, 'keydown', (e) => {
    if (!cursor || e.altKey || e.ctrlKey || e.metaKey) return;
    const T = o.tokens.length;
    const page = Math.max(1, Math.floor(400 / layout.rowHeight));
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
    if (!moves[e.key]) return;
    e.preventDefault();
    const next = moves[e.key]();
    cursor = { side: next.side, i: Math.max(0, Math.min(T - 1, next.i)) };
    draw();
  });
  onWidthChange(tracker, element, draw);

  setData();
  draw();

  return viewHandle(VIEW, KNOWN, {
    apply(data) {
      const next = { ...o, ...data };
      numHeads = validate(next);
      o = next;
      setData();
      draw();
    },
    teardown() {
      tracker.undo();
    },
  });
}
