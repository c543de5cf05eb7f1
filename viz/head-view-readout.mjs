// The head view's read-out line for a focused token: its strongest links, as the mean weight over
// the heads shown, so a screen reader hears what the lines show.
import { formatWeight } from './dom.mjs';

const TOP_KEYS = 3;

/**
 * f: { side: 'query' | 'key', i }; weights: one layer [H, T, T]; shown: per head, whether it is on;
 * base: the number of the first token and head (0 or 1).
 */
export function describeFocus(f, { weights, T, shown, numHeads, labels, base }) {
  const heads = shown.map((on, h) => (on ? h : -1)).filter((h) => h >= 0);
  if (heads.length === 0) return `${f.side} “${labels[f.i]}” (#${f.i + base}): no head shown`;
  const mean = new Float64Array(T);
  for (const h of heads)
    for (let k = 0; k < T; k++)
      mean[k] += f.side === 'query' ? weights[h * T * T + f.i * T + k] : weights[h * T * T + k * T + f.i];
  const order = Array.from(mean.keys())
    .sort((a, b) => mean[b] - mean[a])
    .slice(0, TOP_KEYS);
  const which =
    heads.length === numHeads
      ? 'all heads'
      : `head${heads.length > 1 ? 's' : ''} ${heads.map((h) => h + base).join(', ')}`;
  const links = order.map((k) => `“${labels[k]}” (#${k + base}) ${formatWeight(mean[k] / heads.length)}`).join(', ');
  return f.side === 'query'
    ? `query “${labels[f.i]}” (#${f.i + base}) attends most to ${links} (mean of ${which})`
    : `key “${labels[f.i]}” (#${f.i + base}) is attended most by ${links} (mean of ${which})`;
}
