// The colour scale of signed values (the four steps' q, K, V and output): ColorBrewer RdBu
// (11 classes), blue for negative, red for positive, white at the centre, linearly interpolated.
// Attention weights are coloured by wasm-attention/viz's scale (its weightRGB).

const BLUE_WHITE_RED = '0530612166ac4393c392c5ded1e5f0f7f7f7fddbc7f4a582d6604db2182b67001f';

const stops = [];
for (let i = 0; i < BLUE_WHITE_RED.length; i += 6)
  stops.push([0, 2, 4].map((k) => parseInt(BLUE_WHITE_RED.slice(i + k, i + k + 2), 16)));

/** diverging(t) for t in [-1, 1] (clamped): blue … white at 0 … red → [r, g, b] bytes. */
export function diverging(t) {
  const n = stops.length - 1;
  const u = (t + 1) / 2;
  const x = Math.min(Math.max(Number.isFinite(u) ? u : 0, 0), 1) * n;
  const k = Math.min(Math.floor(x), n - 1);
  const f = x - k;
  return [0, 1, 2].map((c) => Math.round(stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f));
}
