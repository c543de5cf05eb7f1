// What a model is (ModelConfig, from lib/model/config.mjs's normalised config) and how its weights
// are handed over (the *Weights structs: pointers to the checkpoint's tensors as stored, read only
// during the set_* call that packs them).
#pragma once

#include <cstddef>

#include "../attention.h"

namespace wa {

enum class NormKind : int { rms = 0, layer = 1 };
enum class Activation : int { silu = 0, gelu_tanh = 1, gelu_erf = 2 };
// none: no logits (a BERT without its MLM head); plain: [final norm →] one linear layer;
// mlm: BERT's dense → activation → LayerNorm → decoder (+ bias).
enum class HeadKind : int { none = 0, plain = 1, mlm = 2 };
enum class LogitsMode : int { none = 0, last = 1, all = 2 };
// How a linear layer's weight is stored: nn.Linear's [out, in], or GPT-2's Conv1D [in, out].
enum class Layout : int { out_in = 0, in_out = 1 };

struct ModelConfig {
  std::size_t num_layers = 0, hidden = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0;
  std::size_t intermediate = 0, vocab = 0;
  std::size_t max_positions = 0;  // rows of the learned position table
  std::size_t type_vocab = 0;     // rows of the token-type table (BERT); 0: none
  NormKind norm = NormKind::rms;
  bool post_norm = false;  // BERT: x = norm(x + sublayer(x)); else x = x + sublayer(norm(x))
  float norm_eps = 1e-6f;
  Activation activation = Activation::silu;
  bool gated_mlp = true;  // down(act(gate(h)) · up(h)); else down(act(up(h)))
  bool learned_positions = false;
  std::size_t rope_dim = 0;                     // entries of each head rotated (half-split); 0: none
  const double* inverse_frequencies = nullptr;  // [rope_dim / 2]; copied by Model::init
  bool causal = true;                           // decoders; BERT attends both ways
  float attention_scale = 0.0f;                 // of Q·Kᵀ
  bool final_norm = true;                       // decoders' last norm (BERT has none)
  bool embedding_norm = false;                  // BERT's LayerNorm of the embeddings
  HeadKind head = HeadKind::plain;
  bool tied_head = false;  // the LM head's weight is the token embedding (kept once, packed)
  // How the linear layers (attention projections, MLP, an untied LM head, BERT's head transform) store
  // their weights; embeddings, a tied head, norms and biases stay f32.
  WeightDtype weight_dtype = WeightDtype::f32;
};

struct NormWeights {
  const float* weight = nullptr;
  const float* bias = nullptr;  // LayerNorm's (optional)
};

struct LinearSource {
  const float* weight = nullptr;
  const float* bias = nullptr;  // [out] or null
  Layout layout = Layout::out_in;
  // Floats from one stored row to the next: 0 means dense (in for out_in, out for in_out); GPT-2's
  // fused c_attn [in, 3·hidden] gives each of q, k, v as a column offset with ld = 3·hidden.
  std::size_t ld = 0;
};

struct BlockWeights {
  // Pre-norm: the norm before attention (input_layernorm, ln_1) and before the MLP
  // (post_attention_layernorm, ln_2). Post-norm: after them (attention.output.LayerNorm,
  // output.LayerNorm).
  NormWeights attention_norm, mlp_norm;
  LinearSource q, k, v, o;
  LinearSource gate, up, down;     // gate only for a gated MLP
  std::size_t sliding_window = 0;  // 0: none; key j hidden from query i when i − j ≥ window
};

struct EmbeddingWeights {
  const float* tokens = nullptr;       // [vocab, hidden]
  const float* positions = nullptr;    // [max_positions, hidden] with learned positions
  const float* token_types = nullptr;  // [type_vocab, hidden] when type_vocab > 0
  NormWeights norm;                    // with embedding_norm
};

struct HeadWeights {
  NormWeights final_norm;      // with final_norm
  LinearSource lm;             // [vocab, hidden]; weight null when tied (its bias still read)
  LinearSource transform;      // mlm: dense [hidden, hidden]
  NormWeights transform_norm;  // mlm: its LayerNorm
};

// The attention of a block: every projection hidden → heads, the out projection back, RoPE with
// the model's frequencies, the block's window.
inline LayerConfig attention_config(const ModelConfig& c, std::size_t window) {
  LayerConfig l;
  l.q_in = l.k_in = l.v_in = c.hidden;
  l.num_heads = c.num_heads;
  l.num_kv_heads = c.num_kv_heads;
  l.head_dim_qk = l.head_dim_v = c.head_dim;
  l.out_projection = true;
  l.out_dim = c.hidden;
  l.rope.dim = c.rope_dim;
  l.rope.inverse_frequencies = c.rope_dim ? c.inverse_frequencies : nullptr;
  l.sliding_window = window;
  l.weight_dtype = c.weight_dtype;
  return l;
}

}  // namespace wa
