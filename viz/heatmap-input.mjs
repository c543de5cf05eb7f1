// A heatmap's pointer, wheel, touch and keyboard input, turned into calls of its handlers.
// Wheel zooms only with Ctrl/⌘ (a trackpad pinch arrives so), and pans only when zoomed in:
// a plain wheel over a map that fits keeps scrolling the page.

// Keys that move the cursor: each maps the cell and the map's size to the next cell.
const MOVES = {
  ArrowUp: (c) => ({ i: c.i - 1, j: c.j }),
  ArrowDown: (c) => ({ i: c.i + 1, j: c.j }),
  ArrowLeft: (c) => ({ i: c.i, j: c.j - 1 }),
  ArrowRight: (c) => ({ i: c.i, j: c.j + 1 }),
  Home: (c, _, e) => (e.ctrlKey ? { i: 0, j: 0 } : { i: c.i, j: 0 }),
  End: (c, m, e) => (e.ctrlKey ? { i: m.T - 1, j: m.S - 1 } : { i: c.i, j: m.S - 1 }),
  PageUp: (c, m) => ({ i: c.i - m.pageRows, j: c.j }),
  PageDown: (c, m) => ({ i: c.i + m.pageRows, j: c.j }),
};
const ZOOM_KEYS = { '+': 1.5, '=': 1.5, '-': 1 / 1.5, _: 1 / 1.5 };

function point(canvas, e) {
  const box = canvas.getBoundingClientRect();
  return { x: e.clientX - box.left, y: e.clientY - box.top };
}

/** The pressed pointers of one canvas: a drag pans, two pointers pinch, a tap selects. */
class HeatmapInput {
  constructor(canvas, handlers) {
    this.canvas = canvas;
    this.h = handlers;
    this.pointers = new Map(); // pointerId → last point, while pressed
    this.pinch = null; // { distance } while two pointers are down
    this.dragged = false;
  }

  pointerMove(e) {
    const { h, pointers } = this;
    const p = point(this.canvas, e);
    const last = pointers.get(e.pointerId);
    if (last) {
      pointers.set(e.pointerId, p);
      if (pointers.size === 2) {
        this.pinchTo([...pointers.values()]);
        return;
      }
      const layout = h.layout();
      if (layout && layout.zoom > 1 && (Math.abs(p.x - last.x) > 0 || Math.abs(p.y - last.y) > 0)) {
        this.dragged = true;
        h.panBy(last.x - p.x, last.y - p.y);
        return;
      }
    }
    h.hover(h.cellAt(p.x, p.y));
  }

  pinchTo([a, b]) {
    const distance = Math.hypot(a.x - b.x, a.y - b.y);
    if (this.pinch && distance > 0) this.h.zoomBy(distance / this.pinch.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
    this.pinch = { distance };
  }

  pointerLeave() {
    if (this.pointers.size === 0) this.h.hover(null);
  }

  pointerDown(e) {
    this.pointers.set(e.pointerId, point(this.canvas, e));
    this.dragged = false;
    if (this.pointers.size === 2) this.pinch = null;
    if (this.h.layout()?.zoom > 1 && this.canvas.setPointerCapture) this.canvas.setPointerCapture(e.pointerId);
  }

  release(e) {
    const { h, pointers } = this;
    const was = pointers.get(e.pointerId);
    pointers.delete(e.pointerId);
    if (pointers.size < 2) this.pinch = null;
    if (e.type === 'pointerup' && was && !this.dragged && pointers.size === 0) {
      const p = point(this.canvas, e);
      const cell = h.cellAt(p.x, p.y);
      // A tap on a phone has no hover before it: it shows the cell as a hover would.
      if (cell) {
        h.hover(cell);
        h.select(cell);
      }
    }
  }

  wheel(e) {
    const { h } = this;
    const p = point(this.canvas, e);
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault();
      h.zoomBy(Math.exp(-e.deltaY / 300), p.x, p.y);
      return;
    }
    const layout = h.layout();
    if (!layout || layout.zoom <= 1) return;
    e.preventDefault();
    if (e.shiftKey) h.panBy(e.deltaY, 0);
    else h.panBy(e.deltaX, e.deltaY);
  }
}

function keyDown(h, e) {
  if (e.altKey) return;
  const move = MOVES[e.key];
  if (move) {
    e.preventDefault();
    h.move((c, m) => move(c, m, e));
    return;
  }
  if (e.key in ZOOM_KEYS && !e.ctrlKey && !e.metaKey) {
    e.preventDefault();
    h.zoomBy(ZOOM_KEYS[e.key]);
  } else if (e.key === '0' && !e.ctrlKey && !e.metaKey) {
    e.preventDefault();
    h.zoomFit();
  } else if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    h.selectCursor();
  }
}

export function attachHeatmapInput(tracker, canvas, h) {
  const input = new HeatmapInput(canvas, h);
  const release = (e) => input.release(e);
  tracker.on(canvas, 'pointermove', (e) => input.pointerMove(e));
  tracker.on(canvas, 'pointerleave', () => input.pointerLeave());
  tracker.on(canvas, 'pointerdown', (e) => input.pointerDown(e));
  tracker.on(canvas, 'pointerup', release);
  tracker.on(canvas, 'pointercancel', release);
  tracker.on(canvas, 'wheel', (e) => input.wheel(e), { passive: false });
  tracker.on(canvas, 'focus', () => h.focus(true));
  tracker.on(canvas, 'blur', () => h.focus(false));
  tracker.on(canvas, 'keydown', (e) => keyDown(h, e));
}
