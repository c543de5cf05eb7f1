// Prints how fast the engine runs a whole model (a sanity figure, not a test; the bench in bench/
// compares with onnxruntime-web): a random-weight checkpoint of SmolLM-135M's shape (30 layers,
// hidden 576, 9 heads, 3 K/V heads, MLP 1536, vocabulary 49152, tied), at 1 and 2 threads:
//   load      createModel from a plan already in memory
//   prefill   128 tokens, logits of the last (median of 5)
//   decode    one token after 128 cached (median of the steps)
// Usage: node scripts/model-speed.mjs [--shape smollm|poem] [--prompt 128] [--steps 16] [--threads 1,2]
//        [--dtype f32,f16,bf16,int8] (loadModel's dtype: how the linear layers store their weights)
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { planCheckpoint } from '../lib/model/checkpoint.mjs';
import { readModelConfig } from '../lib/model/config.mjs';

const require = createRequire(import.meta.url);
const { createAttention } = require('../dist/index.cjs');
const { createModel, engineOf } = require('../dist/create.cjs');
const { randomLlama, SMOLLM_135M, POEM } = require('../tests/js/random-checkpoint.js');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const promptLength = Number(arg('prompt', 128));
const steps = Number(arg('steps', 16));
const threadCounts = arg('threads', '1,2').split(',').map(Number);
const shapeName = arg('shape', 'smollm');
const dtypes = arg('dtype', 'f32').split(',');
const shape = { smollm: SMOLLM_135M, poem: POEM }[shapeName];

const made = performance.now();
const { config, tensors } = randomLlama({ ...shape, seed: 3 });
const plan = planCheckpoint(readModelConfig(config), tensors);
console.log(`random ${shapeName}-shaped checkpoint made in ${(performance.now() - made).toFixed(0)} ms`);
const ids = Int32Array.from({ length: promptLength + steps }, (_, i) => (i * 7919 + 11) % shape.vocab);

for (const threads of threadCounts)
  for (const dtype of dtypes) {
    const attn = await createAttention({ threads });
    const t0 = performance.now();
    const model = createModel(engineOf(attn), plan, { dtype });
    const loadMs = performance.now() - t0;
    // Warm-up: the first calls tier the kernels up.
    const warm = model.createSession({ maxLength: promptLength + steps });
    model.forward(ids.subarray(0, promptLength), { session: warm, logits: 'last' });
    for (let t = 0; t < 3; t++) model.forward(ids.subarray(promptLength + t, promptLength + t + 1), { session: warm });
    warm.dispose();

    // Medians: the machine may be shared, and one slow call should not make the figure.
    const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
    const cache = model.createSession({ maxLength: promptLength + steps });
    const prefills = [];
    const decodes = [];
    for (let round = 0; round < 5; round++) {
      cache.truncate(0);
      const p0 = performance.now();
      model.forward(ids.subarray(0, promptLength), { session: cache, logits: 'last' });
      prefills.push(performance.now() - p0);
    }
    for (let t = 0; t < steps; t++) {
      const d0 = performance.now();
      model.forward(ids.subarray(promptLength + t, promptLength + t + 1), { session: cache, logits: 'all' });
      decodes.push(performance.now() - d0);
    }
    const prefillMs = median(prefills);
    const decodeMs = median(decodes);
    console.log(
      `${dtype}, ${threads} thread(s), ${attn.info.relaxedSimd ? 'relaxed SIMD' : attn.info.simd ? 'SIMD' : 'scalar'}: load ${loadMs.toFixed(0)} ms (${(model.weightBytes / 2 ** 20).toFixed(1)} MiB), ` +
        `prefill ${promptLength} tokens ${prefillMs.toFixed(0)} ms (${((promptLength / prefillMs) * 1000).toFixed(0)} tokens/s), ` +
        `decode after ${promptLength} ${decodeMs.toFixed(1)} ms/token (${(1000 / decodeMs).toFixed(1)} tokens/s)`,
    );
    model.dispose();
    attn.dispose();
  }
