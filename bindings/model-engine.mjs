// createEngineModel(engine, plan, options): a checkpoint's plan (lib/model/checkpoint.mjs) made into a
// model that runs inside the engine (src/model/), every token from embedding to logits in one call
// into the module, with its KV caches. The internal half of loadModel (load-model.mjs checks the
// user's arguments first; the checks here guard the engine, with the same kind of errors).
//
//   engine   the internal engine of bindings/api.mjs (engineOf(attn))
//   plan     planCheckpoint's result: tensors { dtype, shape, data } as readSafetensors gives them
//   options  { dtype: 'f32' | 'f16' | 'bf16' | 'int8' } (how the linear layers and an untied head store
//            their weights; embeddings, a tied head, norms and biases stay f32)
//   → { config, weightBytes, createCache(maxLength), forward(ids, options), dispose(), disposed }
//   forward(ids, { cache, logits, attention, tokenTypeIds, hiddenStates })
//     hiddenStates: null, or the entries (0 … numLayers, each once) of the residual stream to copy out
//     during the call → result.hiddenStates [numLayers + 1], a listed entry [T, hidden], others null
//
// Weights reach the heap one part at a time (the embeddings, each block, the head): copied in, packed
// by the module, freed; so loading needs about the model's own size plus its largest part.
import { HeapScope } from './heap.mjs';
import { describe } from './checks.mjs';
import { KV_DTYPES, kvDtypeCode } from './kv-dtype.mjs';
import { LOGITS, ModelStage, headKind, planParts, tensorBytes } from './engine-model-stage.mjs';
import { WEIGHT_DTYPES, parseWeightDtype } from './layer-args.mjs';

export { engineOf } from './api.mjs';

const LOAD = 'loadModel';
// Sizes travel in 32-bit slots: a cache or a call longer than this could never fit in memory anyway.
const MAX_TOKENS = 2 ** 31;

const mib = (bytes) => (bytes / 1048576).toFixed(1);

function tooLarge(fn, what, bytes, heapMaxBytes, advice) {
  return new RangeError(
    `${fn}: ${what} is too large for WebAssembly memory: it needs about ${mib(bytes)} MiB and the heap is ` +
      `limited to ${Math.round(heapMaxBytes / 1048576)} MiB${advice ? ` (${advice})` : ''}`,
  );
}

// options.dtype: how the linear layers store their weights (load-model.mjs checked the user's value;
// this guards the engine with the same errors) → the engine's WeightDtype code.
function dtypeCode(options) {
  const dtype = parseWeightDtype(
    { args: { dtype: options?.dtype }, typeError: dtypeError(TypeError), rangeError: dtypeError(RangeError) },
    'dtype',
  );
  return WEIGHT_DTYPES.indexOf(dtype);
}

function dtypeError(Kind) {
  return (name, expected, given) =>
    new Kind(`${LOAD}: ${name} must be ${expected}, got ${typeof given === 'string' ? given : describe(given)}`);
}

// Runs body(scope) with a HeapScope freed afterwards, also when body throws.
function scoped(M, fn, heapMaxBytes, body) {
  const scope = new HeapScope(M, fn, heapMaxBytes);
  try {
    return body(scope);
  } finally {
    scope.free();
  }
}

// The model's parts, copied in and packed one at a time; throws (the caller destroys the model).
function setParts(engine, handle, plan, stage, weightsNeeded) {
  const { M, wire } = engine;
  const { heapMaxBytes, STATUS } = wire;
  const part = (what, call, fill) =>
    scoped(M, LOAD, heapMaxBytes, (scope) => {
      fill(stage.clear(), scope);
      const status = M[call](handle, stage.place(scope));
      if (status === STATUS.ok) return;
      if (status === STATUS.outOfMemory) {
        throw tooLarge(LOAD, 'the model', weightsNeeded, heapMaxBytes, 'the heap could not grow that far');
      }
      throw new Error(`${LOAD}: internal error: the engine refused ${what} (status ${status})`);
    });
  part('the embeddings', 'modelSetEmbeddings', (s, scope) => s.embeddings(scope, plan));
  for (let i = 0; i < plan.layers.length; i++) {
    part(`layer ${i}`, 'modelSetBlock', (s, scope) => s.block(scope, plan, i));
  }
  part('the head', 'modelSetHead', (s, scope) => s.head(scope, plan));
  if (!M.modelReady(handle)) throw new Error(`${LOAD}: internal error: the model is incomplete`);
}

export function createEngineModel(engine, plan, options = {}) {
  const M = engine.check(LOAD);
  const dtype = dtypeCode(options);
  const { wire } = engine;
  const { heapMaxBytes, STATUS } = wire;
  const config = plan.config;
  const stage = new ModelStage(M);

  // Before anything is allocated: the packed weights and the largest part's tensors beside them.
  const weightsNeeded = scoped(M, LOAD, heapMaxBytes, (scope) => {
    stage.clear().config(plan, null);
    stage.set('weight_dtype', dtype);
    return M.modelWeightsBytes(stage.place(scope));
  });
  const largestPart = Math.max(...planParts(plan).map((tensors) => tensors.reduce((s, t) => s + tensorBytes(t), 0)));
  if (weightsNeeded + largestPart > heapMaxBytes) {
    const advice = 'its packed weights, and its largest layer while that is copied in';
    throw tooLarge(LOAD, 'the model', weightsNeeded + largestPart, heapMaxBytes, advice);
  }

  const heapBefore = M.heapInUse() >>> 0;
  const handle = scoped(M, LOAD, heapMaxBytes, (scope) => {
    stage.clear().config(plan, scope);
    stage.set('weight_dtype', dtype);
    const block = stage.place(scope);
    const made = M.createModel(block);
    if (made !== 0) return made;
    const status = stage.status(block);
    if (status === STATUS.outOfMemory) throw tooLarge(LOAD, 'the model', weightsNeeded, heapMaxBytes);
    throw new Error(`${LOAD}: internal error: the engine refused the model's configuration (status ${status})`);
  });
  try {
    setParts(engine, handle, plan, stage, weightsNeeded);
  } catch (error) {
    M.destroyModel(handle);
    throw error;
  }

  const record = {
    handle,
    weightBytes: weightsNeeded, // the module's count of the weights it holds (attn.memory())
    engineDisposed: false,
    caches: new Set(), // records of this model's live caches
    release() {
      for (const cache of record.caches) cache.release();
      record.caches.clear();
      if (record.handle !== 0) M.destroyModel(record.handle);
      record.handle = 0;
      record.engineDisposed = true;
    },
  };
  engine.resources.add(record);
  const cacheRecords = new WeakMap(); // cache object → its record
  const head = headKind(plan);
  const learned = config.positions === 'learned';

  const alive = (fn) => {
    if (record.handle !== 0) return;
    if (record.engineDisposed) throw new Error(`${fn}: the engine of this model was disposed; create a new one`);
    throw new Error(`${fn}: this model was disposed; load it again`);
  };

  // kvDtype: 'f32', 'f16' or 'bf16' (checked by the caller), how the session stores K and V.
  function createCache(maxLength, kvDtype = 'f32') {
    const fn = 'model.createSession';
    alive(fn);
    if (!config.causal) {
      throw new TypeError(`${fn}: a ${config.modelType} model attends both ways and keeps no session (decoders only)`);
    }
    if (typeof maxLength !== 'number')
      throw new TypeError(`${fn}: maxLength must be a number, got ${describe(maxLength)}`);
    if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > MAX_TOKENS) {
      throw new RangeError(`${fn}: maxLength must be an integer from 1 to 2^31, got ${maxLength}`);
    }
    const dtypeCode = kvDtypeCode(kvDtype);
    if (dtypeCode < 0) throw new RangeError(`${fn}: kvDtype must be one of ${KV_DTYPES.join(', ')}, got ${kvDtype}`);
    const bytes = M.modelCacheBytes(handle, maxLength, dtypeCode);
    const advice = 'use a smaller maxLength';
    if (bytes > heapMaxBytes) throw tooLarge(fn, `a session of maxLength ${maxLength}`, bytes, heapMaxBytes, advice);
    const cacheHandle = M.createModelCache(handle, maxLength, dtypeCode);
    if (cacheHandle === 0) throw tooLarge(fn, `a session of maxLength ${maxLength}`, bytes, heapMaxBytes, advice);
    const cacheRecord = {
      handle: cacheHandle,
      maxLength,
      dtypeCode,
      engineDisposed: false,
      release() {
        if (cacheRecord.handle !== 0) M.destroyModelCache(cacheRecord.handle);
        cacheRecord.handle = 0;
        cacheRecord.engineDisposed = true;
      },
    };
    record.caches.add(cacheRecord);
    cacheRecord.bytes = bytes; // the module's count, for attn.memory()
    const cacheAlive = (name) => {
      if (cacheRecord.handle !== 0) return;
      throw new Error(
        `${name}: this session was disposed${cacheRecord.engineDisposed ? ' (its model or engine was disposed)' : ''}`,
      );
    };
    const cache = {
      get length() {
        cacheAlive('session.length');
        return M.modelCacheLength(cacheRecord.handle);
      },
      get maxLength() {
        return maxLength;
      },
      truncate(n) {
        const name = 'session.truncate';
        cacheAlive(name);
        const length = M.modelCacheLength(cacheRecord.handle);
        if (typeof n !== 'number') {
          throw new TypeError(`${name}: n must be an integer from 0 to the length ${length}, got ${describe(n)}`);
        }
        if (!Number.isInteger(n) || n < 0 || n > length) {
          throw new RangeError(`${name}: n must be an integer from 0 to the length ${length}, got ${n}`);
        }
        M.modelCacheTruncate(cacheRecord.handle, n);
      },
      dispose() {
        if (cacheRecord.handle === 0) return;
        M.destroyModelCache(cacheRecord.handle);
        cacheRecord.handle = 0;
        record.caches.delete(cacheRecord);
      },
      get disposed() {
        return cacheRecord.handle === 0;
      },
    };
    cacheRecords.set(cache, { record: cacheRecord, alive: cacheAlive });
    return cache;
  }

  // The cache argument of a forward: its record (alive, of this model), or null.
  function cacheOf(fn, cache) {
    if (cache === null || cache === undefined) return null;
    const found = cacheRecords.get(cache);
    if (!found) throw new TypeError(`${fn}: cache must be a session of this model, got ${describe(cache)}`);
    found.alive(fn);
    return found.record;
  }

  function forward(
    ids,
    { cache = null, logits = 'all', attention = null, tokenTypeIds = null, hiddenStates = null } = {},
  ) {
    const fn = 'model.forward';
    alive(fn);
    if (!(ids instanceof Int32Array)) throw new TypeError(`${fn}: ids must be an Int32Array, got ${describe(ids)}`);
    const T = ids.length;
    if (T === 0 || T > MAX_TOKENS) throw new RangeError(`${fn}: ids must hold 1 to 2^31 tokens, got ${T}`);
    if (!Object.hasOwn(LOGITS, logits)) {
      throw new RangeError(`${fn}: logits must be 'all', 'last' or 'none', got ${describe(logits)}`);
    }
    const cacheRecord = cacheOf(fn, cache);
    const cacheLength = cacheRecord ? M.modelCacheLength(cacheRecord.handle) : 0;
    if (cacheRecord && cacheLength + T > cacheRecord.maxLength) {
      throw new RangeError(
        `${fn}: the session holds ${cacheLength} of at most ${cacheRecord.maxLength} tokens: ${T} more do not fit`,
      );
    }
    if (learned && cacheLength + T > config.maxPositions) {
      throw new RangeError(
        `${fn}: positions ${cacheLength} to ${cacheLength + T - 1} pass the ${config.maxPositions} this ${config.modelType} model has learned`,
      );
    }
    const layers = attention ? [...attention.layers] : [];
    const heads = attention ? [...attention.heads] : [];
    const states = hiddenStates ? new Set(hiddenStates) : new Set();
    for (const i of states) {
      if (!Number.isInteger(i) || i < 0 || i > config.numLayers) {
        const given = typeof i === 'number' ? i : describe(i);
        throw new RangeError(`${fn}: hiddenStates must list entries from 0 to ${config.numLayers}, got ${given}`);
      }
    }
    const stateCount = T * config.hiddenSize;
    const wantLogits = logits !== 'none' && head !== 'none';
    const keys = cacheLength + T;
    const logitCount = wantLogits ? (logits === 'all' ? T : 1) * config.vocabSize : 0;
    const attentionCount = heads.length * T * keys;

    const staged = stage.clear();
    staged.set('token_count', T);
    staged.set('cached', cacheRecord ? 1 : 0);
    staged.set('cache_dtype', cacheRecord ? cacheRecord.dtypeCode : 0);
    staged.set('cache_length', cacheLength);
    staged.set('capture', layers.length > 0 && heads.length > 0 ? 1 : 0);
    return scoped(M, fn, heapMaxBytes, (scope) => {
      const work = M.modelForwardBytes(handle, staged.place(scope));
      const outputs = logitCount + (1 + states.size) * stateCount + layers.length * attentionCount;
      const needed = work + 4 * (2 * T + outputs + 2 * config.numLayers + 1);
      if (needed > heapMaxBytes) {
        const advice = "use fewer tokens, logits: 'last', or attention and hidden states of fewer layers";
        throw tooLarge(fn, 'the work', needed, heapMaxBytes, advice);
      }
      const idsPtr = scope.alloc(4 * T);
      M.HEAP32.set(ids, idsPtr >>> 2);
      staged.set('ids', idsPtr);
      if (tokenTypeIds) {
        const typesPtr = scope.alloc(4 * T);
        M.HEAP32.set(tokenTypeIds, typesPtr >>> 2);
        staged.set('token_type_ids', typesPtr);
      }
      staged.set('cache', cacheRecord ? cacheRecord.handle : 0);
      staged.set('logits_mode', wantLogits ? LOGITS[logits] : LOGITS.none);
      const logitsPtr = wantLogits ? scope.alloc(4 * logitCount) : 0;
      staged.set('logits', logitsPtr);
      const hiddenPtr = scope.alloc(4 * T * config.hiddenSize);
      staged.set('hidden_out', hiddenPtr);
      const attentionPtrs = new Map(); // layer → address of its [heads, T, keys]
      if (layers.length > 0 && heads.length > 0) {
        const table = scope.alloc(4 * config.numLayers);
        const headsPtr = scope.alloc(4 * heads.length);
        M.HEAPU32.set(heads, headsPtr >>> 2);
        for (const l of layers) if (!attentionPtrs.has(l)) attentionPtrs.set(l, scope.alloc(4 * attentionCount));
        const addresses = new Uint32Array(config.numLayers);
        for (const [l, ptr] of attentionPtrs) addresses[l] = ptr;
        M.HEAPU32.set(addresses, table >>> 2);
        staged.set('attention', table);
        staged.set('heads', headsPtr);
        staged.set('head_count', heads.length);
      }
      const statePtrs = new Map(); // entry → address of its [T, hidden]
      if (states.size > 0) {
        const table = scope.alloc(4 * (config.numLayers + 1));
        const addresses = new Uint32Array(config.numLayers + 1);
        for (const i of states) {
          statePtrs.set(i, scope.alloc(4 * stateCount));
          addresses[i] = statePtrs.get(i);
        }
        M.HEAPU32.set(addresses, table >>> 2);
        staged.set('hidden_states', table);
      }
      const status = M.modelForward(handle, staged.place(scope));
      if (status === STATUS.outOfMemory) {
        throw tooLarge(fn, 'the work', needed, heapMaxBytes, 'the heap could not grow that far');
      }
      if (status !== STATUS.ok) {
        throw new RangeError(`${fn}: the engine refused the call (an id, token type or position out of range)`);
      }
      const result = {
        logits: wantLogits ? scope.read(logitsPtr, logitCount) : null,
        hidden: scope.read(hiddenPtr, T * config.hiddenSize),
        attention: null,
      };
      if (hiddenStates) {
        result.hiddenStates = Array.from({ length: config.numLayers + 1 }, (_, i) =>
          statePtrs.has(i) ? scope.read(statePtrs.get(i), stateCount) : null,
        );
      }
      if (attention) {
        result.attention = Array.from({ length: config.numLayers }, (_, l) =>
          attentionPtrs.has(l)
            ? scope.read(attentionPtrs.get(l), attentionCount)
            : layers.includes(l)
              ? new Float32Array(0) // no heads asked
              : null,
        );
      }
      return result;
    });
  }

  return {
    config,
    weightBytes: (M.heapInUse() >>> 0) - heapBefore,
    createCache,
    forward,
    dispose() {
      if (record.handle === 0) return;
      record.release();
      record.engineDisposed = false;
      engine.resources.delete(record);
    },
    get disposed() {
      return record.handle === 0;
    },
  };
}
