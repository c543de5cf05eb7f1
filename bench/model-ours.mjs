// Our side of the model rows: the package's loadModel (dist/node.mjs, or BENCH_ENGINE=<path>) on an
// engine with `threads` threads and the default build (relaxed SIMD where the engine has it).
import { pathToFileURL } from 'node:url';
import { enginePath, loadEngine } from './engine.mjs';

async function createEngine(mod, threads) {
  const attn = await mod.createAttention({ threads });
  if (attn.info?.threads !== threads) {
    attn.dispose?.();
    throw new Error(`createAttention({threads:${threads}}) gave info.threads = ${attn.info?.threads}`);
  }
  return attn;
}

/**
 * → { info, via, load(source) → model on one engine kept for the rows, loadFresh(source) → { model,
 * ms, dispose() }: a load timed on an engine of its own, as a page's first load is (the engine's
 * memory grows for it; its creation is not timed) } or { error }.
 */
export async function loadOurs(threads) {
  const eng = await loadEngine();
  if (eng.error) return { error: eng.error };
  const mod = await import(pathToFileURL(enginePath).href);
  let attn;
  try {
    attn = await createEngine(mod, threads);
  } catch (e) {
    return { error: String(e?.message ?? e).split('\n')[0] };
  }
  if (typeof mod.loadModel !== 'function') return { error: 'this build has no loadModel' };
  const via = 'loadModel';
  const loaderFor = (a) => (source) => mod.loadModel(a, source, { dtype: 'f32' });
  return {
    info: attn.info,
    via,
    load: loaderFor(attn),
    async loadFresh(source) {
      const own = await createEngine(mod, threads);
      const t = performance.now();
      const model = await loaderFor(own)(source);
      const ms = performance.now() - t;
      return { model, ms, dispose: () => own.dispose() };
    },
  };
}
