// The order the sampler (sampling.mjs) walks its candidates in — falling logit, rising id among equal
// logits — without a comparison sort of the vocabulary: top-k first finds its k-th logit by selection
// (only the candidates it keeps are then ordered), and a row of float32 logits (what the engine
// gives) is ordered by a stable radix sort of their bits, in linear time. The order is a total one,
// so any way of finding it gives the same ids in the same places as a sort with the comparator
// (a, b) => row[b] - row[a] || a - b would (NaN is never a candidate; −0 and +0 are equal).

// Below this many ids a comparison sort is quicker than the radix sort's counting passes; from the
// second many on, two passes of 16-bit digits beat three of 11 bits.
const SMALL = 256;
const LARGE = 16384;

const floatView = new Float32Array(1);
const bitsView = new Uint32Array(floatView.buffer);

/** The ids of row's entries above −∞ (NaN is not), rising. */
export function candidates(row) {
  let n = 0;
  for (let i = 0; i < row.length; i++) if (row[i] > -Infinity) n++;
  const ids = new Int32Array(n);
  for (let i = 0, j = 0; i < row.length; i++) if (row[i] > -Infinity) ids[j++] = i;
  return ids;
}

/**
 * The k-th largest of row's values at ids, repeats counted (1 ≤ k ≤ ids.length): quickselect with a
 * three-way partition (rows of logits have many ties), median-of-three pivots.
 */
export function kthLargest(row, ids, k) {
  const a = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) a[i] = row[ids[i]];
  const target = a.length - k; // its index in rising order
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const [x, y, z] = [a[lo], a[(lo + hi) >>> 1], a[hi]];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    // a[lo, lt) < pivot, a[lt, i) = pivot, a(gt, hi] > pivot
    let lt = lo;
    let i = lo;
    let gt = hi;
    while (i <= gt) {
      const v = a[i];
      if (v < pivot) {
        a[i++] = a[lt];
        a[lt++] = v;
      } else if (v > pivot) {
        a[i] = a[gt];
        a[gt--] = v;
      } else i++;
    }
    if (target < lt) hi = lt - 1;
    else if (target > gt) lo = gt + 1;
    else return pivot;
  }
  return a[lo];
}

/** The ids whose value in row is at least `least`, rising. */
export function atLeast(row, ids, least) {
  let n = 0;
  for (let i = 0; i < ids.length; i++) if (row[ids[i]] >= least) n++;
  const kept = new Int32Array(n);
  for (let i = 0, j = 0; i < ids.length; i++) if (row[ids[i]] >= least) kept[j++] = ids[i];
  return kept;
}

const before = (row) => (a, b) => row[b] - row[a] || a - b;

/** An unsigned integer from a float32's bits that falls as the value rises (−0 as +0). */
const fallingKey = (bits) => {
  const b = bits === 0x80000000 ? 0 : bits;
  return b & 0x80000000 ? b : ~(b | 0x80000000) >>> 0;
};

/**
 * A key per id whose rising order is the falling order of its value, or null when some value is not
 * a float32 (a Float64Array or an array of numbers with finer values).
 */
function fallingKeys(row, ids) {
  const keys = new Uint32Array(ids.length);
  if (row instanceof Float32Array) {
    const bits = new Uint32Array(row.buffer, row.byteOffset, row.length);
    for (let i = 0; i < ids.length; i++) keys[i] = fallingKey(bits[ids[i]]);
    return keys;
  }
  for (let i = 0; i < ids.length; i++) {
    const v = row[ids[i]];
    floatView[0] = v;
    if (floatView[0] !== v) return null;
    keys[i] = fallingKey(bitsView[0]);
  }
  return keys;
}

/** ids (rising) in the sampler's order: falling value in row, rising id among equal values. */
export function ranked(row, ids) {
  const keys = ids.length >= SMALL ? fallingKeys(row, ids) : null;
  if (keys === null) return Int32Array.from(ids).sort(before(row));
  // Least significant digit first; each pass is stable, so equal keys keep their rising ids.
  const digitBits = ids.length >= LARGE ? 16 : 11;
  const mask = (1 << digitBits) - 1;
  const counts = new Uint32Array(mask + 1);
  let order = Int32Array.from(ids);
  let spareOrder = new Int32Array(ids.length);
  let current = keys;
  let spareKeys = new Uint32Array(ids.length);
  for (let shift = 0; shift < 32; shift += digitBits) {
    counts.fill(0);
    for (let i = 0; i < current.length; i++) counts[(current[i] >>> shift) & mask]++;
    let start = 0;
    for (let d = 0; d <= mask; d++) {
      const c = counts[d];
      counts[d] = start;
      start += c;
    }
    for (let i = 0; i < current.length; i++) {
      const key = current[i];
      const at = counts[(key >>> shift) & mask]++;
      spareKeys[at] = key;
      spareOrder[at] = order[i];
    }
    [current, spareKeys] = [spareKeys, current];
    [order, spareOrder] = [spareOrder, order];
  }
  return order;
}
