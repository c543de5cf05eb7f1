// Reduced-precision decode rows at one thread count (bench/reduced.mjs starts this once per thread
// count: onnxruntime-web fixes its thread count per process). One new token after `ctx` cached, for
// each pair of weight dtype and KV-cache dtype in COMBOS, interleaved with onnxruntime-web's fp32 and
// int8 (quantize_dynamic's nodes) steps:
//   layer  the bench's MHA 768/12 and GQA 2048/32/8 prepared layers (as bench/decode.mjs), after 128,
//          1024 and 4096 cached tokens; onnxruntime-web through GroupQueryAttention
//   model  the SmolLM-135M-shaped checkpoint through loadModel and a session, after 128 and 1024;
//          onnxruntime-web's fp32 ONNX of it (bench/export-onnx.py); no int8 ONNX of the model can
//          be made here (reason in the answer)
// with the bytes each step reads (weights once, the cached K/V once) and a copy-bandwidth probe.
//
//   node bench/reduced-rows.mjs --threads=N [--quick] [--parts=layer,model] [--smollm=DIR:ONNX]   prints one JSON line
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { restartWithRelaxedSimd } from './relaxed.mjs';
import { measureInterleaved } from './measure.mjs';
import { enginePath, loadEngine } from './engine.mjs';
import { bandwidthProbe } from './bandwidth.mjs';
import { DECODE_SHAPES, layerArgs, weightsOf } from './decode-shapes.mjs';
import { answer } from './child-process.mjs';
import { randArray, rng } from './util.mjs';

// Our default build where the browser has it: relaxed SIMD (Node 20 needs a flag for it).
restartWithRelaxedSimd();

const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const threads = Number(opt('threads') ?? 1);
const QUICK = argv.includes('--quick');
const parts = (opt('parts') ?? 'layer,model').split(',');
const smollm = opt('smollm')?.split(':');

/** [weight dtype, cache dtype]: each alone against f32/f32, and the reduced pairs a user would pick. */
export const COMBOS = [
  ['f32', 'f32'],
  ['f16', 'f32'],
  ['bf16', 'f32'],
  ['int8', 'f32'],
  ['f32', 'f16'],
  ['f32', 'bf16'],
  ['f16', 'f16'],
  ['bf16', 'bf16'],
  ['int8', 'f16'],
];
const LAYER_CONTEXTS = QUICK ? [128] : [128, 1024, 4096];
const MODEL_CONTEXTS = QUICK ? [128] : [128, 1024];
const ELEMENT_BYTES = { f32: 4, f16: 2, bf16: 2, int8: 1 };
export const MODEL_INT8_SKIP =
  "no int8 ONNX of the model: onnxruntime's quantize_dynamic is Python (onnxruntime), which Debian does not package and PyPI is out of reach";

const errorText = (e) => String(e?.message ?? e).split('\n')[0];
const reps = QUICK ? 3 : 9;

/** Bytes of an [out, in] matrix stored as `dtype` (int8: its scale per output too). */
const matrixBytes = (out, inDim, dtype) => out * inDim * ELEMENT_BYTES[dtype] + (dtype === 'int8' ? 4 * out : 0);
/** Bytes of `tokens` cached K and V rows of `kvHeads` heads, per layer. */
const cacheBytes = (tokens, kvHeads, headDim, dtype) => 2 * tokens * kvHeads * headDim * ELEMENT_BYTES[dtype];

const layerWeightBytes = (p, dtype) =>
  matrixBytes(p.h * p.headDim, p.d, dtype) +
  2 * matrixBytes(p.kvHeads * p.headDim, p.d, dtype) +
  matrixBytes(p.d, p.h * p.headDim, dtype);

/** One measured row: every implementation's median and runs, with the bytes its step reads. */
async function measureRow(row, impls, x) {
  const st = await measureInterleaved(impls, x, { reps, warm: 3 });
  for (const im of impls) {
    const v = st.get(im.key);
    row.impls[im.key] = v.error ? { error: v.error } : { median: v.median, runs: v.runs, bytes: im.bytes };
  }
  return row;
}

async function layerRows(attn, ort) {
  const rows = [];
  for (const shape of DECODE_SHAPES) {
    const p = weightsOf(shape);
    const layers = {};
    for (const dtype of new Set(COMBOS.map(([w]) => w)))
      layers[dtype] = attn.createMultiHeadAttention({ ...layerArgs(p), weightDtype: dtype });
    for (const ctx of LAYER_CONTEXTS) {
      const rand = rng(7 + ctx);
      const prompt = randArray(ctx * p.d, 1, rand);
      const row = { part: 'layer', name: shape.name, ctx, impls: {} };
      const caches = [];
      const impls = COMBOS.map(([w, kv]) => {
        const layer = layers[w];
        const cache = layer.createKvCache({ maxLength: ctx + 1, dtype: kv });
        caches.push(cache);
        layer.forward({ query: prompt, cache, isCausal: true, needWeights: false });
        return {
          key: `${w}/${kv}`,
          bytes: layerWeightBytes(p, w) + cacheBytes(ctx + 1, p.kvHeads, p.headDim, kv),
          run: (x) => {
            const { output } = layer.forward({ query: x, cache, isCausal: true, needWeights: false });
            cache.truncate(ctx);
            return output;
          },
        };
      });
      const past = randArray(p.kvHeads * ctx * p.headDim, 1, rand);
      const orts = [];
      for (const weights of ['f32', 'int8']) {
        try {
          const o = await ort.prepareOrtDecode(p, 1, ctx, past, Float32Array.from(past), { weights });
          orts.push(o);
          impls.push({
            key: `ort ${weights}`,
            bytes: layerWeightBytes(p, weights) + cacheBytes(ctx + 1, p.kvHeads, p.headDim, 'f32'),
            run: o.run,
          });
        } catch (e) {
          row.impls[`ort ${weights}`] = { error: errorText(e) };
        }
      }
      rows.push(await measureRow(row, impls, randArray(p.d, 1, rand)));
      for (const o of orts) await o.dispose();
      for (const c of caches) c.dispose();
      process.stderr.write(`bench: reduced ${threads}t ${shape.name} after ${ctx} done\n`);
    }
    for (const layer of Object.values(layers)) layer.dispose();
  }
  return rows;
}

async function modelRows(mod, ortModule, dir, onnxPath) {
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const weights = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
  const { createOrtLlama } = await import('./ort-llama.mjs');
  const L = config.num_hidden_layers,
    kvHeads = config.num_key_value_heads,
    headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  // one engine per weight dtype: four 135M models do not share one wasm32 memory comfortably
  const models = {};
  for (const dtype of new Set(COMBOS.map(([w]) => w))) {
    const attn = await mod.createAttention({ threads });
    const model = await mod.loadModel(attn, { config, weights }, { dtype });
    models[dtype] = { attn, model, weightBytes: attn.memory().weightBytes };
  }
  const ortModel = await createOrtLlama(ortModule, fs.readFileSync(onnxPath), { numLayers: L, kvHeads, headDim });
  const ortWeightBytes = models.f32.weightBytes; // the same float32 matrices and embedding
  const rand = rng(1234);
  const ids = Array.from({ length: Math.max(...MODEL_CONTEXTS) + 1 }, () => Math.floor(rand() * config.vocab_size));
  const rows = [];
  for (const ctx of MODEL_CONTEXTS) {
    const row = { part: 'model', name: 'smollm-135m-shape', ctx, impls: {} };
    const sessions = [];
    const step = Int32Array.of(ids[ctx]);
    const impls = COMBOS.map(([w, kv]) => {
      const { model, weightBytes } = models[w];
      const session = model.createSession({ maxLength: ctx + 1, kvDtype: kv });
      sessions.push(session);
      model.forward(Int32Array.from(ids.slice(0, ctx)), { session, logits: 'none' });
      return {
        key: `${w}/${kv}`,
        bytes: weightBytes + L * cacheBytes(ctx + 1, kvHeads, headDim, kv),
        run: () => {
          const { logits } = model.forward(step, { session, logits: 'last' });
          session.truncate(ctx);
          return logits;
        },
      };
    });
    const past = (await ortModel.run(ids.slice(0, ctx), ortModel.emptyPast)).present;
    impls.push({
      key: 'ort f32',
      bytes: ortWeightBytes + L * cacheBytes(ctx + 1, kvHeads, headDim, 'f32'),
      run: async () => (await ortModel.run([ids[ctx]], past)).logits,
    });
    row.impls['ort int8'] = { error: MODEL_INT8_SKIP };
    rows.push(await measureRow(row, impls, null));
    for (const s of sessions) s.dispose();
    process.stderr.write(`bench: reduced ${threads}t model after ${ctx} done\n`);
  }
  await ortModel.release();
  for (const { attn, model } of Object.values(models)) {
    model.dispose();
    attn.dispose();
  }
  return rows;
}

const result = { threads, rows: [], loadAverage: null };
try {
  const eng = await loadEngine();
  if (eng.error) throw new Error(eng.error);
  const mod = await import(pathToFileURL(enginePath).href);
  const attn = await mod.createAttention({ threads });
  if (attn.info.threads !== threads) throw new Error(`createAttention({threads:${threads}}) gave ${attn.info.threads}`);
  result.build = attn.info.relaxedSimd ? 'relaxed SIMD' : attn.info.simd ? 'SIMD' : 'scalar';
  const ort = await import('./ort-peer.mjs');
  result.ort = await ort.loadOrt(threads);
  result.bandwidth = [bandwidthProbe()];
  if (parts.includes('layer')) result.rows.push(...(await layerRows(attn, ort)));
  attn.dispose();
  if (parts.includes('model')) {
    if (!smollm) result.modelError = 'no --smollm=DIR:ONNX given';
    else
      try {
        result.rows.push(...(await modelRows(mod, await import('onnxruntime-web'), smollm[0], smollm[1])));
      } catch (e) {
        result.modelError = errorText(e);
      }
  }
  result.bandwidth.push(bandwidthProbe());
  result.loadAverage = os.loadavg();
} catch (e) {
  result.error = errorText(e);
}
answer(result);
process.exit(0);
