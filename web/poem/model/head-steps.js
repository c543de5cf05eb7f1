// The worked steps of one head for one query token, as a teaching view shows them: a one-shot
// engine call with returnIntermediates over the inputs the layer saw (its RMSNorm output for every
// token so far), separate from the cached path that generation uses. The query attends with
// causality at its own position, so keys after it appear masked (−∞ scaled score, weight 0).
import { kvHeadOf } from '../../../dist/index.mjs';

/**
 * What layer l's attention reads: input_layernorm(hiddenStates[l]), the RMSNorm of each row of
 * `hidden` ([rows, width], the residual stream before layer l from model.forward's hiddenStates)
 * with the layer's norm weight, as transformers' LlamaRMSNorm computes it (here in float64, then
 * float32): a few rows once per view, not worth a second output of the engine.
 */
export function attentionInput(hidden, weight, eps, rows, width) {
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    let squares = 0;
    for (let i = 0; i < width; i++) squares += hidden[r * width + i] ** 2;
    const inv = 1 / Math.sqrt(squares / width + eps);
    for (let i = 0; i < width; i++) out[r * width + i] = hidden[r * width + i] * inv * weight[i];
  }
  return out;
}

/** Row `row` of a [rows, width] array, the `width`-wide block `block` of it. */
const slice = (a, width, row, block, blockWidth) =>
  a.slice(row * width + block * blockWidth, row * width + (block + 1) * blockWidth);

/**
 * { q, keys, values, scores, scaledScores, weights, output } of query head `head` for the token at
 * position `query`, over all n tokens in `inputs` ([n, embedDim]): q [headDim] (after RoPE),
 * keys and values [n, headDim] of its K/V head (keys after RoPE), scores [n] (q·k, unscaled),
 * scaledScores [n] (scaled, −∞ where masked), weights [n], output [headDim] (the weighted sum of
 * values, before the output projection). Also kvHead and scale.
 */
export function headSteps(attn, layerArgs, inputs, n, head, query) {
  const { embedDim, numHeads, numKvHeads, headDim } = layerArgs;
  const kvHead = kvHeadOf(head, numHeads, numKvHeads);
  const keysIn = inputs.subarray(0, n * embedDim);
  const { weights, intermediates: m } = attn.multiHeadAttention({
    ...layerArgs,
    query: inputs.subarray(query * embedDim, (query + 1) * embedDim),
    key: keysIn,
    value: keysIn,
    positionOffset: query,
    isCausal: true,
    needWeights: true,
    averageAttnWeights: false,
    returnIntermediates: true,
  });
  const kvWidth = numKvHeads * headDim;
  const keys = new Float32Array(n * headDim);
  const values = new Float32Array(n * headDim);
  for (let j = 0; j < n; j++) {
    keys.set(slice(m.k, kvWidth, j, kvHead, headDim), j * headDim);
    values.set(slice(m.v, kvWidth, j, kvHead, headDim), j * headDim);
  }
  return {
    kvHead,
    scale: 1 / Math.sqrt(headDim),
    q: slice(m.q, numHeads * headDim, 0, head, headDim),
    keys,
    values,
    scores: slice(m.scores, n, head, 0, n),
    scaledScores: slice(m.scaledScores, n, head, 0, n),
    weights: slice(weights, n, head, 0, n),
    output: slice(m.attnOutput, numHeads * headDim, 0, head, headDim),
  };
}
