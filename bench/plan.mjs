// What one bench run measures, from its command line: the shapes, the repetition counts, what to
// skip, where the raw numbers go, and the rows of the table (our variants and the peers).
//
//   node bench/run.mjs [--quick] [--shapes=8x64x2,256x768x12] [--skip=naive,tfjs,ort,ort2,firstcall,memory,decode,model,long]
//                      [--threads 1,2,4,8,16] [--no-verify-big] [--json=bench/results.json]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineCores, parseThreads, threadPlan, withoutThreads } from './threads.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// Our thread counts (threads.mjs): 1 and 2 unless --threads lists others; always 1.
let threads;
try {
  threads = parseThreads(process.argv.slice(2));
} catch (e) {
  console.error(`bench: ${e.message}`);
  process.exit(2);
}
export const THREADS = threads;
export const CORES = machineCores();
export const THREAD_PLAN = threadPlan(THREADS, CORES);
const argv = withoutThreads(process.argv.slice(2));
const opt = (name) => {
  const a = argv.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (!a) return undefined;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : true;
};
export const QUICK = !!opt('quick');
export const SKIP = new Set(
  String(opt('skip') || '')
    .split(',')
    .filter(Boolean),
);
export const VERIFY_BIG = !opt('no-verify-big') && !QUICK;
export const JSON_OUT = path.resolve(typeof opt('json') === 'string' ? opt('json') : path.join(here, 'results.json'));

const ALL_SHAPES = [
  [8, 64, 2],
  [12, 48, 3],
  [4, 512, 8],
  [64, 256, 4],
  [96, 384, 6],
  [128, 512, 8],
  [256, 768, 12],
  [512, 768, 12],
  [1024, 512, 8],
];
export const shapeKey = ([n, d, h]) => `${n}x${d}x${h}`;
export const shapeLabel = ([n, d, h]) => `${n}×${d}×${h}`;
let shapes = ALL_SHAPES;
if (typeof opt('shapes') === 'string') {
  shapes = opt('shapes')
    .split(',')
    .map((s) => s.split(/[x×]/).map(Number));
} else if (QUICK) {
  shapes = ALL_SHAPES.slice(0, 6);
}
export const SHAPES = shapes;
export const NAIVE_MAX_TOKENS = 256; // naive JS is timed up to this many tokens
export const WEIGHTS_SHAPE = '256x768x12'; // where needWeights: true is timed too
export const repsFor = (n) => (QUICK ? 3 : n <= 128 ? 11 : n <= 256 ? 9 : 7);
export const warmFor = (n) => (n >= 512 ? 2 : 3); // warm-up calls per implementation
export const raceFor = (n) => ({ warm: n >= 512 ? 2 : 3, rounds: QUICK || n >= 512 ? 1 : 3 }); // variant races

// The table's rows, in order. ours: a wasm-attention variant; extra: not one a user gets by default.
// The prepared and relaxed builds have a row per thread count; the peers run at 1 and 2 threads.
export const IMPLS = [
  { key: 'wa-oneshot-1', name: 'wasm-attention one-shot', threads: 1, ours: true },
  ...THREADS.map((t) => ({ key: `wa-prepared-${t}`, name: 'wasm-attention prepared', threads: t, ours: true })),
  ...THREADS.map((t) => ({
    key: `wa-relaxed-${t}`,
    name: 'wasm-attention prepared, relaxed SIMD',
    threads: t,
    ours: true,
    relaxed: true,
  })),
  { key: 'wa-prepared-1-w', name: 'wasm-attention prepared, needWeights', threads: 1, ours: true, extra: true },
  { key: 'wa-scalar-1', name: 'wasm-attention prepared, scalar build', threads: 1, ours: true, extra: true },
  { key: 'wa-scalar-2', name: 'wasm-attention prepared, scalar build', threads: 2, ours: true, extra: true },
  { key: 'naive', name: 'naive JavaScript', threads: 1 },
  { key: 'tfjs-1', name: 'tfjs-backend-wasm', threads: 1 },
  { key: 'tfjs-2', name: 'tfjs-backend-wasm', threads: 2 },
  { key: 'ort-1', name: 'onnxruntime-web', threads: 1 },
  { key: 'ort-2', name: 'onnxruntime-web †', threads: 2 },
];

/** Cores a row's threads had at once (its % of peak is of that many 1-thread probes). */
export const coresOf = (threads) => Math.min(threads, CORES);
