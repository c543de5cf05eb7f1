// The package API (docs/API.md) on top of a loaded Emscripten module: the engine object users hold.
// No environment specifics here: the entries (bindings/index.mjs, index.cjs) load the module and
// call makeApi. The module is reached only through bindings/attention-calls.mjs. The jobs sit in
// their own files:
//   layer-args.mjs      a layer's arguments → its description; forward-args.mjs the same for a call
//   prepared-layer.mjs  layers whose weights are copied once
//   kv-cache.mjs        KV caches of prepared layers
//   bindings/wire.mjs   the slot block the calls stage their arguments in
//   bindings/warm-up.mjs a few small calls that get the kernels optimised
//   engineOf            how the model runtime reaches an api object's engine for whole models
import * as calls from '../../bindings/attention-calls.mjs';
import { warmUp } from '../../bindings/warm-up.mjs';
import { Wire } from '../../bindings/wire.mjs';
import { Checker } from './checks.mjs';
import { MHA_FORWARD_ARGS, SELF_FORWARD_ARGS, mhaForward, selfForward } from './forward-args.mjs';
import { MHA_LAYER_ARGS, SELF_LAYER_ARGS, mhaLayer, selfLayer } from './layer-args.mjs';
import { createPrepared } from './prepared-layer.mjs';

// The internal engine of each public api object: for the package's own modules (the model runtime,
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
  return { heapBytes: calls.memoryBytes(M), weightBytes, cacheBytes };
}

// What the engine's parts share. M is null once the engine is disposed: its memory can then be
// collected.
function engineOver(Module) {
  return {
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
}

function oneShot(engine, fn, known, parseLayer, parseForward, args) {
  engine.check(fn);
  const c = new Checker(fn, args, known);
  const layer = parseLayer(c);
  const f = parseForward(c, layer);
  engine.check(fn); // a getter in the arguments may have disposed it
  return calls.runForward(engine.wire, fn, fn, layer, f, 0);
}

// Releases the engine: its layers, its memory (the module is no longer referenced from here)
// and, for a threaded engine, its worker threads. Later calls throw; a second dispose does nothing.
function dispose(engine) {
  const M = engine.M;
  if (M === null) return;
  for (const resource of engine.resources) resource.release();
  engine.resources.clear();
  for (const [records, destroy] of [
    [engine.liveLayers, calls.destroyLayer],
    [engine.liveCaches, calls.destroyKvCache],
  ]) {
    for (const record of records) {
      destroy(M, record.handle);
      record.handle = 0;
      record.engineDisposed = true;
    }
    records.clear();
  }
  calls.closeEngine(M, engine.wire);
  engine.M = null;
}

const SELF_KNOWN = new Set([...SELF_LAYER_ARGS, ...SELF_FORWARD_ARGS]);
const MHA_KNOWN = new Set([...MHA_LAYER_ARGS, ...MHA_FORWARD_ARGS]);

export function makeApi(Module, info) {
  const engine = engineOver(Module);
  const api = {
    info,
    selfAttention: (args) => oneShot(engine, 'selfAttention', SELF_KNOWN, selfLayer, selfForward, args),
    multiHeadAttention: (args) => oneShot(engine, 'multiHeadAttention', MHA_KNOWN, mhaLayer, mhaForward, args),
    createSelfAttention: (args) =>
      createPrepared(engine, 'createSelfAttention', SELF_LAYER_ARGS, SELF_FORWARD_ARGS, selfLayer, selfForward, args),
    createMultiHeadAttention: (args) =>
      createPrepared(engine, 'createMultiHeadAttention', MHA_LAYER_ARGS, MHA_FORWARD_ARGS, mhaLayer, mhaForward, args),
    memory: () => memory(engine),
    memoryStats: () => {
      const M = engine.check('memoryStats');
      return { heapInUse: calls.heapInUse(M), memoryBytes: calls.memoryBytes(M) };
    },
    dispose: () => dispose(engine),
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
