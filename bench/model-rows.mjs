// Model rows at one thread count (bench/model.mjs starts this once per thread count: onnxruntime-web
// fixes its thread count per process): for each model, a 128-token prefill and one decode step
// after `ctx` cached tokens, ours (loadModel → session → forward, logits 'last') against
// onnxruntime-web running the same checkpoint exported by bench/export-onnx.py, interleaved; the
// logits of both compared; and the time to load the model from bytes already in memory.
//
//   node bench/model-rows.mjs --threads=N --models=NAME:DIR:ONNX,… [--quick]     prints one JSON line
import fs from 'node:fs';
import path from 'node:path';
import { restartWithRelaxedSimd } from './relaxed.mjs';
import { measureInterleaved } from './measure.mjs';
import { cpuSnapshot, median, otherLoad, rng } from './util.mjs';
import { answer } from './child-process.mjs';
import { loadOurs } from './model-ours.mjs';
import { createOrtLlama, worstError } from './ort-llama.mjs';

// Our default build where the browser has it: relaxed SIMD (Node 20 needs a flag for it).
restartWithRelaxedSimd();

const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const threads = Number(opt('threads') ?? 1);
const QUICK = argv.includes('--quick');
const MODELS = (opt('models') ?? '')
  .split(',')
  .filter(Boolean)
  .map((m) => m.split(':'));
export const PREFILL = 128;
const LOAD_REPS = 3;
// Agreement of ours and onnxruntime-web (both float32, summing in different orders): loose.
const TOL = 1e-3;

const seconds = (ms) => ms / 1000;
const errorText = (e) => String(e?.message ?? e).split('\n')[0];

/** Decode contexts: after 128 and 1024 cached tokens, or the last position the model has. */
export const contextsFor = (maxPositions) => [128, 1024].map((c) => Math.min(c, maxPositions - 1));

async function measureModel(ort, ours, name, dir, onnxPath) {
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const weights = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
  const res = { name, dir, onnx: path.basename(onnxPath), rows: [], weightsBytes: weights.length };
  const cpuStart = cpuSnapshot();
  const maxPositions = config.max_position_embeddings;
  const contexts = [...new Set(contextsFor(maxPositions))];
  const rand = rng(1234);
  const ids = Array.from({ length: Math.max(PREFILL, ...contexts) + 1 }, () => Math.floor(rand() * config.vocab_size));
  const shape = {
    numLayers: config.num_hidden_layers,
    kvHeads: config.num_key_value_heads,
    headDim: config.head_dim ?? config.hidden_size / config.num_attention_heads,
  };

  // ours: the time to load from bytes in memory, each time on a fresh engine (median of LOAD_REPS);
  // then the model the rows run, on the engine kept for them
  let model = null;
  if (ours.error) res.oursError = ours.error;
  else {
    try {
      const loads = [];
      for (let r = 0; r < LOAD_REPS; r++) {
        const fresh = await ours.loadFresh({ config, weights });
        loads.push(fresh.ms);
        fresh.model.dispose();
        fresh.dispose();
      }
      res.oursLoadMs = { median: median(loads), runs: loads };
      model = await ours.load({ config, weights });
    } catch (e) {
      res.oursError = `loading: ${errorText(e)}`;
    }
  }

  // onnxruntime-web's session after our loads: neither side's load runs beside the other's memory
  const t = performance.now();
  const ortModel = await createOrtLlama(ort, fs.readFileSync(onnxPath), shape);
  res.ortLoadMs = performance.now() - t;

  const rows = [
    { kind: 'prefill', tokens: PREFILL, ctx: 0 },
    ...contexts.map((ctx) => ({ kind: 'decode', tokens: 1, ctx })),
  ];
  for (const row of rows) {
    const prompt = ids.slice(0, row.ctx);
    const input = row.kind === 'prefill' ? ids.slice(0, PREFILL) : [ids[row.ctx]];
    const impls = [];
    // onnxruntime-web: the cache of `ctx` tokens from its own prefill (not timed), fed as past_*; a
    // step returns the logits and the new cache (present_*), as a generation loop needs them.
    const past = row.ctx ? (await ortModel.run(prompt, ortModel.emptyPast)).present : ortModel.emptyPast;
    impls.push({ key: 'ort', run: async () => (await ortModel.run(input, past)).logits });
    // the same step without copying the new cache out (its compute alone): the harder yardstick
    if (row.kind === 'decode')
      impls.push({
        key: 'ortLogitsOnly',
        run: async () => (await ortModel.run(input, past, { presents: false })).logits,
      });
    let session = null;
    if (model) {
      try {
        session = model.createSession({ maxLength: Math.min(maxPositions, row.ctx + row.tokens) });
        if (row.ctx) model.forward(Int32Array.from(prompt), { session, logits: 'last' });
        const x = Int32Array.from(input);
        impls.push({
          key: 'ours',
          run: () => {
            const { logits } = model.forward(x, { session, logits: 'last' });
            session.truncate(row.ctx);
            return logits;
          },
        });
      } catch (e) {
        row.oursError = errorText(e);
      }
    }
    // a prefill of the 135M model takes about a second per call: fewer repetitions there; decode
    // steps are cheap, and more of them keep the median steady on a shared machine
    const slow = row.kind === 'prefill' && weights.length > 1e8;
    const reps = QUICK ? 3 : slow ? 7 : row.kind === 'decode' ? 15 : 11;
    const st = await measureInterleaved(impls, null, { reps, warm: slow ? 1 : 3 });
    for (const [k, v] of st) row[k] = v.error ? { error: v.error } : { median: v.median, runs: v.runs, calls: v.calls };
    if (st.get('ours') && !st.get('ours').error && st.get('ort') && !st.get('ort').error)
      row.worstVsOrt = worstError(st.get('ours').output, st.get('ort').output, TOL, TOL);
    for (const k of ['ours', 'ort', 'ortLogitsOnly'])
      if (row[k]?.median) row[k].tokensPerSecond = row.tokens / seconds(row[k].median);
    res.rows.push(row);
    session?.dispose();
    process.stderr.write(`bench: ${name} ${threads}t ${row.kind} ${row.ctx || row.tokens} done\n`);
  }
  model?.dispose();
  await ortModel.release();
  res.cpu = otherLoad(cpuStart, cpuSnapshot()); // how busy the rest of the machine was meanwhile
  return res;
}

const result = { threads, models: [] };
try {
  const { loadOrt } = await import('./ort-peer.mjs');
  result.ort = await loadOrt(threads);
  const ort = await import('onnxruntime-web');
  const ours = await loadOurs(threads);
  result.engine = ours.info ?? null;
  result.oursVia = ours.via ?? null;
  for (const [name, dir, onnx] of MODELS) {
    try {
      result.models.push(await measureModel(ort, ours, name, dir, onnx));
    } catch (e) {
      result.models.push({ name, error: errorText(e) });
    }
  }
} catch (e) {
  result.error = errorText(e);
}
answer(result);
process.exit(0);
