// A weight's colour exactly as wasm-attention/viz's maps paint it (their lookup table), so the
// page's bars give a weight the colour it has in the heatmap above them.
import { WEIGHT_LUT, lutIndex } from '../viz/colour-scale.mjs';

const bytes = new Uint8Array(WEIGHT_LUT.buffer);

/** Weight in [0, 1] (clamped) → [r, g, b] bytes. */
export function weightRGB(w) {
  const k = 4 * lutIndex(Number.isFinite(w) ? w : 0);
  return [bytes[k], bytes[k + 1], bytes[k + 2]];
}
