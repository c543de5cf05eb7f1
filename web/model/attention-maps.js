// The causal attention maps of a session, kept as they are computed: per layer and head, the
// weights row of every fed token over the keys 0 … its position (the rest of a causal row is zero,
// so it is not stored). A token's row is final once fed: later tokens never change it.

export function createAttentionMaps(nLayers, nHeads) {
  // rows[layer][head][i]: Float32Array(i + 1)
  const rows = Array.from({ length: nLayers }, () => Array.from({ length: nHeads }, () => []));

  /**
   * Appends the rows of the tokens at positions from … from + count − 1 out of the engine's
   * weights of one layer, [nHeads, count, from + count] (every head, averageAttnWeights false).
   */
  function append(layer, weights, from, count) {
    const total = from + count;
    for (let h = 0; h < nHeads; h++) {
      const list = rows[layer][h];
      for (let t = 0; t < count; t++) {
        const start = (h * count + t) * total;
        list[from + t] = weights.slice(start, start + from + t + 1);
      }
    }
  }

  /** The [n, n] map of one head: row i holds the weights of query i over keys 0 … i, zeros after. */
  function map(layer, head) {
    const list = rows[layer][head];
    const n = list.length;
    const out = new Float32Array(n * n);
    list.forEach((row, i) => out.set(row, i * n));
    return out;
  }

  function truncate(n) {
    for (const layerRows of rows) for (const list of layerRows) list.length = n;
  }

  return { append, map, truncate };
}
