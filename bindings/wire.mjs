// The wire: how arguments reach the module. A call's arguments are staged in a JavaScript copy of the
// module's slot block (one 32-bit slot per name, names from wireSlots()) and copied into the heap
// with one set() just before the call; SlotStage is that staging for any slot table (the model
// functions' too, lib/model/). Everything both languages must agree on (status codes, mask kinds, the
// memory limit, every buffer size) is asked of the module here, never copied.
import { outOfMemory } from './heap.mjs';
import { WEIGHT_DTYPES, kvDtypeCode, stagedWindow } from './slot-codes.mjs';

// The bits of a float32 (the scale slot).
const floatBits = new Float32Array(1);
const uintBits = new Uint32Array(floatBits.buffer);
// The two 32-bit halves of a float64 (the RoPE base: angles are computed in double precision).
const doubleBits = new Float64Array(1);
const doubleHalves = new Uint32Array(doubleBits.buffer);

function sameSlots(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A float32's bits, as a 32-bit slot holds it. */
export function float32Bits(value) {
  floatBits[0] = value;
  return uintBits[0];
}

/**
 * The staging of one of the module's slot blocks: the attention functions' (Wire, below) and the
 * model functions' (lib/model/) alike. A stage is a Uint32Array with a slot per name of `slots` (the
 * table the module gives), written as stage[slots.name] = value.
 */
export class SlotStage {
  constructor(M, slots) {
    this.M = M;
    this.slots = slots;
    // A stage per call depth, reused: allocating one per call costs more than a small call's math.
    this.stages = [];
    this.depth = 0;
  }

  // Runs body(stage) with a cleared stage of its own: no user code runs between the staging and the
  // call, so a re-entrant call (from a getter in the arguments, which run before this) cannot see or
  // change another call's slots.
  withStage(body) {
    const stage = this.stages[this.depth] ?? (this.stages[this.depth] = new Uint32Array(this.slots.count));
    stage.fill(0);
    this.depth++;
    try {
      return body(stage);
    } finally {
      this.depth--;
    }
  }

  // The stage copied into a block that `scope` (a HeapScope) allocates: the address to pass.
  placeIn(scope, stage) {
    const ptr = scope.alloc(stage.length * 4);
    this.M.HEAPU32.set(stage, ptr >>> 2);
    return ptr;
  }

  // The status slot of a block placed at ptr, after a create call.
  statusAt(ptr) {
    return this.M.HEAPU32[(ptr >>> 2) + this.slots.status];
  }
}

export class Wire extends SlotStage {
  constructor(M) {
    super(M, M.wireSlots());
    const { status, maskKind, heapMaxBytes } = M.constants();
    this.STATUS = status;
    this.MASK_KIND = maskKind;
    this.heapMaxBytes = heapMaxBytes;
    this.sizeNames = M.forwardSizeNames();
    // The slot block, then (8-byte aligned) the doubles forwardSizes writes.
    this.sizesOffset = Math.ceil((this.slots.count * 4) / 8) * 8;
    this.block = M._malloc(this.sizesOffset + 8 * this.sizeNames.length) >>> 0;
    this.lastStage = null;
    this.lastSizes = null;
  }

  call(stage, fnName) {
    this.M.HEAPU32.set(stage, this.block >>> 2);
    return this.M[fnName](this.block);
  }

  // The handle a create call returned, or its failure (the status slot) as the error to throw.
  created(fn, what, handle, needed) {
    if (handle !== 0) return handle;
    const status = this.M.HEAPU32[(this.block >>> 2) + this.slots.status];
    if (status === this.STATUS.outOfMemory) throw outOfMemory(fn, needed, this.heapMaxBytes);
    throw new Error(`${fn}: internal error: the engine rejected the ${what} (status ${status})`);
  }

  // { output, weights, q, …, workspaceBytes, layerBytes } of the forward staged (names from the
  // module). They depend on the staged sizes and flags alone, so the last answer serves the next
  // call that stages the same (a model calls one shape again and again): two calls into the module
  // fewer, which a small call notices.
  forwardSizes(stage) {
    if (this.lastStage !== null && sameSlots(stage, this.lastStage)) return this.lastSizes;
    const { M, block, sizesOffset, sizeNames } = this;
    M.HEAPU32.set(stage, block >>> 2);
    M.forwardSizes(block, block + sizesOffset);
    const figures = M.HEAPF64.subarray((block + sizesOffset) / 8, (block + sizesOffset) / 8 + sizeNames.length);
    const sizes = { layerBytes: M.layerBytes(block) };
    sizeNames.forEach((name, i) => (sizes[name] = figures[i]));
    this.lastStage = stage.slice();
    this.lastSizes = sizes;
    return sizes;
  }

  stageConfig(stage, layer) {
    const slots = this.slots;
    stage[slots.q_in] = layer.qIn;
    stage[slots.k_in] = layer.kIn;
    stage[slots.v_in] = layer.vIn;
    stage[slots.num_heads] = layer.numHeads;
    stage[slots.head_dim_qk] = layer.headDimQk;
    stage[slots.head_dim_v] = layer.headDimV;
    stage[slots.out_projection] = layer.outProjection ? 1 : 0;
    stage[slots.num_kv_heads] = layer.numKvHeads;
    stage[slots.out_dim] = layer.outDim;
    stage[slots.alibi] = layer.alibi ? 1 : 0;
    stage[slots.sliding_window] = stagedWindow(layer.slidingWindow);
    stage[slots.weight_dtype] = WEIGHT_DTYPES.indexOf(layer.weightDtype ?? 'f32');
    if (layer.rope) {
      stage[slots.rope_dim] = layer.rope.dim;
      doubleBits[0] = layer.rope.base;
      stage[slots.rope_base_lo] = doubleHalves[0];
      stage[slots.rope_base_hi] = doubleHalves[1];
      stage[slots.rope_interleaved] = layer.rope.interleaved ? 1 : 0;
    }
  }

  // The layer's weights, copied in by `scope` (a HeapScope).
  stageWeights(stage, scope, layer) {
    const slots = this.slots;
    const w = layer.weights;
    const put = (name, t) => (t ? scope.copy(name, t) : 0);
    stage[slots.wo] = put('outProjWeight', w.wo);
    stage[slots.bo] = put('outProjBias', w.bo);
    stage[slots.alibi_slopes] = put('alibi', w.alibiSlopes);
    // Q, K, V rows packed in one tensor start at these byte offsets.
    const stageThree = (names, packedName, packed, offsets, separate) => {
      const base = packed ? scope.copy(packedName, packed) : 0;
      names.forEach((name, i) => {
        stage[slots[name]] = packed ? base + offsets[i] : put(name, separate[i]);
      });
    };
    const E = layer.qIn;
    stageThree(['wq', 'wk', 'wv'], 'inProjWeight', w.packedIn, [0, 4 * E * E, 8 * E * E], [w.wq, w.wk, w.wv]);
    const qWidth = layer.numHeads * layer.headDimQk,
      kvWidth = layer.numKvHeads * layer.headDimQk;
    stageThree(['bq', 'bk', 'bv'], 'inProjBias', w.inBias, [0, 4 * qWidth, 4 * (qWidth + kvWidth)], [w.bq, w.bk, w.bv]);
  }

  stageShape(stage, f) {
    const slots = this.slots;
    stage[slots.batch] = f.batch;
    stage[slots.tgt_len] = f.tgtLen;
    stage[slots.src_len] = f.srcLen;
    stage[slots.is_causal] = f.isCausal ? 1 : 0;
    floatBits[0] = f.scale;
    stage[slots.scale] = uintBits[0];
    stage[slots.average_weights] = f.averageWeights ? 1 : 0;
    stage[slots.need_weights] = f.needWeights ? 1 : 0;
    stage[slots.intermediates] = f.returnIntermediates ? 1 : 0;
    stage[slots.position_offset] = f.positionOffset;
    stage[slots.cache] = f.cache ? f.cache.handle : 0;
    // Its storage too: the sizes of a forward depend on it, and a cache made where a disposed one
    // was gets its handle (so the handle alone would let forwardSizes answer from the last call).
    stage[slots.cache_dtype] = f.cache ? kvDtypeCode(f.cache.dtype) : 0;
  }

  free() {
    this.M._free(this.block);
  }
}
