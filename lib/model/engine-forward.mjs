// One forward of a model inside the engine, on arguments model.mjs has checked: the call's shape
// staged, its working memory checked against the limit, the ids and the address tables of what to
// copy out placed in the heap, the call, and fresh arrays out (logits, hidden states, attention).
import * as calls from '../../bindings/model-calls.mjs';
import { scoped, tooLarge } from './engine-heap.mjs';
import { LOGITS } from './plan-slots.mjs';

const FN = 'model.forward';

// What a call asks for, counted in floats: { T, keys, logitCount, stateCount, attentionCount }.
function countsOf(model, T, cacheLength, logits, heads) {
  const config = model.fullConfig;
  const wantLogits = logits !== 'none' && model.head !== 'none';
  return {
    T,
    wantLogits,
    logitCount: wantLogits ? (logits === 'all' ? T : 1) * config.vocabSize : 0,
    stateCount: T * config.hiddenSize,
    attentionCount: heads.length * T * (cacheLength + T),
  };
}

// The ids (and token types) copied in; the logits and the last hidden states allocated.
function placeInputs(M, scope, stage, slots, ids, tokenTypeIds, n) {
  const idsPtr = scope.alloc(4 * n.T);
  calls.writeInt32(M, idsPtr, ids);
  stage[slots.ids] = idsPtr;
  if (tokenTypeIds) {
    const typesPtr = scope.alloc(4 * n.T);
    calls.writeInt32(M, typesPtr, tokenTypeIds);
    stage[slots.token_type_ids] = typesPtr;
  }
}

// The attention asked for: a table of each layer's [heads, T, keys] address, and the heads' list.
function placeAttention(M, scope, stage, slots, numLayers, layers, heads, n) {
  const attentionPtrs = new Map(); // layer → address of its [heads, T, keys]
  if (layers.length === 0 || heads.length === 0) return attentionPtrs;
  const table = scope.alloc(4 * numLayers);
  const headsPtr = scope.alloc(4 * heads.length);
  calls.writeUint32(M, headsPtr, heads);
  for (const l of layers) if (!attentionPtrs.has(l)) attentionPtrs.set(l, scope.alloc(4 * n.attentionCount));
  const addresses = new Uint32Array(numLayers);
  for (const [l, ptr] of attentionPtrs) addresses[l] = ptr;
  calls.writeUint32(M, table, addresses);
  stage[slots.attention] = table;
  stage[slots.heads] = headsPtr;
  stage[slots.head_count] = heads.length;
  return attentionPtrs;
}

// The hidden states asked for: a table of each entry's [T, hidden] address.
function placeStates(M, scope, stage, slots, numLayers, states, n) {
  const statePtrs = new Map(); // entry → address of its [T, hidden]
  if (states.size === 0) return statePtrs;
  const table = scope.alloc(4 * (numLayers + 1));
  const addresses = new Uint32Array(numLayers + 1);
  for (const i of states) {
    statePtrs.set(i, scope.alloc(4 * n.stateCount));
    addresses[i] = statePtrs.get(i);
  }
  calls.writeUint32(M, table, addresses);
  stage[slots.hidden_states] = table;
  return statePtrs;
}

function readAttention(scope, numLayers, layers, attentionPtrs, n) {
  return Array.from({ length: numLayers }, (_, l) =>
    attentionPtrs.has(l)
      ? scope.read(attentionPtrs.get(l), n.attentionCount)
      : layers.includes(l)
        ? new Float32Array(0) // no heads asked
        : null,
  );
}

/**
 * @param model model.mjs's Model (engine, handle, stager, fullConfig, head)
 * @param ids Int32Array of checked ids; session: a Session of the model with room for them, or null
 * @param attention null or { layers, heads }; hiddenStates null or the entries to copy out
 * @returns {{ logits, attention, hidden, hiddenStates }} (model.forward's result)
 */
export function forwardInEngine(model, ids, session, logits, attention, tokenTypeIds, hiddenStates) {
  const { M, wire } = model.engine;
  const { heapMaxBytes, STATUS } = wire;
  const { stager, handle } = model;
  const { slots } = stager;
  const numLayers = model.fullConfig.numLayers;
  const cacheLength = session ? session.held() : 0;
  const layers = attention ? [...attention.layers] : [];
  const heads = attention ? [...attention.heads] : [];
  const states = hiddenStates ? new Set(hiddenStates) : new Set();
  const n = countsOf(model, ids.length, cacheLength, logits, heads);
  return stager.withStage((stage) =>
    scoped(M, FN, heapMaxBytes, (scope) => {
      stage[slots.token_count] = n.T;
      stage[slots.cached] = session ? 1 : 0;
      stage[slots.cache_dtype] = session ? session.dtypeCode : 0;
      stage[slots.cache_length] = cacheLength;
      stage[slots.capture] = layers.length > 0 && heads.length > 0 ? 1 : 0;
      const work = calls.modelForwardBytes(M, handle, stager.placeIn(scope, stage));
      const outputs = n.logitCount + (1 + states.size) * n.stateCount + layers.length * n.attentionCount;
      const needed = work + 4 * (2 * n.T + outputs + 2 * numLayers + 1);
      if (needed > heapMaxBytes) {
        const advice = "use fewer tokens, logits: 'last', or attention and hidden states of fewer layers";
        throw tooLarge(FN, 'the work', needed, heapMaxBytes, advice);
      }
      placeInputs(M, scope, stage, slots, ids, tokenTypeIds, n);
      stage[slots.cache] = session ? session.handle : 0;
      stage[slots.logits_mode] = n.wantLogits ? LOGITS[logits] : LOGITS.none;
      const logitsPtr = n.wantLogits ? scope.alloc(4 * n.logitCount) : 0;
      stage[slots.logits] = logitsPtr;
      const hiddenPtr = scope.alloc(4 * n.stateCount);
      stage[slots.hidden_out] = hiddenPtr;
      const attentionPtrs = placeAttention(M, scope, stage, slots, numLayers, layers, heads, n);
      const statePtrs = placeStates(M, scope, stage, slots, numLayers, states, n);
      const status = calls.modelForward(M, handle, stager.placeIn(scope, stage));
      if (status === STATUS.outOfMemory)
        throw tooLarge(FN, 'the work', needed, heapMaxBytes, 'the heap could not grow that far');
      if (status !== STATUS.ok) {
        throw new RangeError(`${FN}: the engine refused the call (an id, token type or position out of range)`);
      }
      return {
        logits: n.wantLogits ? scope.read(logitsPtr, n.logitCount) : null,
        attention: attention ? readAttention(scope, numLayers, layers, attentionPtrs, n) : null,
        hidden: scope.read(hiddenPtr, n.stateCount),
        hiddenStates: hiddenStates
          ? Array.from({ length: numLayers + 1 }, (_, i) =>
              statePtrs.has(i) ? scope.read(statePtrs.get(i), n.stateCount) : null,
            )
          : null,
      };
    }),
  );
}
