// Two rules of attention written once, for the engine's callers and the demo page alike: which
// K/V head a query head reads, and which keys a query may not see. Pure JavaScript, no engine:
// the page imports it on its own thread, where the engine never loads.

/**
 * The K/V head that query head `head` reads under grouped-query attention: consecutive query
 * heads share one K/V head, numHeads / numKvHeads of them each (1 K/V head: multi-query).
 */
export function kvHeadOf(head, numHeads, numKvHeads) {
  return Math.floor((head * numKvHeads) / numHeads);
}

/**
 * Whether key j is hidden from query row i. Positions are absolute: row i sits at
 * positionOffset + i (a decode step's rows come after the cached tokens), so causality and the
 * window are measured from there. With neither isCausal nor slidingWindow nothing is hidden.
 */
export function isKeyMasked({ isCausal = false, slidingWindow = 0, positionOffset = 0 }, i, j) {
  const pos = positionOffset + i;
  return (isCausal && j > pos) || (slidingWindow > 0 && pos - j >= slidingWindow);
}
