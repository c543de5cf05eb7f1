'use strict';
// Random-weight Llama checkpoints of any shape, as { config, tensors } with Hugging Face's names:
// what planCheckpoint reads (tensors as readSafetensors gives them). For shapes the committed
// fixtures are too small to reach (the engine's thread splits, the speed of a SmolLM-sized model).
// Seeded (mulberry32, lib/random.mjs's), so a shape and seed always give the same weights.
const { mulberry32 } = require('./model-modules').modelModules();

/**
 * @param {{ layers: number, hidden: number, heads: number, kvHeads: number, headDim: number,
 *   intermediate: number, vocab: number, tied?: boolean, maxPositions?: number, seed?: number }} shape
 */
function randomLlama(shape) {
  const { layers, hidden, heads, kvHeads, headDim, intermediate, vocab, tied = true, seed = 1 } = shape;
  const rng = mulberry32(seed);
  const tensors = {};
  const put = (name, dims, scale, offset = 0) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = offset + (rng() * 2 - 1) * scale;
    tensors[name] = { dtype: 'F32', shape: dims, data };
  };
  const linear = (name, out, inF) => put(`${name}.weight`, [out, inF], 1 / Math.sqrt(inF));
  put('model.embed_tokens.weight', [vocab, hidden], 1);
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    put(`${p}input_layernorm.weight`, [hidden], 0.1, 1);
    linear(`${p}self_attn.q_proj`, heads * headDim, hidden);
    linear(`${p}self_attn.k_proj`, kvHeads * headDim, hidden);
    linear(`${p}self_attn.v_proj`, kvHeads * headDim, hidden);
    linear(`${p}self_attn.o_proj`, hidden, heads * headDim);
    put(`${p}post_attention_layernorm.weight`, [hidden], 0.1, 1);
    linear(`${p}mlp.gate_proj`, intermediate, hidden);
    linear(`${p}mlp.up_proj`, intermediate, hidden);
    linear(`${p}mlp.down_proj`, hidden, intermediate);
  }
  put('model.norm.weight', [hidden], 0.1, 1);
  if (!tied) linear('lm_head', vocab, hidden);
  const config = {
    model_type: 'llama',
    num_hidden_layers: layers,
    hidden_size: hidden,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    intermediate_size: intermediate,
    vocab_size: vocab,
    max_position_embeddings: shape.maxPositions ?? 2048,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: tied,
  };
  return { config, tensors };
}

/** SmolLM-135M's shape (the bench model). */
const SMOLLM_135M = {
  layers: 30,
  hidden: 576,
  heads: 9,
  kvHeads: 3,
  headDim: 64,
  intermediate: 1536,
  vocab: 49152,
  tied: true,
};

/** The demo's poem model's shape (models/tang-poems). */
const POEM = { layers: 4, hidden: 128, heads: 4, kvHeads: 2, headDim: 32, intermediate: 384, vocab: 2501, tied: true };

module.exports = { randomLlama, SMOLLM_135M, POEM };
