// The one colour scale of every view: viridis (matplotlib's perceptually uniform scale) over the
// square root of a weight in [0, 1]. The root spreads the small weights of long contexts, where a
// row of 200 keys averages 0.005, over visible colours; 0 and 1 keep the scale's ends.
// Also the categorical colours of heads in the head view.

const VIRIDIS =
  '440154470d6048186a482374472d7b4537814240863e49893b528b375b8d33638d2f6b8e2c728e' +
  '297a8e26828e23898e21918c1f978b1f9f8821a68527ad8131b57b3dbc744cc26c5cc8636ece58' +
  '81d34d95d840aadc32c0df25d5e21aeae51afde725';

const STOPS = [];
for (let i = 0; i < VIRIDIS.length; i += 6)
  STOPS.push([0, 2, 4].map((k) => parseInt(VIRIDIS.slice(i + k, i + k + 2), 16)));

function viridis(t) {
  const n = STOPS.length - 1;
  const x = Math.min(Math.max(t, 0), 1) * n;
  const k = Math.min(Math.floor(x), n - 1);
  const f = x - k;
  return [0, 1, 2].map((c) => Math.round(STOPS[k][c] + (STOPS[k + 1][c] - STOPS[k][c]) * f));
}

/** Entries of the lookup table, indexed by round(weight × (LUT_SIZE - 1)). */
export const LUT_SIZE = 1024;

/** RGBA bytes of each weight step, as one Uint32 in the platform's byte order (for ImageData). */
export const WEIGHT_LUT = new Uint32Array(LUT_SIZE);
const bytes = new Uint8Array(WEIGHT_LUT.buffer);
for (let k = 0; k < LUT_SIZE; k++) {
  const [r, g, b] = viridis(Math.sqrt(k / (LUT_SIZE - 1)));
  bytes.set([r, g, b, 255], 4 * k);
}

/**
 * A weight's colour exactly as the views paint it (its lookup-table entry): [r, g, b] bytes. Public
 * (wasm-attention/viz), so a page's own marks (bars, token chips) match the maps; NaN counts as 0.
 */
export function weightRGB(w) {
  const k = 4 * lutIndex(Number.isFinite(w) ? w : 0);
  return [bytes[k], bytes[k + 1], bytes[k + 2]];
}

/** Where a weight sits on the scale, 0 … 1 (for legends). */
export const scalePosition = (w) => Math.sqrt(Math.min(Math.max(w, 0), 1));

/** A weight's colour as CSS. */
export function weightColour(w) {
  const [r, g, b] = viridis(scalePosition(Number.isFinite(w) ? w : 0));
  return `rgb(${r}, ${g}, ${b})`;
}

/** Index into WEIGHT_LUT of a weight (NaN and out-of-range values clamp to the ends). */
export function lutIndex(w) {
  const k = (w * (LUT_SIZE - 1) + 0.5) | 0;
  return k < 0 ? 0 : k >= LUT_SIZE ? LUT_SIZE - 1 : k;
}

/** Colour of masked (not attended: later) cells. */
export const MASK_CSS = '#d9d9d9';
export const MASK_RGBA = new Uint32Array(new Uint8Array([217, 217, 217, 255]).buffer)[0];

// Tableau 10: distinct on white and for the common colour-vision deficiencies, in this order.
const HEAD_COLOURS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];

/** The head view's colour of head h (after 10, the same hues darkened, then lightened, …). */
export function headColour(h) {
  const base = HEAD_COLOURS[h % HEAD_COLOURS.length];
  const round = Math.floor(h / HEAD_COLOURS.length);
  if (round === 0) return base;
  const toward = round % 2 ? 0 : 255;
  const amount = Math.min(0.6, 0.3 * Math.ceil(round / 2));
  const mixed = [1, 3, 5].map((k) => Math.round(parseInt(base.slice(k, k + 2), 16) * (1 - amount) + toward * amount));
  return `rgb(${mixed.join(', ')})`;
}
