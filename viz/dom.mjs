// DOM helpers of the views: terse element building, and a record of everything a view adds
// (elements and listeners) so that dispose() can take it all away again.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  node.append(...children);
  return node;
}

/** Listeners and root elements added by one view; undo() removes them all. */
export function createTracker() {
  const listeners = [];
  const roots = [];
  const observers = [];
  return {
    on(target, type, fn, options) {
      target.addEventListener(type, fn, options);
      listeners.push([target, type, fn, options]);
    },
    root(node) {
      roots.push(node);
      return node;
    },
    observe(observer) {
      observers.push(observer);
      return observer;
    },
    undo() {
      for (const [target, type, fn, options] of listeners.splice(0)) target.removeEventListener(type, fn, options);
      for (const o of observers.splice(0)) o.disconnect();
      for (const node of roots.splice(0)) node.remove();
    },
  };
}

/** Calls fn when the element's width changes (not on every resize event of the window). */
export function onWidthChange(tracker, element, fn) {
  if (typeof ResizeObserver !== 'function') return;
  let last = element.clientWidth;
  const observer = tracker.observe(
    new ResizeObserver(() => {
      const w = element.clientWidth;
      if (w !== last) {
        last = w;
        fn();
      }
    }),
  );
  observer.observe(element);
}

/** A weight as text with at least two significant digits (three, as 0.0123 or 1.23e-7). */
export function formatWeight(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  return String(Number(v.toPrecision(3)));
}

/** A token as a label: whitespace and line breaks made visible, never empty. */
export function tokenText(t) {
  if (t === '') return '∅';
  return t
    .replace(/\n/g, '↵')
    .replace(/\t/g, '⇥')
    .replace(/^ +| +$/g, (s) => '·'.repeat(s.length));
}

/** The line under a view where what the pointer or keyboard is on is read out (a polite live region). */
export function readoutLine() {
  return el('p', { class: 'wa-viz-readout', role: 'status', 'aria-live': 'polite', 'data-testid': 'viz-readout' });
}

/**
 * Sizes a canvas to width × height CSS pixels at the device pixel ratio (only when that changed:
 * resizing clears it) and scales its context to CSS pixels.
 */
export function sizeCanvas(canvas, ctx, width, height, dpr) {
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}
