// BERT: a post-norm LayerNorm encoder (bidirectional attention), gelu (erf), token-type embeddings,
// and the masked-LM head (transform, LayerNorm, decoder tied to the embeddings, its own bias) when
// the checkpoint has cls.predictions.*.
import { learnedPositionsConfig } from './learned-positions.mjs';

// prettier-ignore
const NAMES = { hidden: 'hidden_size', heads: 'num_attention_heads', layers: 'num_hidden_layers',
  inner: 'intermediate_size', positions: 'max_position_embeddings', eps: ['layer_norm_eps', 1e-12],
  act: ['hidden_act', 'gelu'], placement: 'post', causal: false };

const OWN = {
  check(keys) {
    const kind = keys.value('position_embedding_type', 'absolute');
    if (kind !== 'absolute')
      throw keys.rangeError(`config.position_embedding_type ${JSON.stringify(kind)} is not supported: only "absolute"`);
  },
  intermediateSize: (keys, key) => keys.size(key),
  typeVocabSize: (keys) => keys.size('type_vocab_size', 2),
  attentionScale: (keys, headDim) => 1 / Math.sqrt(headDim),
};

function mlmHead(c, at, tokens) {
  const E = c.hiddenSize;
  if (!at.anyUnder('cls.predictions.')) return null;
  const head = at.under('cls.predictions.');
  const transform = {
    dense: head.linear('transform.dense', E, E, true),
    norm: head.norm('transform.LayerNorm', E, true),
  };
  // The decoder bias is saved as cls.predictions.bias, cls.predictions.decoder.bias, or both (tied).
  const biasName = head.has('bias') || !head.has('decoder.bias') ? 'bias' : 'decoder.bias';
  const bias = head.tensor(biasName, [c.vocabSize]);
  const tied = !head.has('decoder.weight');
  if (tied && !c.tieWordEmbeddings) head.tensor('decoder.weight', [c.vocabSize, E]); // throws: named as missing
  const weight = tied ? tokens : head.tensor('decoder.weight', [c.vocabSize, E]);
  return { weight, bias, tied, transform };
}

function planTensors(c, open) {
  const at = open('bert', 'embeddings.word_embeddings.weight', ['bert.', '']);
  const E = c.hiddenSize;
  const e = 'embeddings.';
  const embeddings = {
    tokens: at.tensor(e + 'word_embeddings.weight', [c.vocabSize, E]),
    positions: at.tensor(e + 'position_embeddings.weight', [c.maxPositions, E]),
    tokenTypes: at.tensor(e + 'token_type_embeddings.weight', [c.typeVocabSize, E]),
    norm: at.norm(e + 'LayerNorm', E, true),
  };
  const layers = Array.from({ length: c.numLayers }, (_, i) => {
    const p = `encoder.layer.${i}.`;
    return {
      q: at.linear(p + 'attention.self.query', E, E, true),
      k: at.linear(p + 'attention.self.key', E, E, true),
      v: at.linear(p + 'attention.self.value', E, E, true),
      o: at.linear(p + 'attention.output.dense', E, E, true),
      attentionNorm: at.norm(p + 'attention.output.LayerNorm', E, true),
      up: at.linear(p + 'intermediate.dense', c.intermediateSize, E, true),
      down: at.linear(p + 'output.dense', E, c.intermediateSize, true),
      outputNorm: at.norm(p + 'output.LayerNorm', E, true),
    };
  });
  return { embeddings, layers, finalNorm: null, lmHead: mlmHead(c, at, embeddings.tokens) };
}

export const family = {
  modelTypes: ['bert'],
  readConfig: (keys) => learnedPositionsConfig(keys, NAMES, OWN),
  planTensors,
};
