// Small deterministic random numbers, so a seed reproduces the same page on any browser.
import { mulberry32 } from './package-entry.js';

export { mulberry32 };

/** FNV-1a hash of a string's UTF-16 code units → unsigned 32-bit integer. */
export function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A generator for one named stream under a seed: rngFor(7, 'wq') never depends on other streams. */
export function rngFor(seed, label) {
  return mulberry32(hashString(`${seed}\u0000${label}`));
}

/** A standard normal sample (Box–Muller) from a uniform generator. */
export function gaussian(rng) {
  const u = 1 - rng(); // (0, 1]: log stays finite
  const v = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
