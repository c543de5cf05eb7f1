// wasm-attention adapters: load the built package (dist/node.mjs, or BENCH_ENGINE=<path>) and
// wrap one-shot multiHeadAttention and prepared createMultiHeadAttention(...).forward so that a
// missing feature turns into a reason string instead of an exception.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const enginePath = path.resolve(process.env.BENCH_ENGINE || path.join(here, '..', 'dist', 'node.mjs'));

export async function loadEngine() {
  if (!fs.existsSync(enginePath))
    return { error: `${path.relative(process.cwd(), enginePath)} not found (run scripts/build.sh)` };
  try {
    const mod = await import(pathToFileURL(enginePath).href);
    const createAttention = mod.createAttention ?? mod.default?.createAttention;
    if (typeof createAttention !== 'function') return { error: 'the package exports no createAttention' };
    return { createAttention };
  } catch (e) {
    return { error: `import failed: ${String(e?.message ?? e).split('\n')[0]}` };
  }
}

/**
 * Creates an instance with `threads` (and more options); error string when it cannot give that many
 * threads. The mul+add SIMD build unless options ask otherwise: the relaxed build has rows of its own.
 */
export async function createInstance(createAttention, threads, options = {}) {
  try {
    const attn = await createAttention({ threads, relaxedSimd: false, ...options });
    const got = attn.info?.threads;
    if (threads > 1 && got !== threads)
      return { error: `createAttention({threads:${threads}}) gave info.threads = ${got}` };
    return { attn, info: attn.info };
  } catch (e) {
    return { error: `createAttention({threads:${threads}}) threw: ${String(e?.message ?? e).split('\n')[0]}` };
  }
}

export function mhaArgs(p) {
  return {
    embedDim: p.d,
    numHeads: p.h,
    inProjWeight: p.inProjWeight,
    inProjBias: p.inProjBias,
    outProjWeight: p.outProjWeight,
    outProjBias: p.outProjBias,
  };
}

/** x ↦ output through one-shot attn.multiHeadAttention (weights passed on every call). */
export function oneShot(attn, p, needWeights = false) {
  if (typeof attn.multiHeadAttention !== 'function') return { error: 'no multiHeadAttention' };
  const base = mhaArgs(p);
  return { run: (x) => attn.multiHeadAttention({ ...base, query: x, needWeights }).output, dispose() {} };
}

/** x ↦ output through attn.createMultiHeadAttention(...).forward (weights loaded once). */
export function prepared(attn, p, needWeights = false) {
  if (typeof attn.createMultiHeadAttention !== 'function')
    return { error: 'no createMultiHeadAttention (prepared layers) yet' };
  let layer;
  try {
    layer = attn.createMultiHeadAttention(mhaArgs(p));
  } catch (e) {
    return { error: `createMultiHeadAttention threw: ${String(e?.message ?? e).split('\n')[0]}` };
  }
  return { run: (x) => layer.forward({ query: x, needWeights }).output, dispose: () => layer.dispose?.() };
}
