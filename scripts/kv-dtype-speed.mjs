// Prints a decode step's time with a KV cache stored as f32, f16 or bf16 (a sanity figure, not a
// test; the bench in bench/ compares with onnxruntime-web): one token after `--context` cached,
//   model  a random-weight checkpoint of SmolLM-135M's shape (scripts/model-speed.mjs), via sessions
//   layer  the bench's MHA 768/12 and GQA 2048/32/8 layers (bench/decode.mjs), a prepared layer and its cache
// with the bytes each cache holds. Usage:
//   node scripts/kv-dtype-speed.mjs [--context 1024] [--steps 16] [--threads 1] [--parts model,layer]
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { planCheckpoint } from '../lib/model/checkpoint.mjs';
import { readModelConfig } from '../lib/model/config.mjs';

const require = createRequire(import.meta.url);
const { createAttention } = require('../dist/index.cjs');
const { createModel, engineOf } = require('../dist/create.cjs');
const { randomLlama, SMOLLM_135M } = require('../tests/js/random-checkpoint.js');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const context = Number(arg('context', 1024));
const steps = Number(arg('steps', 16));
const threads = Number(arg('threads', 1));
const parts = arg('parts', 'model,layer').split(',');
const DTYPES = ['f32', 'f16', 'bf16'];
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
const fastest = (values) => Math.min(...values);
const heapOf = (attn) => attn.memoryStats().heapInUse;

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}
const randArray = (n, scale, r) => Float32Array.from({ length: n }, () => r() * scale);

const attn = await createAttention({ threads });
const build = attn.info.relaxedSimd ? 'relaxed SIMD' : attn.info.simd ? 'SIMD' : 'scalar';
console.log(
  `${threads} thread(s), ${build}; one token after ${context} cached, median and fastest of ${steps} steps (the machine may be shared)`,
);

if (parts.includes('model')) {
  const { config, tensors } = randomLlama({ ...SMOLLM_135M, seed: 3 });
  const model = createModel(engineOf(attn), planCheckpoint(readModelConfig(config), tensors), { dtype: 'f32' });
  const ids = Int32Array.from({ length: context + steps }, (_, i) => (i * 7919 + 11) % SMOLLM_135M.vocab);
  // One cache per dtype, filled alike; then the steps take turns (f32, f16, bf16, f32, …), so a busy
  // machine slows each dtype alike.
  const runs = DTYPES.map((dtype) => {
    const before = heapOf(attn);
    const cache = model.createSession({ maxLength: context + steps, kvDtype: dtype });
    const bytes = heapOf(attn) - before;
    model.forward(ids.subarray(0, context), { session: cache, logits: 'none' });
    return { dtype, cache, bytes, times: [] };
  });
  for (let t = 0; t < steps; t++) {
    for (const run of runs) {
      const t0 = performance.now();
      model.forward(ids.subarray(context + t, context + t + 1), { session: run.cache, logits: 'last' });
      run.times.push(performance.now() - t0);
    }
  }
  for (const { dtype, cache, bytes, times } of runs) {
    console.log(
      `model SmolLM-135M shape, ${dtype} cache (${(bytes / 2 ** 20).toFixed(1)} MiB): decode ${median(times).toFixed(2)} ms/token (fastest ${fastest(times).toFixed(2)})`,
    );
    cache.dispose();
  }
  model.dispose();
}

// The bench's decode shapes (bench/decode.mjs): MHA 768/12 and GQA 2048/32/8.
const LAYERS = [
  { name: 'MHA 768/12', d: 768, h: 12, kvHeads: 12, headDim: 64 },
  { name: 'GQA 2048/32/8', d: 2048, h: 32, kvHeads: 8, headDim: 64 },
];
for (const { name, d, h, kvHeads, headDim } of parts.includes('layer') ? LAYERS : []) {
  const r = rng(5);
  const s = 1 / Math.sqrt(d);
  const layer = attn.createMultiHeadAttention({
    embedDim: d,
    numHeads: h,
    numKvHeads: kvHeads,
    headDim,
    qProjWeight: randArray(h * headDim * d, 2 * s, r),
    kProjWeight: randArray(kvHeads * headDim * d, 2 * s, r),
    vProjWeight: randArray(kvHeads * headDim * d, 2 * s, r),
    outProjWeight: randArray(d * h * headDim, 2 * s, r),
  });
  const prompt = randArray(context * d, 2, r);
  const x = randArray(d, 2, r);
  const runs = DTYPES.map((dtype) => {
    const before = heapOf(attn);
    const cache = layer.createKvCache({ maxLength: context + 1, dtype });
    const bytes = heapOf(attn) - before;
    layer.forward({ query: prompt, cache, isCausal: true, needWeights: false });
    return { dtype, cache, bytes, times: [] };
  });
  for (let t = 0; t < steps + 3; t++) {
    for (const run of runs) {
      const t0 = performance.now();
      layer.forward({ query: x, cache: run.cache, isCausal: true, needWeights: false });
      if (t >= 3) run.times.push(performance.now() - t0);
      run.cache.truncate(context);
    }
  }
  for (const { dtype, cache, bytes, times } of runs) {
    console.log(
      `layer ${name}, ${dtype} cache (${(bytes / 2 ** 20).toFixed(1)} MiB): decode ${median(times).toFixed(3)} ms/token (fastest ${fastest(times).toFixed(3)})`,
    );
    cache.dispose();
  }
  layer.dispose();
}
attn.dispose();
