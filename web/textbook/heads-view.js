// The multi-head section: a grid of one small heatmap per head and one of their average, with the
// legend of their shared colour scale and the caption. The grid is kept while a run has the same
// number of heads (a new selection, same heads), so a focused map keeps its focus.
import { barScale, headsCaption } from './captions.js';
import { el } from '../shared/dom.js';
import { scaleOf } from './run.js';
import { innerWidth } from './section-width.js';

const $ = (id) => document.getElementById(id);

/** @param {import('./heatmaps.js').Heatmaps} maps */
export function renderHeads(maps, run, sel) {
  const section = $('mha-section');
  const box = $('mha-maps');
  const ok = Boolean(run?.results.mhaHeads && run.results.mhaAverage);
  section.hidden = !ok;
  const H = run?.settings?.numHeads;
  const same = ok && box.dataset.heads === String(H) && box.children.length === H + 1;
  if (!same) clearGrid(maps, box);
  if (!ok) return;
  const width = innerWidth(section); // measured before the grid is built, as the grid may change it
  if (!same) buildGrid(box, H);
  placeMaps(maps, box, run, sel, width);
  $('mha-legend').textContent = barScale(scaleOf(run, 'mha').domain[1], 'every head and their average');
  $('mha-caption').textContent = headsCaption(run.settings, run.settings.dModel / H);
}

function clearGrid(maps, box) {
  for (const host of box.querySelectorAll('.map-box')) maps.drop(host);
  box.replaceChildren();
  delete box.dataset.heads;
}

/** One figure per head and one for the average; each map's title says what it is: no caption beside it. */
function buildGrid(box, H) {
  const figure = (attrs) => el('figure', { class: 'map', ...attrs }, el('div', { class: 'map-box' }));
  const figures = Array.from({ length: H }, (_, h) => figure({ 'data-view': 'head', 'data-head': String(h) }));
  figures.push(figure({ 'data-view': 'average' }));
  box.replaceChildren(...figures);
  box.dataset.heads = String(H);
}

function placeMaps(maps, box, run, sel, width) {
  const H = run.settings.numHeads;
  const headDim = run.settings.dModel / H;
  const side = Math.min(H <= 4 ? 240 : H <= 8 ? 200 : 150, width - 60);
  box.querySelectorAll('.map-box').forEach((host, k) => {
    host.style.width = `${Math.min(width, side + 110)}px`; // room for the row labels beside the grid
    if (k < H) {
      const label = `head ${k + 1} · dims ${k * headDim}–${(k + 1) * headDim - 1}`;
      maps.place(host, run, sel, `head:${k}`, label, { height: side, testId: 'heatmap-head', head: k, small: true });
    } else {
      maps.place(host, run, sel, 'average', `average of the ${H} heads`, {
        height: side,
        testId: 'heatmap-average',
        small: true,
      });
    }
  });
}
