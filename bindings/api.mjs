// The package API (docs/API.md) on top of a loaded Emscripten module. No environment specifics here:
// index.mjs / index.cjs load the module and call makeApi. The jobs sit in their own files:
//   layer-args.mjs      a layer's arguments → its description; forward-args.mjs the same for a call
//   wire.mjs            the slot block: staging arguments, calling the module, asking it for sizes
//   forward-call.mjs    one forward: copies in, the call, fresh arrays out
//   prepared-layer.mjs  layers whose weights are copied once
//   kv-cache.mjs        KV caches of prepared layers
//   warm-up.mjs         a few small calls that get the kernels optimised
//   model-engine.mjs    whole models (lib/model's plans) in the engine, reached through engineOf
import { Checker } from './checks.mjs';
import { runForward } from './forward-call.mjs';
import { MHA_FORWARD_ARGS, SELF_FORWARD_ARGS, mhaForward, selfForward } from './forward-args.mjs';
import { MHA_LAYER_ARGS, SELF_LAYER_ARGS, mhaLayer, selfLayer } from './layer-args.mjs';
import { createPrepared } from './prepared-layer.mjs';
import { warmUp } from './warm-up.mjs';
import { Wire } from './wire.mjs';

// The internal engine of each public api object: for the package's own modules (model-engine.mjs
// through load-model.mjs), never reachable from the api object itself.
const engines = new WeakMap();

/** The internal engine of a public engine made by createAttention; undefined for anything else. */
export function engineOf(attn) {
  return typeof attn === 'object' && attn !== null ? engines.get(attn) : undefined;
}

// What the engine holds, from the byte counts the module gave when each part was made (the same
// functions that size them): the WebAssembly memory, the weights of live layers and models, the
// live KV caches and sessions.
function memory(engine) {
  const M = engine.check('memory');
  let weightBytes = 0;
  let cacheBytes = 0;
  for (const layer of engine.liveLayers) weightBytes += layer.bytes;
  for (const cache of engine.liveCaches) cacheBytes += cache.bytes;
  for (const resource of engine.resources) {
    weightBytes += resource.weightBytes ?? 0;
    for (const cache of resource.caches ?? []) cacheBytes += cache.bytes;
  }
  return { heapBytes: M.HEAPU8.buffer.byteLength, weightBytes, cacheBytes };
}

export function makeApi(Module, info) {
  // What the engine's parts share. M is null once the engine is disposed: its memory can then be
  // collected.
  const engine = {
    M: Module,
    wire: new Wire(Module),
    liveLayers: new Set(), // { handle } of every layer not yet disposed
    liveCaches: new Set(), // { handle } of every KV cache not yet disposed
    caches: new WeakMap(), // cache object → its record { handle, layer, batch, maxLength }
    // What other modules made in this engine (models and their caches): each { release() }, called
    // when the engine is disposed, frees its memory and makes its later calls throw; and
    // { weightBytes, caches } for attn.memory() (caches: the live ones' records, each { bytes }).
    resources: new Set(),
    check(fn) {
      if (this.M === null) throw new Error(`${fn}: this engine was disposed; create a new one with createAttention`);
      return this.M;
    },
  };

  function oneShot(fn, known, parseLayer, parseForward, args) {
    engine.check(fn);
    const c = new Checker(fn, args, known);
    const layer = parseLayer(c);
    const f = parseForward(c, layer);
    engine.check(fn); // a getter in the arguments may have disposed it
    return runForward(engine.wire, fn, fn, layer, f, 0);
  }

  // Releases the engine: its layers, its memory (the module is no longer referenced from here)
  // and, for a threaded engine, its worker threads. Later calls throw; a second dispose does nothing.
  function dispose() {
    const M = engine.M;
    if (M === null) return;
    for (const resource of engine.resources) resource.release();
    engine.resources.clear();
    for (const [records, destroy] of [
      [engine.liveLayers, M.destroyLayer],
      [engine.liveCaches, M.destroyKvCache],
    ]) {
      for (const record of records) {
        destroy(record.handle);
        record.handle = 0;
        record.engineDisposed = true;
      }
      records.clear();
    }
    engine.wire.free();
    engine.wire.M = null;
    if (M.PThread) M.PThread.terminateAllThreads();
    engine.M = null;
  }

  const selfKnown = new Set([...SELF_LAYER_ARGS, ...SELF_FORWARD_ARGS]);
  const mhaKnown = new Set([...MHA_LAYER_ARGS, ...MHA_FORWARD_ARGS]);
  const api = {
    info,
    selfAttention: (args) => oneShot('selfAttention', selfKnown, selfLayer, selfForward, args),
    multiHeadAttention: (args) => oneShot('multiHeadAttention', mhaKnown, mhaLayer, mhaForward, args),
    createSelfAttention: (args) =>
      createPrepared(engine, 'createSelfAttention', SELF_LAYER_ARGS, SELF_FORWARD_ARGS, selfLayer, selfForward, args),
    createMultiHeadAttention: (args) =>
      createPrepared(engine, 'createMultiHeadAttention', MHA_LAYER_ARGS, MHA_FORWARD_ARGS, mhaLayer, mhaForward, args),
    memory: () => memory(engine),
    memoryStats: () => {
      const m = engine.check('memoryStats');
      // mallinfo counts in a signed 32-bit field: past 2 GiB (the heap may grow to 4) it reads negative.
      return { heapInUse: m.heapInUse() >>> 0, memoryBytes: m.HEAPU8.buffer.byteLength };
    },
    dispose,
    get disposed() {
      return engine.M === null;
    },
  };
  // For the package's own tests (threads released on dispose): the module while the engine lives.
  Object.defineProperty(api, Symbol.for('wasm-attention.module'), { get: () => engine.M });
  engines.set(api, engine);
  warmUp(api);
  return api;
}
