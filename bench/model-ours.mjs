// Our side of the model rows: the package's loadModel (dist/node.mjs, or BENCH_ENGINE=<path>) on an
// engine with `threads` threads and the default build (relaxed SIMD where the engine has it).
// Returns { load({ config, weights }) → model, info, via } or { error } when the build lacks it.
import { pathToFileURL } from 'node:url';
import { enginePath, loadEngine } from './engine.mjs';

export async function loadOurs(threads) {
  const eng = await loadEngine();
  if (eng.error) return { error: eng.error };
  const mod = await import(pathToFileURL(enginePath).href);
  if (typeof mod.loadModel !== 'function') return { error: 'this build has no loadModel yet' };
  let attn;
  try {
    attn = await mod.createAttention({ threads });
  } catch (e) {
    return { error: `createAttention({threads:${threads}}) threw: ${String(e?.message ?? e).split('\n')[0]}` };
  }
  if (attn.info?.threads !== threads)
    return { error: `createAttention({threads:${threads}}) gave info.threads = ${attn.info?.threads}` };
  return {
    info: attn.info,
    via: 'loadModel',
    load: (source) => mod.loadModel(attn, source, { dtype: 'f32' }),
  };
}
