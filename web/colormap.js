// Perceptual colour scales as compact tables, linearly interpolated.
//
// viridis: matplotlib's perceptually uniform scale (33 evenly spaced stops of the
// 256-entry table as published in d3-scale-chromatic; interpolation stays within
// 2/255 of the full table). Used for attention weights, which live in [0, 1].
// diverging: ColorBrewer RdBu (11 classes), blue for negative, red for positive,
// white at the centre. Used for signed vectors (Q, K, V, outputs) and scores.

const VIRIDIS =
  '440154470d6048186a482374472d7b4537814240863e49893b528b375b8d33638d2f6b8e2c728e' +
  '297a8e26828e23898e21918c1f978b1f9f8821a68527ad8131b57b3dbc744cc26c5cc8636ece58' +
  '81d34d95d840aadc32c0df25d5e21aeae51afde725';

const BLUE_WHITE_RED = '0530612166ac4393c392c5ded1e5f0f7f7f7fddbc7f4a582d6604db2182b67001f';

function parse(hex) {
  const stops = [];
  for (let i = 0; i < hex.length; i += 6) {
    stops.push([0, 2, 4].map((k) => parseInt(hex.slice(i + k, i + k + 2), 16)));
  }
  return stops;
}

const viridisStops = parse(VIRIDIS);
const divergingStops = parse(BLUE_WHITE_RED);

function interpolate(stops, t) {
  const n = stops.length - 1;
  const x = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), 1) * n;
  const k = Math.min(Math.floor(x), n - 1);
  const f = x - k;
  const a = stops[k];
  const b = stops[k + 1];
  return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f));
}

/** viridis(t) for t in [0, 1] (clamped) → [r, g, b] bytes. */
export function viridis(t) {
  return interpolate(viridisStops, t);
}

/** diverging(t) for t in [-1, 1] (clamped): blue … white at 0 … red → [r, g, b] bytes. */
export function diverging(t) {
  return interpolate(divergingStops, (t + 1) / 2);
}

/** [r, g, b] → 'rgb(r, g, b)'. */
export function css(rgb) {
  return `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
}
