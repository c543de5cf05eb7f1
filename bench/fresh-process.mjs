// Measurements that need a fresh Node process with default flags: the first call and the peak
// memory; run.mjs starts them (child-process.mjs) and reads the last stdout line (JSON).
//   node bench/fresh-process.mjs firstcall prepared|oneshot   createAttention + the first 256×768×12 forward, then 7 more
//   node bench/fresh-process.mjs memory                       one 16384×512×8 forward, needWeights false: WebAssembly memory
import { loadEngine, mhaArgs } from './engine.mjs';
import { makeProblem, median } from './util.mjs';
import { answer as out } from './child-process.mjs';

const [mode, variant = 'prepared'] = process.argv.slice(2);

async function firstCall() {
  const { createAttention, error } = await loadEngine();
  if (error) return out({ error });
  const p = makeProblem(256, 768, 12);
  const t0 = performance.now();
  const attn = await createAttention({ threads: 1, relaxedSimd: false });
  const createMs = performance.now() - t0;
  let forward,
    prepareMs = 0;
  if (variant === 'prepared') {
    if (typeof attn.createMultiHeadAttention !== 'function') return out({ error: 'no createMultiHeadAttention yet' });
    const t1 = performance.now();
    const layer = attn.createMultiHeadAttention(mhaArgs(p));
    prepareMs = performance.now() - t1;
    forward = () => layer.forward({ query: p.query, needWeights: false }).output;
  } else {
    const args = mhaArgs(p);
    forward = () => attn.multiHeadAttention({ ...args, query: p.query, needWeights: false }).output;
  }
  const t2 = performance.now();
  forward();
  const firstMs = performance.now() - t2;
  const steady = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    forward();
    steady.push(performance.now() - t);
  }
  out({ variant, createMs, prepareMs, firstMs, steadyMs: median(steady), steadyRuns: steady, info: attn.info });
}

async function memory() {
  const { createAttention, error } = await loadEngine();
  if (error) return out({ error });
  const n = 16384,
    d = 512,
    h = 8;
  const p = makeProblem(n, d, h);
  const attn = await createAttention({ threads: 1, relaxedSimd: false });
  if (typeof attn.memoryStats !== 'function') return out({ error: 'no attn.memoryStats()' });
  const before = attn.memoryStats();
  const t0 = performance.now();
  let res;
  try {
    res = attn.multiHeadAttention({ ...mhaArgs(p), query: p.query, needWeights: false });
  } catch (e) {
    return out({ error: `${e?.name}: ${String(e?.message ?? e).split('\n')[0]}`, before, after: attn.memoryStats() });
  }
  const ms = performance.now() - t0;
  const after = attn.memoryStats();
  let finite = true;
  for (let i = 0; i < res.output.length; i += 997)
    if (!Number.isFinite(res.output[i])) {
      finite = false;
      break;
    }
  out({ n, d, h, threads: attn.info?.threads, before, after, ms, outputLength: res.output.length, finite });
}

try {
  if (mode === 'firstcall') await firstCall();
  else if (mode === 'memory') await memory();
  else out({ error: `unknown mode ${mode}` });
} catch (e) {
  out({ error: `${e?.name}: ${String(e?.message ?? e).split('\n')[0]}` });
}
process.exit(0);
