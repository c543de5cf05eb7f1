// A checkpoint plan (checkpoint.mjs) as the module's model slots (bindings/model-embind.cpp): the
// configuration, then part by part (embeddings, each block, the head), with its tensors copied into
// the heap by a HeapScope the caller frees once the module has packed them. Stages are SlotStage's
// (bindings/wire.mjs); slot names come from the module (modelSlots()), never copied here.
import { writeFloat64 } from '../../bindings/model-calls.mjs';
import { float32Bits } from '../../bindings/wire.mjs';
import { ropeInverseFrequencies } from './config.mjs';

const NORM = { rms: 0, layer: 1 };
const ACTIVATION = { silu: 0, gelu_tanh: 1, gelu_erf: 2 };
const HEAD = { none: 0, plain: 1, mlm: 2 };
export const LOGITS = { none: 0, last: 1, all: 2 };
const LAYOUT = { 'out,in': 0, 'in,out': 1 };

/** The head a plan has: none (a BERT without its MLM head), mlm (BERT's transform), plain. */
export const headKind = (plan) => (plan.lmHead === null ? 'none' : plan.lmHead.transform ? 'mlm' : 'plain');

/** Bytes of a tensor once copied into the heap (float32). */
export const tensorBytes = (tensor) => (tensor ? tensor.data.length * 4 : 0);

/** Every tensor a part of the plan reads: [embeddings, block 0, …, head], each a list. */
export function planParts(plan) {
  const tensorsOf = (object) => {
    const found = [];
    const walk = (value) => {
      if (value === null || typeof value !== 'object') return;
      if (value.data && value.shape) found.push(value);
      else for (const v of Object.values(value)) walk(v);
    };
    walk(object);
    return found;
  };
  const e = plan.embeddings;
  const head = plan.lmHead;
  return [
    tensorsOf(e),
    ...plan.layers.map(tensorsOf),
    [...tensorsOf(plan.finalNorm), ...(head ? tensorsOf({ ...head, weight: head.tied ? null : head.weight }) : [])],
  ];
}

/**
 * The model's configuration into `stage`; with a `scope`, RoPE's inverse frequencies copied into the
 * heap too (the size query before anything is allocated passes none).
 */
export function stageConfig(stager, stage, plan, scope) {
  const { slots } = stager;
  const c = plan.config;
  const head = headKind(plan);
  stage[slots.num_layers] = c.numLayers;
  stage[slots.hidden] = c.hiddenSize;
  stage[slots.num_heads] = c.numHeads;
  stage[slots.num_kv_heads] = c.numKvHeads;
  stage[slots.head_dim] = c.headDim;
  stage[slots.intermediate] = c.intermediateSize;
  stage[slots.vocab] = c.vocabSize;
  stage[slots.max_positions] = c.positions === 'learned' ? c.maxPositions : 0;
  stage[slots.type_vocab] = c.typeVocabSize ?? 0;
  stage[slots.norm] = NORM[c.norm.kind];
  stage[slots.post_norm] = c.norm.placement === 'post' ? 1 : 0;
  stage[slots.norm_eps] = float32Bits(c.norm.eps);
  stage[slots.activation] = ACTIVATION[c.activation];
  stage[slots.gated_mlp] = c.mlp === 'gated' ? 1 : 0;
  stage[slots.learned_positions] = c.positions === 'learned' ? 1 : 0;
  if (c.positions === 'rope') {
    stage[slots.rope_dim] = c.rope.dim;
    if (scope) {
      const frequencies = ropeInverseFrequencies(c.rope);
      const ptr = scope.alloc(frequencies.length * 8);
      writeFloat64(stager.M, ptr, frequencies);
      stage[slots.inverse_frequencies] = ptr;
    }
  }
  stage[slots.causal] = c.causal ? 1 : 0;
  stage[slots.attention_scale] = float32Bits(c.attentionScale);
  stage[slots.final_norm] = plan.finalNorm ? 1 : 0;
  stage[slots.embedding_norm] = plan.embeddings.norm ? 1 : 0;
  stage[slots.head] = HEAD[head];
  stage[slots.tied_head] = head !== 'none' && plan.lmHead.tied ? 1 : 0;
}

// The slots of a model's parts, each tensor copied in by `scope` (its address; 0 for none).
class PartStage {
  constructor(stager, stage, scope) {
    this.slots = stager.slots;
    this.stage = stage;
    this.scope = scope;
  }

  set(name, value) {
    this.stage[this.slots[name]] = value;
  }

  tensor(name, tensor) {
    return tensor ? this.scope.copy(name, tensor.data) : 0;
  }

  norm(slot, name, norm) {
    if (!norm) return;
    this.set(`${slot}_weight`, this.tensor(`${name}.weight`, norm.weight));
    this.set(`${slot}_bias`, this.tensor(`${name}.bias`, norm.bias));
  }

  linear(slot, name, linear) {
    if (!linear) return;
    this.set(`${slot}_weight`, this.tensor(`${name}.weight`, linear.weight));
    this.set(`${slot}_bias`, this.tensor(`${name}.bias`, linear.bias));
    this.set(`${slot}_layout`, LAYOUT[linear.layout]);
  }

  embeddings(plan) {
    const e = plan.embeddings;
    this.set('tokens', this.tensor('tokens', e.tokens));
    this.set('positions', this.tensor('positions', e.positions));
    this.set('token_types', this.tensor('tokenTypes', e.tokenTypes));
    this.norm('embedding_norm', 'embeddings.norm', e.norm);
  }

  block(plan, i) {
    const layer = plan.layers[i];
    const c = plan.config;
    const name = (part) => `layers[${i}].${part}`;
    this.set('layer', i);
    const postNorm = c.norm.placement === 'post';
    this.norm('attention_norm', name('attentionNorm'), postNorm ? layer.attentionNorm : layer.inputNorm);
    this.norm('mlp_norm', name('mlpNorm'), postNorm ? layer.outputNorm : layer.postAttentionNorm);
    if (layer.qkv) this.fusedQkv(c, layer.qkv, name('qkv'));
    else for (const p of ['q', 'k', 'v']) this.linear(p, name(p), layer[p]);
    for (const p of ['o', 'gate', 'up', 'down']) this.linear(p, name(p), layer[p]);
    this.set('sliding_window', c.layerWindows[i] ?? 0);
  }

  // GPT-2's c_attn: one Conv1D [in, q | k | v], each projection a column slice of it.
  fusedQkv(c, qkv, name) {
    const weight = this.tensor(`${name}.weight`, qkv.weight);
    const bias = this.tensor(`${name}.bias`, qkv.bias);
    const widths = [c.numHeads * c.headDim, c.numKvHeads * c.headDim, c.numKvHeads * c.headDim];
    const total = widths[0] + widths[1] + widths[2];
    let offset = 0;
    ['q', 'k', 'v'].forEach((p, j) => {
      this.set(`${p}_weight`, weight + 4 * offset);
      this.set(`${p}_bias`, bias ? bias + 4 * offset : 0);
      this.set(`${p}_layout`, LAYOUT['in,out']);
      this.set(`${p}_ld`, total);
      offset += widths[j];
    });
  }

  head(plan) {
    this.norm('final_norm', 'finalNorm', plan.finalNorm);
    const head = plan.lmHead;
    if (!head) return;
    // A tied head's weight is the token table the embeddings brought: only its bias is read here.
    this.linear('lm', 'lmHead', { ...head, weight: head.tied ? null : head.weight, layout: 'out,in' });
    if (head.transform) {
      this.linear('transform', 'lmHead.transform.dense', head.transform.dense);
      this.norm('transform_norm', 'lmHead.transform.norm', head.transform.norm);
    }
  }
}

/** One part of the plan ('embeddings', 'block' with its index, 'head') into `stage`. */
export function stagePart(stager, stage, scope, plan, part, index) {
  const parts = new PartStage(stager, stage, scope);
  if (part === 'embeddings') parts.embeddings(plan);
  else if (part === 'block') parts.block(plan, index);
  else parts.head(plan);
}
