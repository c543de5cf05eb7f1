// What the user has picked: a view (see run.js), a query row in it, and the cell the
// keyboard cursor is on. Pure functions: each returns a new selection.
import { viewsOf } from './run.js';

export const initialSelection = () => ({ view: 'self', query: 0, cell: { i: 0, j: 0 } });

/** The selection made valid for a run: a view it has, a query and a cell inside n × n. */
export function fitSelection(sel, run) {
  if (!run) return sel;
  const keys = viewsOf(run).map((v) => v.key);
  const view = keys.includes(sel.view) ? sel.view : (keys[0] ?? 'self');
  const inside = (k) => (k >= 0 && k < run.n ? k : 0);
  return { view, query: inside(sel.query), cell: { i: inside(sel.cell.i), j: inside(sel.cell.j) } };
}

/** Picks query row i of a view (a click on a cell or row label, Enter on a heatmap, the pickers). */
export function pickQuery(sel, view, i) {
  return { ...sel, view, query: i, cell: { ...sel.cell, i } };
}

// The keyboard cursor's move, shared with the steps' value strips.
export { moveCell } from '../shared/cursor-moves.js';
