// The picked query's section: the query and view pickers, the query's weights as bars (on the
// colour scale of the map they come from) and its four steps with the engine's numbers.
import { weightRGB } from '../../viz/index.mjs';
import { drawBars } from '../shared/bars.js';
import { renderSteps } from '../shared/steps.js';
import { el } from '../shared/dom.js';
import { NO_INTERMEDIATES, rowCaption } from './captions.js';
import { maskedCells, matrixOf, scaleOf, stepsData, viewsOf } from './run.js';
import { innerWidth } from './section-width.js';

const $ = (id) => document.getElementById(id);

export function renderQuery(run, sel) {
  const section = $('query-section');
  section.hidden = !run;
  const bars = $('row-bars');
  bars.weights = null;
  if (!run) return;
  const views = viewsOf(run);
  fillPickers(run, sel, views);
  const view = views.find((v) => v.key === sel.view);
  drawRowBars(bars, run, sel, view, Math.min(640, innerWidth(section)));
  const steps = $('steps');
  const data = stepsData(run, sel.view, sel.query);
  if (data) renderSteps(steps, data);
  else steps.replaceChildren(el('p', { class: 'error inline', text: NO_INTERMEDIATES }));
}

/** The query picker (one option a token) and the view picker ("in"), set to the selection. */
function fillPickers(run, sel, views) {
  const querySelect = $('query');
  querySelect.replaceChildren(...run.tokens.map((t, i) => el('option', { value: String(i), text: `${i + 1}: ${t}` })));
  querySelect.value = String(sel.query);
  const sourceSelect = $('source');
  sourceSelect.replaceChildren(...views.map((v) => el('option', { value: v.key, text: v.label })));
  sourceSelect.value = sel.view;
}

/** The selected query's row of the selected view as bars; its weights stay on the canvas (bars.weights). */
function drawRowBars(bars, run, sel, view, width) {
  const n = run.n;
  const values = matrixOf(run, sel.view).subarray(sel.query * n, (sel.query + 1) * n);
  const masked = maskedCells(run);
  drawBars(bars, {
    values,
    labels: run.tokens,
    colour: weightRGB,
    max: scaleOf(run, view.group).domain[1],
    masked: masked && ((j) => masked(sel.query, j)),
    maxWidth: width,
  });
  bars.weights = values;
  bars.dataset.view = sel.view;
  $('row-caption').textContent = rowCaption(run.tokens[sel.query], sel.query, view.label);
  bars.setAttribute('aria-label', `weights of query ${run.tokens[sel.query]} in ${view.label}`);
}
