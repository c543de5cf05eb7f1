// The copy-bandwidth probe the decode rows measure themselves against: a decode step reads every
// weight and every cached K/V once, so its bytes ÷ this bandwidth is the time it could take at best.
import { median } from './util.mjs';

/** Copy bandwidth (bytes read + written per second) of a 64 MiB Float32Array.set, median of 7. */
export function bandwidthProbe() {
  const n = 16 * 1048576;
  const src = new Float32Array(n).fill(1),
    dst = new Float32Array(n);
  const times = [];
  for (let r = 0; r < 9; r++) {
    const t = performance.now();
    dst.set(src);
    times.push(performance.now() - t);
  }
  return (2 * 4 * n) / (median(times.slice(2)) / 1000);
}
