// Our side of the model rows: the package's loadModel (dist/node.mjs, or BENCH_ENGINE=<path>) on an
// engine with `threads` threads and the default build (relaxed SIMD where the engine has it).
// A build that has the engine's models but not yet loadModel (the model-core branch before the
// public API joined it) is timed through createEngineModel, the same work under loadModel's checks.
// Returns { load({ config, weights }) → model, info, via } or { error } when the build has neither.
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

export async function loadOurs(threads) {
  const eng = await loadEngine();
  if (eng.error) return { error: eng.error };
  const mod = await import(pathToFileURL(enginePath).href);
  let attn;
  try {
    attn = await mod.createAttention({ threads });
  } catch (e) {
    return { error: `createAttention({threads:${threads}}) threw: ${String(e?.message ?? e).split('\n')[0]}` };
  }
  if (attn.info?.threads !== threads)
    return { error: `createAttention({threads:${threads}}) gave info.threads = ${attn.info?.threads}` };
  if (typeof mod.loadModel === 'function')
    return { info: attn.info, via: 'loadModel', load: (source) => mod.loadModel(attn, source, { dtype: 'f32' }) };
  const load = await engineModelLoader(attn);
  if (load) return { info: attn.info, via: 'createEngineModel (no loadModel in this build)', load };
  return { error: 'this build has no loadModel yet' };
}
