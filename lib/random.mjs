// mulberry32, the seeded generator both the page and the model runtime's sampling draw from: one
// definition, so a seed gives the same numbers wherever it is used.

/** mulberry32: a 32-bit generator → a function returning floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
