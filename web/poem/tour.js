// A short guided tour of the clearest heads the model learnt: each step opens one head large,
// points its query row at the poem's latest token and says where that row's weight goes, computed
// from the run on screen. Skippable at every step (End tour, or Escape), driven by its buttons
// (keyboard: Tab, Enter; the arrow keys move between steps), and the focus goes back where it was.
import { el } from '../shared/dom.js';
import { tokenLabel } from './run.js';

// The kinds of head the tour shows, in this order: the clearest patterns to see in a map.
const TOUR_KINDS = ['half-line', 'previous', 'punctuation'];

/** The tour's steps: the strongest head of each kind of TOUR_KINDS (then of the others), at most `count`. */
export function tourStops(heads, count = 3) {
  const strongest = (kind) => heads.find((h) => h.kind === kind);
  const out = TOUR_KINDS.map(strongest).filter(Boolean);
  for (const h of heads) if (out.length < count && !out.some((o) => o.kind === h.kind)) out.push(h);
  return out.slice(0, count);
}

/** Where row `query` of an [n, n] matrix puts its largest weight: { key, weight, back }. */
export function strongestKey(matrix, n, query) {
  let key = 0;
  for (let j = 1; j <= query; j++) if (matrix[query * n + j] > matrix[query * n + key]) key = j;
  return { key, weight: matrix[query * n + key], back: query - key };
}

/** What a stop says: the head's share over the anthology, and where the run's latest token looks. */
function describeStop(h, r, matrix) {
  if (!r || r.n < 2) return `${h.pattern}.`;
  const query = r.n - 1;
  const m = strongestKey(matrix(h.layer, h.head), r.n, query);
  const q = tokenLabel(r.texts[query]);
  const k = tokenLabel(r.texts[m.key]);
  const where = m.back === 0 ? 'itself' : `“${k}”, ${m.back} token${m.back === 1 ? '' : 's'} back`;
  return (
    `Over the whole anthology this head puts ${Math.round(100 * h.share)} % of its weight on ${h.pattern}. ` +
    `Here, the latest token “${q}” (row ${query + 1}) puts its largest weight, ${m.weight.toFixed(2)}, on ${where}.`
  );
}

/** The panel's content at step `at` of `count`: heading, text, and the Back, Next and End buttons. */
function stopPanel(at, count, heading, text) {
  const button = (act, label, extra = {}) =>
    el('button', { type: 'button', 'data-act': act, 'data-testid': `poem-tour-${act}`, ...extra }, label);
  return [
    el('h3', { id: 'poem-tour-heading', tabindex: '-1', text: `Tour ${at + 1} of ${count}: ${heading}` }),
    el('p', { 'data-testid': 'poem-tour-text', text }),
    el(
      'p',
      { class: 'buttons' },
      button('back', 'Back', at === 0 ? { disabled: '' } : {}),
      button('next', at === count - 1 ? 'Finish' : 'Next'),
      button('end', 'End tour'),
    ),
  ];
}

/**
 * @param {HTMLElement} box      the tour's panel (hidden while no tour runs)
 * @param {object} ctx
 * @param {() => object[]} ctx.stops                    tourStops of the model's heads
 * @param {() => object|null} ctx.run                    the run on screen (run.js)
 * @param {(layer, head) => Float32Array} ctx.matrix     the [n, n] map of a head in that run
 * @param {(layer, head, query) => void} ctx.show        opens the head with that query row
 * @returns {{ start(), end(), step: () => number }}
 */
export function createTour(box, { stops, run, matrix, show }) {
  let at = -1;
  let returnFocus = null;

  function render() {
    const list = stops();
    const h = list[at];
    show(h.layer, h.head, run() ? run().n - 1 : 0);
    const text = `Layer ${h.layer + 1}, head ${h.head + 1}. ${describeStop(h, run(), matrix)}`;
    box.replaceChildren(...stopPanel(at, list.length, h.name, text));
    box.dataset.step = String(at);
  }

  function go(step) {
    const list = stops();
    if (step < 0) return;
    if (step >= list.length) return end();
    at = step;
    render();
    box.querySelector('#poem-tour-heading').focus({ preventScroll: true });
  }

  function start() {
    if (stops().length === 0) return;
    returnFocus = document.activeElement;
    box.hidden = false;
    go(0);
  }

  function end() {
    at = -1;
    box.hidden = true;
    box.replaceChildren();
    delete box.dataset.step;
    returnFocus?.focus?.({ preventScroll: true });
    returnFocus = null;
  }

  box.addEventListener('click', (e) => {
    const act = e.target.closest('[data-act]')?.dataset.act;
    if (act === 'back') go(at - 1);
    else if (act === 'next') go(at + 1);
    else if (act === 'end') end();
  });
  box.addEventListener('keydown', (e) => {
    if (at < 0) return;
    if (e.key === 'Escape') end();
    else if (e.key === 'ArrowRight' && e.target.tagName !== 'INPUT') go(at + 1);
    else if (e.key === 'ArrowLeft' && e.target.tagName !== 'INPUT') go(at - 1);
    else return;
    e.preventDefault();
  });

  return { start, end, step: () => at };
}
