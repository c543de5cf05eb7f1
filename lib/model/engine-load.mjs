// A checkpoint's plan made into a model inside the engine (src/model/): its memory checked before
// anything is allocated, its configuration, then its weights one part at a time (the embeddings, each
// block, the head): copied in, packed by the module, freed. So loading needs about the model's own
// size plus its largest part.
import { describe } from '../attention/checks.mjs';
import { WEIGHT_DTYPES } from '../../bindings/slot-codes.mjs';
import { parseWeightDtype } from '../attention/storage-dtypes.mjs';
import * as calls from '../../bindings/model-calls.mjs';
import { scoped, tooLarge } from './engine-heap.mjs';
import { planParts, stageConfig, stagePart, tensorBytes } from './plan-slots.mjs';

const LOAD = 'loadModel';

function dtypeError(Kind) {
  return (name, expected, given) =>
    new Kind(`${LOAD}: ${name} must be ${expected}, got ${typeof given === 'string' ? given : describe(given)}`);
}

/**
 * dtype: how the linear layers store their weights (load-model.mjs checked the user's value; this
 * guards the engine with the same errors) → the engine's WeightDtype code.
 */
export function weightDtypeCode(dtype) {
  const checked = parseWeightDtype(
    { args: { dtype }, typeError: dtypeError(TypeError), rangeError: dtypeError(RangeError) },
    'dtype',
  );
  return WEIGHT_DTYPES.indexOf(checked);
}

// The model's parts, copied in and packed one at a time; throws (the caller destroys the model).
function setParts(engine, stager, handle, plan, weightsNeeded) {
  const { M, wire } = engine;
  const { heapMaxBytes, STATUS } = wire;
  const part = (what, name, index) =>
    stager.withStage((stage) =>
      scoped(M, LOAD, heapMaxBytes, (scope) => {
        stagePart(stager, stage, scope, plan, name, index);
        const status = calls.setModelPart(M, name, handle, stager.placeIn(scope, stage));
        if (status === STATUS.ok) return;
        if (status === STATUS.outOfMemory) {
          throw tooLarge(LOAD, 'the model', weightsNeeded, heapMaxBytes, 'the heap could not grow that far');
        }
        throw new Error(`${LOAD}: internal error: the engine refused ${what} (status ${status})`);
      }),
    );
  part('the embeddings', 'embeddings');
  for (let i = 0; i < plan.layers.length; i++) part(`layer ${i}`, 'block', i);
  part('the head', 'head');
  if (!calls.modelReady(M, handle)) throw new Error(`${LOAD}: internal error: the model is incomplete`);
}

// The module's count of the packed weights; throws when they and the largest part cannot fit.
function weightsBytes(engine, stager, plan, dtypeCode) {
  const { M, wire } = engine;
  const weightsNeeded = stager.withStage((stage) =>
    scoped(M, LOAD, wire.heapMaxBytes, (scope) => {
      stageConfig(stager, stage, plan, null);
      stage[stager.slots.weight_dtype] = dtypeCode;
      return calls.modelWeightsBytes(M, stager.placeIn(scope, stage));
    }),
  );
  const largestPart = Math.max(...planParts(plan).map((tensors) => tensors.reduce((s, t) => s + tensorBytes(t), 0)));
  if (weightsNeeded + largestPart > wire.heapMaxBytes) {
    const advice = 'its packed weights, and its largest layer while that is copied in';
    throw tooLarge(LOAD, 'the model', weightsNeeded + largestPart, wire.heapMaxBytes, advice);
  }
  return weightsNeeded;
}

/**
 * @param engine the internal engine of lib/attention/api.mjs (engineOf(attn)), alive
 * @param stager a SlotStage of the model functions' slots
 * @param plan planCheckpoint's result
 * @param dtypeCode weightDtypeCode's answer
 * @returns {{ handle, weightBytes }} the model's handle and the module's count of its weights
 */
export function placeModel(engine, stager, plan, dtypeCode) {
  const { M, wire } = engine;
  const { heapMaxBytes, STATUS } = wire;
  const weightBytes = weightsBytes(engine, stager, plan, dtypeCode);
  const handle = stager.withStage((stage) =>
    scoped(M, LOAD, heapMaxBytes, (scope) => {
      stageConfig(stager, stage, plan, scope);
      stage[stager.slots.weight_dtype] = dtypeCode;
      const block = stager.placeIn(scope, stage);
      const made = calls.createModel(M, block);
      if (made !== 0) return made;
      const status = stager.statusAt(block);
      if (status === STATUS.outOfMemory) throw tooLarge(LOAD, 'the model', weightBytes, heapMaxBytes);
      throw new Error(`${LOAD}: internal error: the engine refused the model's configuration (status ${status})`);
    }),
  );
  try {
    setParts(engine, stager, handle, plan, weightBytes);
  } catch (error) {
    calls.destroyModel(M, handle);
    throw error;
  }
  return { handle, weightBytes };
}
