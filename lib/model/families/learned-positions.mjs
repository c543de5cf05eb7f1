// What GPT-2 and BERT share: learned positions, LayerNorm, a plain MLP, a bias on every linear layer,
// no window. They differ in their config.json's key names and defaults (`names`) and in a few keys
// of their own (`own`), read by gpt2.mjs and bert.mjs.

/**
 * @param keys config.mjs's readers of one config.json
 * @param names { hidden, heads, layers, inner, positions, eps: [key, default], act: [key, default],
 *   placement: 'pre' | 'post', causal }
 * @param own { check(keys), intermediateSize(keys, key, hiddenSize), typeVocabSize(keys),
 *   attentionScale(keys, headDim) }
 */
export function learnedPositionsConfig(keys, names, own) {
  const hiddenSize = keys.size(names.hidden);
  const numHeads = keys.size(names.heads);
  if (hiddenSize % numHeads !== 0) {
    throw keys.rangeError(`${names.hidden} (${hiddenSize}) must be a multiple of ${names.heads} (${numHeads})`);
  }
  own.check(keys);
  const headDim = hiddenSize / numHeads;
  const numLayers = keys.size(names.layers);
  return {
    numLayers,
    hiddenSize,
    numHeads,
    numKvHeads: numHeads,
    headDim,
    intermediateSize: own.intermediateSize(keys, names.inner, hiddenSize),
    vocabSize: keys.size('vocab_size'),
    maxPositions: keys.size(names.positions),
    causal: names.causal,
    norm: { kind: 'layer', placement: names.placement, eps: keys.positive(...names.eps) },
    activation: keys.activation(...names.act),
    mlp: 'plain',
    positions: 'learned',
    rope: null,
    slidingWindow: null,
    layerWindows: Array(numLayers).fill(null),
    biases: { qkv: true, output: true, mlp: true },
    tieWordEmbeddings: keys.flag('tie_word_embeddings', true),
    typeVocabSize: own.typeVocabSize(keys),
    attentionScale: own.attentionScale(keys, headDim),
  };
}
