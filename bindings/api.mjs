// The package API (docs/API.md) on top of a loaded Emscripten module. No environment specifics here:
// index.mjs / index.cjs load the module and call makeApi.
//
// What both languages must agree on (status codes, mask kinds, the memory limit, every buffer
// size) comes from the module: constants(), wireSlots(), layerBytes() and forwardSizes().
import { Checker, describe } from './checks.mjs';
import { HeapScope, heapBytes, heapSlot, outOfMemory } from './heap.mjs';
import {
  MAX_POSITION, MHA_FORWARD_ARGS, MHA_LAYER_ARGS, SELF_FORWARD_ARGS, SELF_LAYER_ARGS,
  checkRepeatedLayerArgs, layerSizes, layerTensorLengths, mhaForward, mhaLayer, readForwardData, selfForward,
  selfLayer, stagedWindow,
} from './layer-args.mjs';

// What a forward returns, by its name in forwardSizes and its slot: always, and when intermediates
// are wanted (the teaching copies).
const RESULTS = [['output', 'output'], ['weights', 'weights']];
const INTERMEDIATES = [['q', 'i_q'], ['k', 'i_k'], ['v', 'i_v'], ['scores', 'i_scores'],
  ['scaledScores', 'i_scaled_scores'], ['attnOutput', 'i_attn_output']];
const ALL_RESULTS = [...RESULTS, ...INTERMEDIATES];
// The masks: argument, kind slot, data slot.
const MASKS = [['attnMask', 'attn_mask_kind', 'attn_mask'], ['keyPaddingMask', 'key_padding_mask_kind', 'key_padding_mask']];

// The tensors a layer copies in, by slot: packed Q, K, V rows (PyTorch's in_proj_weight /
// in_proj_bias) are copied once and the three slots point into them.
function layerTensors(layer) {
  const w = layer.weights;
  return [w.wq, w.wk, w.wv, w.bq, w.bk, w.bv, w.wo, w.bo, w.packedIn, w.inBias, w.alibiSlopes].filter((t) => t);
}

const sum = (values) => values.reduce((a, b) => a + b, 0);

function sameSlots(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// The bits of a float32 (the scale slot).
const floatBits = new Float32Array(1);
const uintBits = new Uint32Array(floatBits.buffer);
// The two 32-bit halves of a float64 (the RoPE base: angles are computed in double precision).
const doubleBits = new Float64Array(1);
const doubleHalves = new Uint32Array(doubleBits.buffer);

export function makeApi(Module, info) {
  let M = Module; // null once the engine is disposed: its memory can then be collected
  const slots = M.wireSlots();
  const { status: STATUS, maskKind: MASK_KIND, heapMaxBytes } = M.constants();
  const sizeNames = M.forwardSizeNames();
  // The slot block, then (8-byte aligned) the doubles forwardSizes writes.
  const sizesOffset = Math.ceil((slots.count * 4) / 8) * 8;
  const wire = M._malloc(sizesOffset + 8 * sizeNames.length);
  const liveLayers = new Set(); // { handle } of every layer not yet disposed
  const liveCaches = new Set(); // { handle } of every KV cache not yet disposed
  const caches = new WeakMap(); // cache object → its record { handle, layer, batch, maxLength }

  function engine(fn) {
    if (M === null) throw new Error(`${fn}: this engine was disposed; create a new one with createAttention`);
    return M;
  }

  // Arguments are staged per call in a JavaScript copy of the slot block and copied in with one
  // set() just before the call: no user code runs in between, so a re-entrant call (from a getter
  // in the arguments, which run before this) cannot see or change another call's slots.
  // (A stage per call depth, reused: allocating one per call costs more than a small call's math.)
  const stages = [];
  let depth = 0;
  function withStage(body) {
    const stage = stages[depth] ?? (stages[depth] = new Uint32Array(slots.count));
    stage.fill(0);
    depth++;
    try {
      return body(stage);
    } finally {
      depth--;
    }
  }
  function call(stage, fnName) {
    M.HEAPU32.set(stage, wire >>> 2);
    return M[fnName](wire);
  }
  // The handle a create call returned, or its failure (the status slot) as the error to throw.
  function created(fn, what, handle, needed) {
    if (handle !== 0) return handle;
    const status = M.HEAPU32[(wire >>> 2) + slots.status];
    if (status === STATUS.outOfMemory) throw outOfMemory(fn, needed, heapMaxBytes);
    throw new Error(`${fn}: internal error: the engine rejected the ${what} (status ${status})`);
  }
  // { output, weights, q, …, workspaceBytes, layerBytes } of the forward staged (names from the
  // module). They depend on the staged sizes and flags alone, so the last answer serves the next
  // call that stages the same (a model calls one shape again and again): two calls into the module
  // fewer, which a small call notices.
  let lastStage = null;
  let lastSizes = null;
  function forwardSizes(stage) {
    if (lastStage !== null && sameSlots(stage, lastStage)) return lastSizes;
    M.HEAPU32.set(stage, wire >>> 2);
    M.forwardSizes(wire, wire + sizesOffset);
    const figures = M.HEAPF64.subarray((wire + sizesOffset) / 8, (wire + sizesOffset) / 8 + sizeNames.length);
    const sizes = { layerBytes: M.layerBytes(wire) };
    sizeNames.forEach((name, i) => (sizes[name] = figures[i]));
    lastStage = stage.slice();
    lastSizes = sizes;
    return sizes;
  }

  function stageConfig(stage, layer) {
    stage[slots.q_in] = layer.qIn;
    stage[slots.k_in] = layer.kIn;
    stage[slots.v_in] = layer.vIn;
    stage[slots.num_heads] = layer.heads;
    stage[slots.head_dim_qk] = layer.dk;
    stage[slots.head_dim_v] = layer.dv;
    stage[slots.out_projection] = layer.outProjection ? 1 : 0;
    stage[slots.num_kv_heads] = layer.kvHeads;
    stage[slots.out_dim] = layer.outDim;
    stage[slots.alibi] = layer.alibi ? 1 : 0;
    stage[slots.sliding_window] = stagedWindow(layer.window);
    if (layer.rope) {
      stage[slots.rope_dim] = layer.rope.dim;
      doubleBits[0] = layer.rope.base;
      stage[slots.rope_base_lo] = doubleHalves[0];
      stage[slots.rope_base_hi] = doubleHalves[1];
      stage[slots.rope_interleaved] = layer.rope.interleaved ? 1 : 0;
    }
  }

  function stageWeights(stage, scope, layer) {
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
    const qWidth = layer.heads * layer.dk, kvWidth = layer.kvHeads * layer.dk;
    stageThree(['bq', 'bk', 'bv'], 'inProjBias', w.inBias, [0, 4 * qWidth, 4 * (qWidth + kvWidth)], [w.bq, w.bk, w.bv]);
  }

  function stageShape(stage, f) {
    stage[slots.batch] = f.batch;
    stage[slots.tgt_len] = f.tgtLen;
    stage[slots.src_len] = f.srcLen;
    stage[slots.is_causal] = f.isCausal ? 1 : 0;
    floatBits[0] = f.scale;
    stage[slots.scale] = uintBits[0];
    stage[slots.average_weights] = f.average ? 1 : 0;
    stage[slots.need_weights] = f.needWeights ? 1 : 0;
    stage[slots.intermediates] = f.returnIntermediates ? 1 : 0;
    stage[slots.position_offset] = f.positionOffset;
    stage[slots.cache] = f.cache ? f.cache.handle : 0;
  }

  // The tensors a forward copies in: query, key and value once each (one array may serve several),
  // and the masks.
  const forwardInputs = (f) => {
    const inputs = [f.query];
    if (f.key !== f.query) inputs.push(f.key);
    if (f.value !== f.key && f.value !== f.query) inputs.push(f.value);
    if (f.attnMask) inputs.push(f.attnMask.data);
    if (f.keyPaddingMask) inputs.push(f.keyPaddingMask.data);
    return inputs;
  };

  // Copies the inputs in, runs `fnName` (one-shot or prepared), copies fresh arrays out.
  const run = (fnName, fn, layer, f, handle) => withStage((stage) => runStaged(stage, fnName, fn, layer, f, handle));
  function runStaged(stage, fnName, fn, layer, f, handle) {
    stageConfig(stage, layer);
    stageShape(stage, f);
    const sizes = forwardSizes(stage);
    const results = f.returnIntermediates ? ALL_RESULTS : RESULTS;
    // What the call copies in (the weights too, one-shot) and reads out, in one block of the heap.
    let block = 0;
    if (!handle) for (const t of layerTensors(layer)) block += heapSlot(heapBytes(t));
    for (const t of forwardInputs(f)) block += heapSlot(heapBytes(t));
    for (const [name] of results) block += heapSlot(4 * sizes[name]);
    const needed = block + sizes.workspaceBytes + (handle ? 0 : sizes.layerBytes);
    if (needed > heapMaxBytes) throw outOfMemory(fn, needed, heapMaxBytes);
    const scope = new HeapScope(M, fn, heapMaxBytes);
    try {
      scope.reserve(block);
      if (handle) stage[slots.layer] = handle;
      else stageWeights(stage, scope, layer);
      const query = scope.copy(layer.outProjection ? 'query' : 'x', f.query);
      const key = f.key === f.query ? query : scope.copy('key', f.key);
      const value = f.value === f.key ? key : f.value === f.query ? query : scope.copy('value', f.value);
      stage[slots.query] = query;
      stage[slots.key] = key;
      stage[slots.value] = value;
      for (const [name, kindSlot, dataSlot] of MASKS) {
        const m = f[name];
        if (!m) continue;
        stage[slots[kindSlot]] = MASK_KIND[m.kind];
        stage[slots[dataSlot]] = scope.copy(name, m.data);
      }
      stage[slots.attn_mask_per_head] = f.attnMask?.perHead ? 1 : 0;
      for (const [name, slot] of results) stage[slots[slot]] = sizes[name] > 0 ? scope.alloc(4 * sizes[name]) : 0;
      const status = call(stage, fnName);
      if (status === STATUS.outOfMemory) throw outOfMemory(fn, needed, heapMaxBytes);
      if (status !== STATUS.ok) throw new Error(`${fn}: internal error: the engine rejected arguments the wrapper accepted (status ${status})`);
      // A result not wanted (weights, an intermediate the layer has not) is null / absent.
      const read = (name, slot) => (sizes[name] > 0 ? scope.read(stage[slots[slot]], sizes[name]) : null);
      const result = { output: read('output', 'output'), weights: read('weights', 'weights') };
      if (f.returnIntermediates) {
        result.intermediates = {};
        for (const [name, slot] of INTERMEDIATES) {
          if (sizes[name] > 0) result.intermediates[name] = read(name, slot);
        }
      }
      return result;
    } finally {
      scope.free();
    }
  }

  function oneShot(fn, known, parseLayer, parseForward, args) {
    engine(fn);
    const c = new Checker(fn, args, known);
    const layer = parseLayer(c);
    const f = parseForward(c, layer);
    engine(fn); // a getter in the arguments may have disposed it
    return run(fn, fn, layer, f, 0);
  }

  const createLayer = (fn, layer) => withStage((stage) => createStaged(stage, fn, layer));
  function createStaged(stage, fn, layer) {
    stageConfig(stage, layer);
    const needed = call(stage, 'layerBytes') + sum(layerTensors(layer).map(heapBytes));
    if (needed > heapMaxBytes) throw outOfMemory(fn, needed, heapMaxBytes);
    const scope = new HeapScope(M, fn, heapMaxBytes);
    try {
      stageWeights(stage, scope, layer);
      return created(fn, 'layer', call(stage, 'createLayer'), needed);
    } finally {
      scope.free();
    }
  }

  function prepared(fn, layerArgs, forwardArgs, parseLayer, parseForward, args) {
    engine(fn);
    // One object may serve both create and forward: forward's arguments are accepted and unused here.
    const known = new Set([...layerArgs, ...forwardArgs]);
    const c = new Checker(fn, args, known);
    const layer = parseLayer(c);
    engine(fn);
    const record = { handle: createLayer(fn, layer), engineDisposed: false };
    liveLayers.add(record);
    const forwardName = `${fn}().forward`;
    const sizes = layerSizes(layer);
    const tensorLengths = layerTensorLengths(layer);
    const alive = (name) => {
      if (record.handle !== 0) return;
      const why = record.engineDisposed ? ' (its engine was disposed)' : '';
      throw new Error(`${name}: this layer was disposed${why}; create a new one`);
    };
    // The cache argument of a forward: the record of a live cache of this layer, or null.
    const cacheOf = (fc) => {
      if (!fc.has('cache')) return null;
      const cacheRecord = caches.get(fc.args.cache);
      if (!cacheRecord) throw fc.typeError('cache', 'a KV cache made by layer.createKvCache', fc.args.cache);
      cacheAlive(cacheRecord, forwardName);
      if (cacheRecord.layer !== record) {
        throw fc.rangeError('cache', 'a KV cache of this layer', 'a cache of another layer');
      }
      return cacheRecord;
    };
    return {
      createKvCache(cargs) {
        const name = `${fn}().createKvCache`;
        alive(name);
        return createKvCache(name, record, layer, cargs);
      },
      forward(fargs) {
        alive(forwardName);
        const fc = new Checker(forwardName, fargs, known);
        checkRepeatedLayerArgs(fc, layer, sizes, tensorLengths);
        // Every element is read (a getter in a number[] runs now) before the cache's length is
        // taken: no user code runs between that snapshot and the call.
        readForwardData(fc);
        const cacheRecord = cacheOf(fc);
        const cache = cacheRecord && { ...cacheRecord, length: M.kvCacheLength(cacheRecord.handle) };
        const f = parseForward(fc, layer, cache);
        alive(forwardName); // a getter in the arguments may have disposed the layer, its engine or the cache
        if (cacheRecord) cacheAlive(cacheRecord, forwardName);
        return run('layerForward', forwardName, layer, f, record.handle);
      },
      dispose() {
        if (record.handle !== 0) {
          M.destroyLayer(record.handle);
          liveLayers.delete(record);
        }
        record.handle = 0;
      },
      get disposed() {
        return record.handle === 0;
      },
    };
  }

  function cacheAlive(cacheRecord, fn) {
    if (cacheRecord.handle !== 0) return;
    const why = cacheRecord.engineDisposed ? ' (its engine was disposed)' : '';
    throw new Error(`${fn}: this KV cache was disposed${why}; create a new one with layer.createKvCache`);
  }

  // A KV cache of a prepared layer: memory for maxLength tokens of K and V, reserved once.
  const createKvCache = (fn, layerRecord, layer, args) => withStage((stage) => {
    const c = new Checker(fn, args, new Set(['maxLength', 'batch']));
    const maxLength = c.size('maxLength');
    const batch = c.size('batch', 1);
    if (layer.kIn !== layer.qIn || layer.vIn !== layer.qIn) {
      throw c.rangeError('layer', `one with kdim = vdim = embedDim = ${layer.qIn} for a KV cache (K and V come from the query)`, `kdim = ${layer.kIn}, vdim = ${layer.vIn}`);
    }
    if (maxLength > MAX_POSITION) throw c.rangeError('maxLength', `at most 2^31 = ${MAX_POSITION}`, maxLength);
    // Staged as a 32-bit integer: a larger batch would wrap (and could never fit in memory anyway).
    if (batch > MAX_POSITION) throw c.rangeError('batch', `at most 2^31 = ${MAX_POSITION}`, batch);
    if (layerRecord.handle === 0 || M === null) throw new Error(`${fn}: the layer was disposed`);
    stageConfig(stage, layer);
    stage[slots.batch] = batch;
    stage[slots.max_length] = maxLength;
    stage[slots.layer] = layerRecord.handle;
    const needed = call(stage, 'kvCacheBytes');
    if (needed > heapMaxBytes) throw outOfMemory(fn, needed, heapMaxBytes);
    const handle = created(fn, 'cache', call(stage, 'createKvCache'), needed);
    const cacheRecord = { handle, layer: layerRecord, batch, maxLength, engineDisposed: false };
    liveCaches.add(cacheRecord);
    const cacheName = `${fn}()`;
    const cache = {
      get length() {
        cacheAlive(cacheRecord, `${cacheName}.length`);
        return M.kvCacheLength(handle);
      },
      get maxLength() {
        return maxLength;
      },
      get batch() {
        return batch;
      },
      truncate(n) {
        const name = `${cacheName}.truncate`;
        cacheAlive(cacheRecord, name);
        const length = M.kvCacheLength(handle);
        if (typeof n !== 'number') throw new TypeError(`${name}: n must be an integer from 0 to the length ${length}, got ${describe(n)}`);
        if (!Number.isInteger(n) || n < 0 || n > length) {
          throw new RangeError(`${name}: n must be an integer from 0 to the length ${length}, got ${n}`);
        }
        M.kvCacheTruncate(handle, n);
      },
      dispose() {
        if (cacheRecord.handle === 0) return;
        if (M !== null) M.destroyKvCache(cacheRecord.handle);
        liveCaches.delete(cacheRecord);
        cacheRecord.handle = 0;
      },
      get disposed() {
        return cacheRecord.handle === 0;
      },
    };
    caches.set(cache, cacheRecord);
    return cache;
  });

  // Releases the engine: its layers, its memory (the module is no longer referenced from here)
  // and, for a threaded engine, its worker threads. Later calls throw; a second dispose does nothing.
  function dispose() {
    if (M === null) return;
    for (const [records, destroy] of [[liveLayers, M.destroyLayer], [liveCaches, M.destroyKvCache]]) {
      for (const record of records) {
        destroy(record.handle);
        record.handle = 0;
        record.engineDisposed = true;
      }
      records.clear();
    }
    M._free(wire);
    if (M.PThread) M.PThread.terminateAllThreads();
    M = null;
  }

  const selfKnown = new Set([...SELF_LAYER_ARGS, ...SELF_FORWARD_ARGS]);
  const mhaKnown = new Set([...MHA_LAYER_ARGS, ...MHA_FORWARD_ARGS]);
  const api = {
    info,
    selfAttention: (args) => oneShot('selfAttention', selfKnown, selfLayer, selfForward, args),
    multiHeadAttention: (args) => oneShot('multiHeadAttention', mhaKnown, mhaLayer, mhaForward, args),
    createSelfAttention: (args) =>
      prepared('createSelfAttention', SELF_LAYER_ARGS, SELF_FORWARD_ARGS, selfLayer, selfForward, args),
    createMultiHeadAttention: (args) =>
      prepared('createMultiHeadAttention', MHA_LAYER_ARGS, MHA_FORWARD_ARGS, mhaLayer, mhaForward, args),
    memoryStats: () => {
      const m = engine('memoryStats');
      // mallinfo counts in a signed 32-bit field: past 2 GiB (the heap may grow to 4) it reads negative.
      return { heapInUse: m.heapInUse() >>> 0, memoryBytes: m.HEAPU8.buffer.byteLength };
    },
    dispose,
    get disposed() {
      return M === null;
    },
  };
  // For the package's own tests (threads released on dispose): the module while the engine lives.
  Object.defineProperty(api, Symbol.for('wasm-attention.module'), { get: () => M });
  warmUp(api);
  return api;
}

// V8 runs new WebAssembly in a baseline compiler and swaps in optimised code only between calls
// (no on-stack replacement). A few small calls here get the kernels optimised, so the user's
// first real call does not run entirely in code about 4x slower.
function warmUp(api) {
  const embedDim = 64;
  const tokens = 48;
  const fill = (n) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = Math.sin(i) * 0.1;
    return a;
  };
  const layer = api.createMultiHeadAttention({
    embedDim, numHeads: 2, inProjWeight: fill(3 * embedDim * embedDim), outProjWeight: fill(embedDim * embedDim),
  });
  const query = fill(tokens * embedDim);
  for (let i = 0; i < 12; i++) layer.forward({ query, isCausal: i % 2 === 0 });
  layer.dispose();
}

