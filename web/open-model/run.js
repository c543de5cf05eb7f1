// One run of an opened model as data: its tokens and the attention rows of every layer and head
// as they stream in from the worker, kept in buffers sized once for the whole run. Pure: no DOM.
//
// A decoder's rows arrive one position behind its tokens: the prompt but its last token at once,
// then with each new token the row of the position that chose it, and the final token's row at
// the end. An encoder's arrive all at once.

/**
 * @param {{ id, numLayers, numHeads, capacity }} shape   capacity: the most tokens the run can hold
 */
export function createRun({ id, numLayers, numHeads, capacity }) {
  return {
    id,
    numLayers,
    numHeads,
    capacity,
    ids: [],
    labels: [],
    pieces: [], // each new token's piece of the text (null without a tokenizer)
    promptLength: 0,
    rows: 0, // positions whose attention rows are in
    // per layer [heads, capacity, capacity]; row i holds its i + 1 keys, zeros after
    layers: Array.from({ length: numLayers }, () => new Float32Array(numHeads * capacity * capacity)),
    predictions: null,
    text: null,
    done: false,
    reason: null,
    ms: 0,
  };
}

/** Adds attention rows for positions first … first + r − 1: per layer [heads, r, keys]. */
export function addRows(run, attention, first) {
  const { numHeads: H, capacity: cap } = run;
  const sample = attention.find(Boolean);
  if (!sample) return run;
  // r rows after `first`: a block fed together attends to every key up to its last row
  const r = solveRows(sample.length / H, first);
  const keys = first + r;
  attention.forEach((layer, l) => {
    if (!layer) return;
    const out = run.layers[l];
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < r; i++) {
        const src = layer.subarray((h * r + i) * keys, (h * r + i + 1) * keys);
        out.set(src, h * cap * cap + (first + i) * cap);
      }
    }
  });
  run.rows = Math.max(run.rows, first + r);
  return run;
}

// rows·(first + rows) = perHead, the block's size per head: the positive root.
function solveRows(perHead, first) {
  const r = Math.round((-first + Math.sqrt(first * first + 4 * perHead)) / 2);
  if (r * (first + r) !== perHead)
    throw new RangeError(`attention block of ${perHead} values per head after ${first} rows`);
  return r;
}

/** The prompt (a decoder's, or what an encoder encoded): its ids, labels and attention rows. */
export function addPrompt(run, { ids, labels, attention }) {
  run.ids.push(...ids);
  run.labels.push(...labels);
  run.promptLength = ids.length;
  if (attention.length && attention[0]?.length) addRows(run, attention, 0);
  return run;
}

/** A new token, with the rows (per layer [heads, keys]) of the position that chose it. */
export function addToken(run, { token, rows }) {
  run.ids.push(token.id);
  run.labels.push(token.label);
  run.pieces.push(token.piece);
  addRows(run, rows, run.rows);
  return run;
}

/** The end: the final token's rows, the text, why it ended. */
export function finishRun(run, { last, text, reason, ms, predictions = null }) {
  if (last) addRows(run, last, run.rows);
  run.text = text ?? null;
  run.reason = reason;
  run.ms = ms;
  run.predictions = predictions;
  run.done = true;
  return run;
}

/**
 * The attention drawn now: per layer a Float32Array [heads, n, n] over the n positions whose rows
 * are in, and their labels (a copy only when the run's buffers are larger than n).
 */
export function shownAttention(run) {
  const n = run.rows;
  const { numHeads: H, capacity: cap } = run;
  const attention = run.layers.map((buf) => {
    if (n === cap) return buf;
    const out = new Float32Array(H * n * n);
    for (let h = 0; h < H; h++)
      for (let i = 0; i < n; i++)
        out.set(buf.subarray(h * cap * cap + i * cap, h * cap * cap + i * cap + n), (h * n + i) * n);
    return out;
  });
  return { n, attention, tokens: run.labels.slice(0, n) };
}
