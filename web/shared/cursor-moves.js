// The keyboard cursor of a grid of cells (a heatmap's, a value strip's): arrows move one cell, Home
// and End jump to the row's ends, and the cursor never leaves the grid.

const MOVES = {
  ArrowUp: [-1, 0],
  ArrowDown: [1, 0],
  ArrowLeft: [0, -1],
  ArrowRight: [0, 1],
  Home: [0, -Infinity],
  End: [0, Infinity],
};

/** The cursor after a key, inside rows × cols (n × n when cols is left out); null for other keys. */
export function moveCell(cell, key, rows, cols = rows) {
  const m = MOVES[key];
  if (!m) return null;
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
  return { i: clamp(cell.i + m[0], rows), j: clamp(cell.j + m[1], cols) };
}
