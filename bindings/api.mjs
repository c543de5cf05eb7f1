// The package API (API.md) on top of a loaded Emscripten module. No environment specifics here:
// index.mjs / index.cjs load the module and call makeApi.
import { Checker } from './checks.mjs';
import { HeapScope, MAX_MEMORY_BYTES, outOfMemory } from './heap.mjs';
import {
  MHA_FORWARD_ARGS, MHA_LAYER_ARGS, SELF_FORWARD_ARGS, SELF_LAYER_ARGS,
  mhaForward, mhaLayer, selfForward, selfLayer,
} from './layer-args.mjs';

const STATUS_OK = 0;
const STATUS_OUT_OF_MEMORY = 2;
const MASK_KIND = { bool: 1, float: 2 };
const PANEL = 16; // kPanelWidth in src/kernels/f32-gemm.h
const ROW_BLOCK = 32; // kRowBlock in src/attention.cpp

const padded = (n) => Math.ceil(n / PANEL) * PANEL;

function layerBytes(layer) {
  const { qIn, kIn, vIn, heads, dk, dv } = layer;
  const e = heads * dv;
  const packed = heads * (padded(dk) * (qIn + kIn) + padded(dv) * vIn) + (layer.outProjection ? padded(e) * e : 0);
  return 4 * (packed + heads * (2 * dk + dv) + e);
}

// What one forward allocates, in bytes, before it allocates it (to fail early and clearly).
function forwardBytes(layer, f, threads) {
  const { heads, dk, dv } = layer;
  const e = heads * dv;
  const { batch, tgtLen: L, srcLen: S } = f;
  let floats = batch * (L * layer.qIn + S * (layer.kIn + layer.vIn)) + batch * L * e;
  if (f.needWeights) floats += batch * (f.average ? 1 : heads) * L * S;
  if (f.returnIntermediates) floats += batch * (L * heads * dk + S * heads * (dk + dv) + 2 * heads * L * S + L * e);
  floats += L * dk + S * (dk + dv) + padded(S) * dk + padded(dv) * S + threads * (ROW_BLOCK * S + 64 * e);
  return 4 * floats;
}

export function makeApi(Module, info) {
  const slots = Module.wireSlots();
  const wire = Module._malloc(slots.count * 4);

  // Arguments are staged in a JavaScript copy of the slot block and copied in with one set():
  // cheaper than a property walk per call, which matters for small calls.
  const stage = new Uint32Array(slots.count);
  const stageFloat = new Float32Array(stage.buffer);
  function call(fnName) {
    Module.HEAPU32.set(stage, wire >>> 2);
    return Module[fnName](wire);
  }

  function stageLayer(scope, layer) {
    const w = layer.weights;
    const put = (t) => (t ? scope.floats(t) : 0);
    stage[slots.q_in] = layer.qIn;
    stage[slots.k_in] = layer.kIn;
    stage[slots.v_in] = layer.vIn;
    stage[slots.num_heads] = layer.heads;
    stage[slots.head_dim_qk] = layer.dk;
    stage[slots.head_dim_v] = layer.dv;
    stage[slots.out_projection] = layer.outProjection ? 1 : 0;
    stage[slots.wo] = put(w.wo);
    stage[slots.bo] = put(w.bo);
    // PyTorch packs Q, K, V rows into one tensor (in_proj_weight / in_proj_bias): copied once,
    // the three slots point into it.
    const stageThree = (names, packed, stride, separate) => {
      const base = packed ? scope.floats(packed) : 0;
      names.forEach((name, i) => {
        stage[slots[name]] = packed ? base + i * stride : put(separate[i]);
      });
    };
    stageThree(['wq', 'wk', 'wv'], w.packedIn, layer.qIn * layer.qIn * 4, [w.wq, w.wk, w.wv]);
    stageThree(['bq', 'bk', 'bv'], w.inBias, layer.qIn * 4, [w.bq, w.bk, w.bv]);
  }

  const maskPointer = (scope, m) => (m.kind === 'bool' ? scope.bytes(m.data) : scope.floats(m.data));
  const INTERMEDIATE_SLOTS = { q: 'i_q', k: 'i_k', v: 'i_v', scores: 'i_scores', scaledScores: 'i_scaled_scores', attnOutput: 'i_attn_output' };

  // Copies the inputs in, runs `fnName` (one-shot or prepared), copies fresh arrays out.
  function run(fnName, fn, layer, f, handle) {
    const { batch, tgtLen: L, srcLen: S } = f;
    const { heads, dk, dv } = layer;
    const e = heads * dv;
    const needed = forwardBytes(layer, f, info.threads) + (handle ? 0 : layerBytes(layer));
    if (needed > MAX_MEMORY_BYTES) throw outOfMemory(fn, needed);
    const scope = new HeapScope(Module, fn);
    try {
      stage.fill(0);
      if (handle) stage[slots.layer] = handle;
      else stageLayer(scope, layer);
      const query = scope.floats(f.query);
      const key = f.key === f.query ? query : scope.floats(f.key);
      const value = f.value === f.key ? key : f.value === f.query ? query : scope.floats(f.value);
      const weightCount = f.needWeights ? batch * (f.average ? 1 : heads) * L * S : 0;
      const output = scope.alloc(4 * batch * L * e);
      const weights = weightCount ? scope.alloc(4 * weightCount) : 0;
      stage[slots.batch] = batch;
      stage[slots.tgt_len] = L;
      stage[slots.src_len] = S;
      stage[slots.query] = query;
      stage[slots.key] = key;
      stage[slots.value] = value;
      stage[slots.is_causal] = f.isCausal ? 1 : 0;
      stageFloat[slots.scale] = f.scale;
      stage[slots.average_weights] = f.average ? 1 : 0;
      stage[slots.output] = output;
      stage[slots.weights] = weights;
      if (f.attnMask) {
        stage[slots.attn_mask_kind] = MASK_KIND[f.attnMask.kind];
        stage[slots.attn_mask_per_head] = f.attnMask.perHead ? 1 : 0;
        stage[slots.attn_mask] = maskPointer(scope, f.attnMask);
      }
      if (f.keyPaddingMask) {
        stage[slots.key_padding_mask_kind] = MASK_KIND[f.keyPaddingMask.kind];
        stage[slots.key_padding_mask] = maskPointer(scope, f.keyPaddingMask);
      }
      const inter = {};
      if (f.returnIntermediates) {
        const counts = {
          q: batch * L * heads * dk, k: batch * S * heads * dk, v: batch * S * e,
          scores: batch * heads * L * S, scaledScores: batch * heads * L * S,
        };
        if (layer.outProjection) counts.attnOutput = batch * L * e;
        for (const [name, count] of Object.entries(counts)) {
          inter[name] = [scope.alloc(4 * count), count];
          stage[slots[INTERMEDIATE_SLOTS[name]]] = inter[name][0];
        }
      }
      const status = call(fnName);
      if (status === STATUS_OUT_OF_MEMORY) throw outOfMemory(fn, needed);
      if (status !== STATUS_OK) throw new Error(`${fn}: internal error: the engine rejected arguments the wrapper accepted (status ${status})`);
      const result = {
        output: scope.read(output, batch * L * e),
        weights: weightCount ? scope.read(weights, weightCount) : null,
      };
      if (f.returnIntermediates) {
        result.intermediates = {};
        for (const [name, [ptr, count]] of Object.entries(inter)) result.intermediates[name] = scope.read(ptr, count);
      }
      return result;
    } finally {
      scope.free();
    }
  }

  function oneShot(fn, known, parseLayer, parseForward, args) {
    const c = new Checker(fn, args);
    c.onlyKnown(known);
    const layer = parseLayer(c);
    return run(fn, fn, layer, parseForward(c, layer), 0);
  }

  function prepared(fn, layerArgs, forwardArgs, parseLayer, parseForward, args) {
    const c = new Checker(fn, args);
    // One object may serve both create and forward: forward's arguments are accepted and unused here.
    const known = new Set([...layerArgs, ...forwardArgs]);
    c.onlyKnown(known);
    const layer = parseLayer(c);
    if (layerBytes(layer) > MAX_MEMORY_BYTES) throw outOfMemory(fn, layerBytes(layer));
    const scope = new HeapScope(Module, fn);
    let handle = 0;
    try {
      stage.fill(0);
      stageLayer(scope, layer);
      handle = call('createLayer');
      if (handle === 0) {
        const status = Module.HEAPU32[(wire >>> 2) + slots.status];
        if (status === STATUS_OUT_OF_MEMORY) throw outOfMemory(fn, layerBytes(layer));
        throw new Error(`${fn}: internal error: the engine rejected the layer (status ${status})`);
      }
    } finally {
      scope.free();
    }
    const forwardName = `${fn}().forward`;
    // Likewise forward accepts the layer's arguments; sizes, if repeated, must agree.
    const layerSizes = { dModel: layer.qIn, embedDim: layer.qIn, numHeads: layer.heads, kdim: layer.kIn, vdim: layer.vIn };
    return {
      forward(fargs) {
        if (handle === 0) throw new Error(`${forwardName}: this layer was disposed; create a new one`);
        const fc = new Checker(forwardName, fargs);
        fc.onlyKnown(known);
        for (const [name, expected] of Object.entries(layerSizes)) {
          if (fargs[name] !== undefined && fargs[name] !== expected) {
            throw fc.rangeError(name, `${expected} as when the layer was created`, fargs[name]);
          }
        }
        return run('layerForward', forwardName, layer, parseForward(fc, layer), handle);
      },
      dispose() {
        if (handle !== 0) Module.destroyLayer(handle);
        handle = 0;
      },
      get disposed() {
        return handle === 0;
      },
    };
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
    memoryStats: () => ({ heapInUse: Module.heapInUse(), memoryBytes: Module.HEAPU8.buffer.byteLength }),
  };
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

