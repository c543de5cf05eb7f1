// onnxruntime-web running a llama exported by bench/export-onnx.py: input_ids, position_ids and the
// KV cache as past_key.N / past_value.N inputs, logits (last token) and present_key.N /
// present_value.N outputs, as onnxruntime-web runs a decoder (the cache lives in JavaScript between
// runs). Load onnxruntime-web first (ort-peer.mjs loadOrt: it fixes the process's thread count).

/**
 * @param ort the onnxruntime-web module
 * @param {Uint8Array} onnxBytes the model
 * @param {{ numLayers, kvHeads, headDim }} shape
 * @returns {Promise<{ run(ids, past, { presents }) → Promise<{ logits, present }>, emptyPast, release }>}
 */
export async function createOrtLlama(ort, onnxBytes, { numLayers, kvHeads, headDim }) {
  // Its worker threads spin between runs by default, taking the cores our interleaved steps need on
  // a 2-core machine; without spinning both sides get the same machine (as in bench/ort-peer.mjs).
  const session = await ort.InferenceSession.create(onnxBytes, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const presentNames = [];
  for (let i = 0; i < numLayers; i++) presentNames.push(`present_key.${i}`, `present_value.${i}`);
  const emptyPast = {};
  for (let i = 0; i < numLayers; i++)
    for (const kv of ['key', 'value'])
      emptyPast[`past_${kv}.${i}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim]);
  return {
    emptyPast,
    /**
     * ids after `past` (a map of past_* tensors: emptyPast, or what an earlier run returned as
     * `present`). presents: false asks for the logits only (the cache is still computed inside).
     */
    async run(ids, past, { presents = true } = {}) {
      const P = past['past_key.0'].dims[2];
      const T = ids.length;
      const feeds = {
        ...past,
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, T]),
        position_ids: new ort.Tensor(
          'int64',
          BigInt64Array.from({ length: T }, (_, i) => BigInt(P + i)),
          [1, T],
        ),
      };
      const res = await session.run(feeds, presents ? ['logits', ...presentNames] : ['logits']);
      const logits = res.logits.data;
      let present = null;
      if (presents) {
        present = {};
        for (let i = 0; i < numLayers; i++)
          for (const kv of ['key', 'value']) present[`past_${kv}.${i}`] = res[`present_${kv}.${i}`];
      }
      return { logits, present };
    },
    release: () => session.release(),
  };
}

/** Largest |a − b| ÷ (atol + rtol·|b|): ≤ 1 passes. */
export function worstError(a, b, atol, rtol) {
  if (!a || a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const e = Math.abs(a[i] - b[i]) / (atol + rtol * Math.abs(b[i]));
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
  }
  return worst;
}
