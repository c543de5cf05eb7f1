// Every call the model runtime (lib/model/) makes into the module, as plain functions: the model
// functions of model-embind.cpp (their arguments on a slot block staged by wire.mjs's SlotStage),
// and the copies of ids, address tables and RoPE frequencies into the heap.

/** The model functions' slot table (names → slot indices, and `count`). */
export const modelSlots = (M) => M.modelSlots();

/** Bytes the packed weights of the model staged in `block` take (configuration and weight_dtype). */
export const modelWeightsBytes = (M, block) => M.modelWeightsBytes(block);
/** A model's handle, or 0 (its status slot says why). */
export const createModel = (M, block) => M.createModel(block);
export const destroyModel = (M, handle) => M.destroyModel(handle);

const PART_CALLS = { embeddings: 'modelSetEmbeddings', block: 'modelSetBlock', head: 'modelSetHead' };
/** One part of a model (`embeddings`, a `block`, the `head`) copied in and packed: a status. */
export const setModelPart = (M, part, handle, block) => M[PART_CALLS[part]](handle, block);
export const modelReady = (M, handle) => M.modelReady(handle);

/** Bytes a session (KV caches of every layer) of maxLength tokens takes, stored as kvDtype's code. */
export const modelCacheBytes = (M, handle, maxLength, dtypeCode) => M.modelCacheBytes(handle, maxLength, dtypeCode);
/** A session's handle, or 0 when its memory could not be had. */
export const createModelCache = (M, handle, maxLength, dtypeCode) => M.createModelCache(handle, maxLength, dtypeCode);
export const destroyModelCache = (M, cache) => M.destroyModelCache(cache);
export const modelCacheLength = (M, cache) => M.modelCacheLength(cache);
export const modelCacheTruncate = (M, cache, n) => M.modelCacheTruncate(cache, n);

/** The working memory of the forward staged in `block`. */
export const modelForwardBytes = (M, handle, block) => M.modelForwardBytes(handle, block);
/** The forward staged in `block`: a status. */
export const modelForward = (M, handle, block) => M.modelForward(handle, block);

export const writeInt32 = (M, ptr, values) => M.HEAP32.set(values, ptr >>> 2);
export const writeUint32 = (M, ptr, values) => M.HEAPU32.set(values, ptr >>> 2);
export const writeFloat64 = (M, ptr, values) => M.HEAPF64.set(values, ptr >>> 3);
