// The colour scale as a small bar with its ticks, in HTML (readable, no canvas to draw).
import { scalePosition, weightColour } from './colour-scale.mjs';
import { el } from './dom.mjs';

const TICKS = [0, 0.1, 0.5, 1];

export function legend() {
  const stops = Array.from({ length: 11 }, (_, k) => `${weightColour((k / 10) ** 2)} ${k * 10}%`);
  const bar = el('span', { class: 'wa-viz-legend-bar', 'aria-hidden': 'true' });
  bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
  const ticks = TICKS.map((t) => `${t} at ${Math.round(scalePosition(t) * 100)} %`).join(', ');
  return el(
    'span',
    { class: 'wa-viz-legend', title: `colour: weight on a square-root scale (${ticks})` },
    'weight 0',
    bar,
    '1 (√ scale)',
  );
}
