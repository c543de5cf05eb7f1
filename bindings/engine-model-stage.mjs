// The slots of the module's model functions (bindings/model-embind.cpp): a checkpoint plan
// (lib/model/checkpoint.mjs) staged as the model's configuration, then part by part (embeddings,
// each block, the head) with its tensors copied into the heap by a HeapScope the caller frees once
// the module has packed them. Slot names come from the module (modelSlots()), never copied here.
import { ropeInverseFrequencies } from '../lib/model/config.mjs';

const NORM = { rms: 0, layer: 1 };
const ACTIVATION = { silu: 0, gelu_tanh: 1, gelu_erf: 2 };
export const HEAD = { none: 0, plain: 1, mlm: 2 };
export const LOGITS = { none: 0, last: 1, all: 2 };
const LAYOUT = { 'out,in': 0, 'in,out': 1 };

const floatBits = new Float32Array(1);
const uintBits = new Uint32Array(floatBits.buffer);

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

export class ModelStage {
  constructor(M) {
    this.M = M;
    this.slots = M.modelSlots();
    this.values = new Uint32Array(this.slots.count);
  }

  clear() {
    this.values.fill(0);
    return this;
  }

  set(name, value) {
    this.values[this.slots[name]] = value;
  }

  setFloat(name, value) {
    floatBits[0] = value;
    this.values[this.slots[name]] = uintBits[0];
  }

  // The slot block in the heap (allocated by `scope`), holding what is staged: the address to pass.
  place(scope) {
    const ptr = scope.alloc(this.values.length * 4);
    this.M.HEAPU32.set(this.values, ptr >>> 2);
    return ptr;
  }

  // The status slot of a block placed at ptr, after a create call.
  status(ptr) {
    return this.M.HEAPU32[(ptr >>> 2) + this.slots.status];
  }

  config(plan, scope) {
    const c = plan.config;
    const head = headKind(plan);
    this.set('num_layers', c.numLayers);
    this.set('hidden', c.hiddenSize);
    this.set('num_heads', c.numHeads);
    this.set('num_kv_heads', c.numKvHeads);
    this.set('head_dim', c.headDim);
    this.set('intermediate', c.intermediateSize);
    this.set('vocab', c.vocabSize);
    this.set('max_positions', c.positions === 'learned' ? c.maxPositions : 0);
    this.set('type_vocab', c.typeVocabSize ?? 0);
    this.set('norm', NORM[c.norm.kind]);
    this.set('post_norm', c.norm.placement === 'post' ? 1 : 0);
    this.setFloat('norm_eps', c.norm.eps);
    this.set('activation', ACTIVATION[c.activation]);
    this.set('gated_mlp', c.mlp === 'gated' ? 1 : 0);
    this.set('learned_positions', c.positions === 'learned' ? 1 : 0);
    if (c.positions === 'rope') {
      this.set('rope_dim', c.rope.dim);
      if (scope) {
        const frequencies = ropeInverseFrequencies(c.rope);
        const ptr = scope.alloc(frequencies.length * 8);
        this.M.HEAPF64.set(frequencies, ptr >>> 3);
        this.set('inverse_frequencies', ptr);
      }
    }
    this.set('causal', c.causal ? 1 : 0);
    this.setFloat('attention_scale', c.attentionScale);
    this.set('final_norm', plan.finalNorm ? 1 : 0);
    this.set('embedding_norm', plan.embeddings.norm ? 1 : 0);
    this.set('head', HEAD[head]);
    this.set('tied_head', head !== 'none' && plan.lmHead.tied ? 1 : 0);
  }

  // A tensor copied into the heap: its address (0 for none).
  tensor(scope, name, tensor) {
    return tensor ? scope.copy(name, tensor.data) : 0;
  }

  norm(scope, slot, name, norm) {
    if (!norm) return;
    this.set(`${slot}_weight`, this.tensor(scope, `${name}.weight`, norm.weight));
    this.set(`${slot}_bias`, this.tensor(scope, `${name}.bias`, norm.bias));
  }

  linear(scope, slot, name, linear) {
    if (!linear) return;
    this.set(`${slot}_weight`, this.tensor(scope, `${name}.weight`, linear.weight));
    this.set(`${slot}_bias`, this.tensor(scope, `${name}.bias`, linear.bias));
    this.set(`${slot}_layout`, LAYOUT[linear.layout]);
  }

  embeddings(scope, plan) {
    const e = plan.embeddings;
    this.set('tokens', this.tensor(scope, 'tokens', e.tokens));
    this.set('positions', this.tensor(scope, 'positions', e.positions));
    this.set('token_types', this.tensor(scope, 'tokenTypes', e.tokenTypes));
    this.norm(scope, 'embedding_norm', 'embeddings.norm', e.norm);
  }

  block(scope, plan, i) {
    const layer = plan.layers[i];
    const c = plan.config;
    const name = (part) => `layers[${i}].${part}`;
    this.set('layer', i);
    const postNorm = c.norm.placement === 'post';
    this.norm(scope, 'attention_norm', name('attentionNorm'), postNorm ? layer.attentionNorm : layer.inputNorm);
    this.norm(scope, 'mlp_norm', name('mlpNorm'), postNorm ? layer.outputNorm : layer.postAttentionNorm);
    if (layer.qkv) this.fusedQkv(scope, c, layer.qkv, name('qkv'));
    else for (const p of ['q', 'k', 'v']) this.linear(scope, p, name(p), layer[p]);
    for (const p of ['o', 'gate', 'up', 'down']) this.linear(scope, p, name(p), layer[p]);
    this.set('sliding_window', c.layerWindows[i] ?? 0);
  }

  // GPT-2's c_attn: one Conv1D [in, q | k | v], each projection a column slice of it.
  fusedQkv(scope, c, qkv, name) {
    const weight = this.tensor(scope, `${name}.weight`, qkv.weight);
    const bias = this.tensor(scope, `${name}.bias`, qkv.bias);
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

  head(scope, plan) {
    this.norm(scope, 'final_norm', 'finalNorm', plan.finalNorm);
    const head = plan.lmHead;
    if (!head) return;
    // A tied head's weight is the token table the embeddings brought: only its bias is read here.
    this.linear(scope, 'lm', 'lmHead', { ...head, weight: head.tied ? null : head.weight, layout: 'out,in' });
    if (head.transform) {
      this.linear(scope, 'transform', 'lmHead.transform.dense', head.transform.dense);
      this.norm(scope, 'transform_norm', 'lmHead.transform.norm', head.transform.norm);
    }
  }
}
