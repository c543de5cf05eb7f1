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

export function attachHeatmapInput(tracker, canvas, h) {
  const pointers = new Map(); // pointerId → last point, while pressed
  let pinch = null; // { distance } while two pointers are down
  let dragged = false;

  tracker.on(canvas, 'pointermove', (e) => {
    const p = point(canvas, e);
    const last = pointers.get(e.pointerId);
    if (last) {
      pointers.set(e.pointerId, p);
      if (pointers.size === 2) {
        const [a, b] = [...pointers.values()];
        const distance = Math.hypot(a.x - b.x, a.y - b.y);
        if (pinch && distance > 0) h.zoomBy(distance / pinch.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
        pinch = { distance };
        return;
      }
      const layout = h.layout();
      if (layout && layout.zoom > 1 && (Math.abs(p.x - last.x) > 0 || Math.abs(p.y - last.y) > 0)) {
        dragged = true;
        h.panBy(last.x - p.x, last.y - p.y);
        return;
      }
    }
    h.hover(h.cellAt(p.x, p.y));
  });
  tracker.on(canvas, 'pointerleave', () => {
    if (pointers.size === 0) h.hover(null);
  });
  tracker.on(canvas, 'pointerdown', (e) => {
    pointers.set(e.pointerId, point(canvas, e));
    dragged = false;
    if (pointers.size === 2) pinch = null;
    if (h.layout()?.zoom > 1 && canvas.setPointerCapture) canvas.setPointerCapture(e.pointerId);
  });
  const release = (e) => {
    const was = pointers.get(e.pointerId);
    pointers.delete(e.pointerId);
    if (pointers.size < 2) pinch = null;
    if (e.type === 'pointerup' && was && !dragged && pointers.size === 0) {
      const p = point(canvas, e);
      const cell = h.cellAt(p.x, p.y);
      // A tap on a phone has no hover before it: it shows the cell as a hover would.
      if (cell) {
        h.hover(cell);
        h.select(cell);
      }
    }
  };
  tracker.on(canvas, 'pointerup', release);
  tracker.on(canvas, 'pointercancel', release);
  tracker.on(
    canvas,
    'wheel',
    (e) => {
      const p = point(canvas, e);
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
    },
    { passive: false },
  );
  tracker.on(canvas, 'focus', () => h.focus(true));
  tracker.on(canvas, 'blur', () => h.focus(false));
  tracker.on(canvas, 'keydown', (e) => {
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
  });
}
