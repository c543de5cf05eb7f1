// Every call into the module for the attention API, as plain functions: lib/attention/'s objects
// (the engine, prepared layers, KV caches) call these and never the module itself. M is the module,
// wire its slot block (wire.mjs); fn names the public call in errors. A forward copies its inputs
// (and, one-shot, the weights) into one block of the heap, calls, copies fresh arrays out and gives
// the heap back whatever happens.
import { HeapScope, heapBytes, heapSlot, outOfMemory } from './heap.mjs';
import { kvDtypeCode } from './slot-codes.mjs';

// What a forward returns, by its name in forwardSizes and its slot: always, and when intermediates
// are wanted (the teaching copies).
const RESULTS = [
  ['output', 'output'],
  ['weights', 'weights'],
];
const INTERMEDIATES = [
  ['q', 'i_q'],
  ['k', 'i_k'],
  ['v', 'i_v'],
  ['scores', 'i_scores'],
  ['scaledScores', 'i_scaled_scores'],
  ['attnOutput', 'i_attn_output'],
];
const ALL_RESULTS = [...RESULTS, ...INTERMEDIATES];
// The masks: argument, kind slot, data slot.
const MASKS = [
  ['attnMask', 'attn_mask_kind', 'attn_mask'],
  ['keyPaddingMask', 'key_padding_mask_kind', 'key_padding_mask'],
];

// The tensors a layer copies in, by slot: packed Q, K, V rows (PyTorch's in_proj_weight /
// in_proj_bias) are copied once and the three slots point into them.
function layerTensors(layer) {
  const w = layer.weights;
  return [w.wq, w.wk, w.wv, w.bq, w.bk, w.bv, w.wo, w.bo, w.packedIn, w.inBias, w.alibiSlopes].filter((t) => t);
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

// Runs `fnName` (one-shot, or a prepared layer's of `handle`) on the checked layer and forward
// descriptions; `fn` names the call in errors.
export const runForward = (wire, fnName, fn, layer, f, handle) =>
  wire.withStage((stage) => runStaged(wire, stage, fnName, fn, layer, f, handle));

function runStaged(wire, stage, fnName, fn, layer, f, handle) {
  const { M, slots, heapMaxBytes } = wire;
  wire.stageConfig(stage, layer);
  wire.stageShape(stage, f);
  const sizes = wire.forwardSizes(stage);
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
    else wire.stageWeights(stage, scope, layer);
    stageInputs(wire, stage, scope, layer, f);
    for (const [name, slot] of results) stage[slots[slot]] = sizes[name] > 0 ? scope.alloc(4 * sizes[name]) : 0;
    const status = wire.call(stage, fnName);
    if (status === wire.STATUS.outOfMemory) throw outOfMemory(fn, needed, heapMaxBytes);
    if (status !== wire.STATUS.ok)
      throw new Error(`${fn}: internal error: the engine rejected arguments the wrapper accepted (status ${status})`);
    return readResults(stage, slots, scope, sizes, f.returnIntermediates);
  } finally {
    scope.free();
  }
}

function stageInputs(wire, stage, scope, layer, f) {
  const slots = wire.slots;
  const query = scope.copy(layer.outProjection ? 'query' : 'x', f.query);
  const key = f.key === f.query ? query : scope.copy('key', f.key);
  const value = f.value === f.key ? key : f.value === f.query ? query : scope.copy('value', f.value);
  stage[slots.query] = query;
  stage[slots.key] = key;
  stage[slots.value] = value;
  for (const [name, kindSlot, dataSlot] of MASKS) {
    const m = f[name];
    if (!m) continue;
    stage[slots[kindSlot]] = wire.MASK_KIND[m.kind];
    stage[slots[dataSlot]] = scope.copy(name, m.data);
  }
  stage[slots.attn_mask_per_head] = f.attnMask?.perHead ? 1 : 0;
}

// A result not wanted (weights, an intermediate the layer has not) is null / absent.
function readResults(stage, slots, scope, sizes, intermediates) {
  const read = (name, slot) => (sizes[name] > 0 ? scope.read(stage[slots[slot]], sizes[name]) : null);
  const result = { output: read('output', 'output'), weights: read('weights', 'weights') };
  if (intermediates) {
    result.intermediates = {};
    for (const [name, slot] of INTERMEDIATES) {
      if (sizes[name] > 0) result.intermediates[name] = read(name, slot);
    }
  }
  return result;
}

const sum = (values) => values.reduce((a, b) => a + b, 0);

// The module's layer of the checked description `layer`: { handle, bytes } (bytes: what the module
// says the layer's weights take, for attn.memory()).
export const createLayer = (wire, fn, layer) =>
  wire.withStage((stage) => {
    wire.stageConfig(stage, layer);
    const bytes = wire.call(stage, 'layerBytes');
    const needed = bytes + sum(layerTensors(layer).map(heapBytes));
    if (needed > wire.heapMaxBytes) throw outOfMemory(fn, needed, wire.heapMaxBytes);
    const scope = new HeapScope(wire.M, fn, wire.heapMaxBytes);
    try {
      wire.stageWeights(stage, scope, layer);
      return { handle: wire.created(fn, 'layer', wire.call(stage, 'createLayer'), needed), bytes };
    } finally {
      scope.free();
    }
  });

export const destroyLayer = (M, handle) => M.destroyLayer(handle);

// The module's KV cache of the layer `layerHandle` (made from `layer`) for the checked { batch,
// maxLength, dtype }: { handle, bytes } (bytes: the module's count, for attn.memory()).
export const createKvCache = (wire, fn, layer, layerHandle, { batch, maxLength, dtype }) =>
  wire.withStage((stage) => {
    wire.stageConfig(stage, layer);
    stage[wire.slots.batch] = batch;
    stage[wire.slots.max_length] = maxLength;
    stage[wire.slots.cache_dtype] = kvDtypeCode(dtype);
    stage[wire.slots.layer] = layerHandle;
    const bytes = wire.call(stage, 'kvCacheBytes');
    if (bytes > wire.heapMaxBytes) throw outOfMemory(fn, bytes, wire.heapMaxBytes);
    return { handle: wire.created(fn, 'cache', wire.call(stage, 'createKvCache'), bytes), bytes };
  });

export const kvCacheLength = (M, handle) => M.kvCacheLength(handle);
export const truncateKvCache = (M, handle, n) => M.kvCacheTruncate(handle, n);
export const destroyKvCache = (M, handle) => M.destroyKvCache(handle);

// The engine's memory figures: the WebAssembly memory's byte length, and the bytes malloc has handed
// out (mallinfo counts in a signed 32-bit field: past 2 GiB, the heap may grow to 4, it reads negative).
export const memoryBytes = (M) => M.HEAPU8.buffer.byteLength;
export const heapInUse = (M) => M.heapInUse() >>> 0;

// An engine's end: its slot block freed (later calls through the wire find no module) and, for a
// threaded build, its worker threads terminated.
export function closeEngine(M, wire) {
  wire.free();
  wire.M = null;
  if (M.PThread) M.PThread.terminateAllThreads();
}
