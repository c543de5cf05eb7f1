// The four steps of the opened head for the query row on screen: asked of the model worker for the
// run on screen, drawn when they come back unless the run, head or row changed meanwhile.
import { stepsOf } from './run.js';
import { renderSteps } from '../shared/steps.js';
import { el } from '../shared/dom.js';

const $ = (id) => document.getElementById(id);

/**
 * @param {{ s, test }} ctx   the tab's state (its worker answers) and window.__poem
 */
export function askSteps({ s, test }) {
  const r = s.run;
  const open = s.ui.open;
  const box = $('head-steps');
  if (!r || !open || !s.visible || r.n === 0) return;
  const query = Math.min(s.ui.query, r.n - 1);
  const ask = ++s.stepsAsked;
  const current = () => ask === s.stepsAsked && s.run?.id === r.id;
  s.worker.headSteps({ run: r.id, layer: open.layer, head: open.head, query }).then(
    (steps) => {
      if (!current()) return;
      renderSteps(box, stepsOf(s.run, open, query, steps));
      test.stepsShown = { layer: open.layer, head: open.head, query };
    },
    (e) => {
      if (!current()) return;
      box.replaceChildren(
        el('p', { class: 'error inline', text: `The four steps could not be computed — ${e.name}: ${e.message}` }),
      );
    },
  );
}
