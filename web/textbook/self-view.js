// The single head's section: its heatmap, the legend of its colour scale and its caption (hidden,
// and its map disposed of, when the run has no single-head result).
import { barScale, selfCaption } from './captions.js';
import { scaleOf } from './run.js';
import { innerWidth } from './section-width.js';

const $ = (id) => document.getElementById(id);

/** @param {import('./heatmaps.js').Heatmaps} maps */
export function renderSelf(maps, run, sel) {
  const section = $('self-section');
  const host = $('self-map');
  section.hidden = !run?.results.self;
  if (section.hidden) return maps.drop(host);
  const width = innerWidth(section);
  host.style.width = `${Math.min(520, width)}px`;
  maps.place(host, run, sel, 'self', 'single head', { height: Math.min(400, width - 70), testId: 'heatmap-self' });
  $('self-legend').textContent = barScale(scaleOf(run, 'self').domain[1], 'the single head');
  $('self-caption').textContent = selfCaption(run.settings);
}
