// The package's small pure helpers and facts the page's main thread uses (isKeyMasked, mulberry32,
// SUPPORTED_MODEL_TYPES), taken from
// its entry dist/index.mjs as the engine's worker takes the engine: the page imports only what the
// package exports. That entry loads no wasm at import. It is imported dynamically and allowed to fail
// because a clone without a build has no dist/: the page must still start and say that the engine
// could not load, and nothing calls these helpers before the engine has computed.
const entry = await import('../../dist/index.mjs').catch(() => null);

function missingBuild() {
  throw new Error('wasm-attention: the package is not built (no dist/index.mjs)');
}

/** isKeyMasked(settings, i, j): the package's rule for a key hidden from a query (causal, window). */
export const isKeyMasked = entry ? entry.isKeyMasked : missingBuild;
/** mulberry32(seed): the package's small seeded generator of uniform numbers in [0, 1). */
export const mulberry32 = entry ? entry.mulberry32 : missingBuild;
/** The model types loadModel runs (config.json's model_type); none without a build. */
export const SUPPORTED_MODEL_TYPES = entry ? entry.SUPPORTED_MODEL_TYPES : Object.freeze([]);
