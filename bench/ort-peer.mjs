// The onnxruntime-web peer (its WebAssembly execution provider, SIMD + threads build), with a
// multi-head attention model built in memory (onnx-model.mjs). ort.env.wasm.numThreads is global
// to a process and fixed when the first session is created, so each thread count needs its own
// process.
import { buildGqaModel, buildMhaModel } from './onnx-model.mjs';

let ort;

export async function loadOrt(numThreads) {
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = numThreads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return { version: ort.env.versions?.web ?? 'unknown', threads: numThreads };
}

/** Returns { variants: { contrib, standard }, dispose }; each variant: async Float32Array [n,d] → Float32Array. */
export async function prepareOrt(p) {
  const { n, d } = p;
  const sessions = {};
  const variants = {};
  const errors = {};
  for (const kind of ['contrib', 'standard']) {
    try {
      const s = await ort.InferenceSession.create(buildMhaModel(p, kind), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      sessions[kind] = s;
      variants[kind] = async (x) => {
        const res = await s.run({ x: new ort.Tensor('float32', x, [1, n, d]) });
        const y = res.y.data;
        res.y.dispose?.();
        return y;
      };
    } catch (e) {
      errors[kind] = String(e?.message ?? e).split('\n')[0];
    }
  }
  return {
    variants,
    errors,
    dispose: async () => {
      for (const s of Object.values(sessions)) await s.release();
    },
  };
}

/**
 * A decoder step through GroupQueryAttention: `tokens` new tokens after `past` cached ones (the
 * cache given as past_key / past_value inputs, as ORT-web runs it); options: buildGqaModel's (a window,
 * int8 weights). Returns { run, dispose }; run:
 * x [tokens, d] → Promise<Float32Array>.
 */
export async function prepareOrtDecode(p, tokens, past, pastKey, pastValue, options = {}) {
  // Its worker threads spin between runs by default, taking the cores our interleaved steps need on
  // a 2-core machine; without spinning both sides get the same machine.
  const s = await ort.InferenceSession.create(buildGqaModel(p, tokens, past, options), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const shape = [1, p.kvHeads, past, p.headDim];
  const feeds = {
    past_key: new ort.Tensor('float32', pastKey, shape),
    past_value: new ort.Tensor('float32', pastValue, shape),
    seqlens_k: new ort.Tensor('int32', Int32Array.of(past + tokens - 1), [1]),
    total_sequence_length: new ort.Tensor('int32', Int32Array.of(past + tokens), []),
  };
  return {
    run: async (x) => {
      const res = await s.run({ ...feeds, x: new ort.Tensor('float32', x, [1, tokens, p.d]) }, ['y']);
      const y = res.y.data;
      res.y.dispose?.();
      return y;
    },
    dispose: () => s.release(),
  };
}
