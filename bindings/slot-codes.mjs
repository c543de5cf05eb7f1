// The codes some values take in the slot block, as the engine numbers them: the storage dtypes (an
// index into these lists is the engine's enum) and the sliding window clamped to 32 bits.

// How a prepared layer (or a model, loadModel's dtype) stores its weight matrices; the index is the
// engine's WeightDtype (src/kernels/weight-dtype.h). One-shot calls read their weights as f32.
export const WEIGHT_DTYPES = ['f32', 'f16', 'bf16', 'int8'];

// How a KV cache stores K and V: createKvCache's dtype and createSession's kvDtype. The index of a
// name is the engine's code for it (wa::KvDtype in src/attention.h).
export const KV_DTYPES = ['f32', 'f16', 'bf16'];

export const kvDtypeCode = (dtype) => KV_DTYPES.indexOf(dtype);

// The sliding window travels as a 32-bit integer. Positions stay below 2^31 + 2^31 (an offset and a
// length), so a window of 2^32 − 1 masks no key, exactly as any larger one: it stands for them all.
export const stagedWindow = (window) => Math.min(window, 2 ** 32 - 1);
