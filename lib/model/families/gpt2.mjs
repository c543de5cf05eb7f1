// GPT-2: learned positions, pre-norm LayerNorm, gelu_new, Conv1D weights stored [in, out], the
// fused c_attn (q | k | v along `out`), a tied LM head; config.json's keys named n_embd, n_head, ….
import { learnedPositionsConfig } from './learned-positions.mjs';

// prettier-ignore
const NAMES = { hidden: 'n_embd', heads: 'n_head', layers: 'n_layer', inner: 'n_inner', positions: 'n_positions',
  eps: ['layer_norm_epsilon', 1e-5], act: ['activation_function', 'gelu_new'], placement: 'pre', causal: true };

const OWN = {
  check(keys) {
    if (keys.flag('scale_attn_by_inverse_layer_idx', false))
      throw keys.rangeError('config.scale_attn_by_inverse_layer_idx is not supported');
  },
  intermediateSize: (keys, key, hiddenSize) => keys.size(key, 4 * hiddenSize),
  typeVocabSize: () => 0,
  attentionScale: (keys, headDim) => (keys.flag('scale_attn_weights', true) ? 1 / Math.sqrt(headDim) : 1),
};

function planTensors(c, open) {
  const at = open('gpt2', 'wte.weight', ['transformer.', '']);
  const E = c.hiddenSize;
  const conv = (name, outF, inF) => at.linear(name, outF, inF, true, 'in,out');
  const tokens = at.tensor('wte.weight', [c.vocabSize, E]);
  const positions = at.tensor('wpe.weight', [c.maxPositions, E]);
  const layers = Array.from({ length: c.numLayers }, (_, i) => {
    const p = `h.${i}.`;
    return {
      inputNorm: at.norm(p + 'ln_1', E, true),
      qkv: conv(p + 'attn.c_attn', 3 * E, E),
      o: conv(p + 'attn.c_proj', E, E),
      postAttentionNorm: at.norm(p + 'ln_2', E, true),
      up: conv(p + 'mlp.c_fc', c.intermediateSize, E),
      down: conv(p + 'mlp.c_proj', E, c.intermediateSize),
    };
  });
  const finalNorm = at.norm('ln_f', E, true);
  const lmHead = c.tieWordEmbeddings
    ? { weight: tokens, bias: null, tied: true, transform: null }
    : { weight: at.tensor('lm_head.weight', [c.vocabSize, E], false), bias: null, tied: false, transform: null };
  return { embeddings: { tokens, positions, tokenTypes: null, norm: null }, layers, finalNorm, lmHead };
}

export const family = {
  modelTypes: ['gpt2'],
  readConfig: (keys) => learnedPositionsConfig(keys, NAMES, OWN),
  planTensors,
};
