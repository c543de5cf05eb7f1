// Our side of the model rows: the package's loadModel (dist/node.mjs, or BENCH_ENGINE=<path>) on an
// engine with `threads` threads and the default build (relaxed SIMD where the engine has it).
// A build that has the engine's models but not yet loadModel (the model-core branch before the
// public API joined it) is timed through createEngineModel, the same work under loadModel's checks.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { enginePath, loadEngine } from './engine.mjs';

/** createEngineModel's model with loadModel's face, as far as the rows use it (sessions, forward). */
function asModel(engineModel) {
  return {
    createSession: ({ maxLength }) => engineModel.createCache(maxLength),
    forward: (ids, { session = null, logits = 'all' } = {}) => engineModel.forward(ids, { cache: session, logits }),
    dispose: () => engineModel.dispose(),
  };
}

async function engineModelLoader(attn) {
  // the same module instance as the engine's entry, so that engineOf knows this attn: Node's entry
  // (node.mjs) is the CommonJS one, which bundles the API into create.cjs
  const dir = path.dirname(enginePath);
  const cjs = path.join(dir, 'create.cjs');
  const esm = path.join(dir, 'model-engine.mjs');
  const api = fs.existsSync(cjs) ? createRequire(import.meta.url)(cjs) : {};
  const { createEngineModel, engineOf } =
    typeof api.createEngineModel === 'function' ? api : fs.existsSync(esm) ? await import(pathToFileURL(esm).href) : {};
  if (typeof createEngineModel !== 'function') return null;
  const { planCheckpoint } = await import('../lib/model/checkpoint.mjs');
  return async ({ config, weights }) =>
    asModel(createEngineModel(engineOf(attn), planCheckpoint(config, weights), { dtype: 'f32' }));
}

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
  let via = 'loadModel';
  let loaderFor = (a) => (source) => mod.loadModel(a, source, { dtype: 'f32' });
  if (typeof mod.loadModel !== 'function') {
    if (!(await engineModelLoader(attn))) return { error: 'this build has no loadModel yet' };
    via = 'createEngineModel (no loadModel in this build)';
    loaderFor = (a) => (source) => engineModelLoader(a).then((load) => load(source));
  }
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
