// Decode rows of `npm run bench` (run.mjs starts this once per thread count: onnxruntime-web fixes its
// thread count per process). One new token against caches of 128, 1024 and 4096 tokens, for an MHA
// shape (embedDim 768, 12 heads) and a GQA shape (embedDim 2048, 32 heads, 8 KV heads, headDim 64),
// and a 512-token prefill of the GQA shape; wasm-attention (prepared layer + KV cache) against
// onnxruntime-web's com.microsoft GroupQueryAttention (past K/V as inputs), interleaved. A decode
// step is bound by memory traffic (weights plus the cached K/V): its bytes ÷ a copy-bandwidth probe
// measured in the same process give the time it could take at best.
//
//   node bench/decode.mjs --threads=N [--quick]     prints one JSON line
import { measureInterleaved } from './measure.mjs';
import { loadEngine, createInstance } from './engine.mjs';
import { randArray, rng } from './util.mjs';
import { bandwidthProbe } from './bandwidth.mjs';
import { DECODE_SHAPES, layerArgs, weightsOf } from './decode-shapes.mjs';

const argv = process.argv.slice(2);
const threads = Number((argv.find((a) => a.startsWith('--threads=')) ?? '--threads=1').split('=')[1]);
const QUICK = argv.includes('--quick');

const CONTEXTS = [128, 1024, 4096];
const PREFILL = 512;

/** Bytes a decode step must read at least: every weight once, every cached K and V once. */
const stepBytes = (s, ctx) =>
  4 * (2 * s.d * s.h * s.headDim + 2 * s.d * s.kvHeads * s.headDim + 2 * ctx * s.kvHeads * s.headDim);

const result = { threads, rows: [] };
try {
  const eng = await loadEngine();
  if (eng.error) throw new Error(eng.error);
  const inst = await createInstance(eng.createAttention, threads);
  if (inst.error) throw new Error(inst.error);
  const { loadOrt, prepareOrtDecode } = await import('./ort-peer.mjs');
  result.ort = await loadOrt(threads);
  result.bandwidth = [bandwidthProbe()];
  for (const shape of DECODE_SHAPES) {
    const p = weightsOf(shape);
    const layer = inst.attn.createMultiHeadAttention(layerArgs(p));
    const rand = rng(7);
    const cases = QUICK
      ? [[128, 1]]
      : [...CONTEXTS.map((c) => [c, 1]), ...(shape.kvHeads < shape.h ? [[0, PREFILL]] : [])];
    for (const [ctx, tokens] of cases) {
      const cache = layer.createKvCache({ maxLength: Math.max(ctx + tokens, 1) });
      if (ctx > 0) layer.forward({ query: randArray(ctx * p.d, 1, rand), cache, isCausal: true, needWeights: false });
      const past = randArray(p.kvHeads * ctx * p.headDim, 1, rand);
      const row = { shape: shape.name, ctx, tokens, bytes: stepBytes(p, ctx) };
      const impls = [
        {
          key: 'ours',
          run: (x) => {
            const { output } = layer.forward({ query: x, cache, isCausal: true, needWeights: false });
            cache.truncate(ctx);
            return output;
          },
        },
      ];
      let ort = null;
      try {
        ort = await prepareOrtDecode(p, tokens, ctx, past, Float32Array.from(past));
        impls.push({ key: 'ort', run: ort.run });
      } catch (e) {
        row.ortError = String(e?.message ?? e).split('\n')[0];
      }
      const x = randArray(tokens * p.d, 1, rand);
      const st = await measureInterleaved(impls, x, { reps: QUICK ? 3 : tokens > 1 ? 7 : 11, warm: 3 });
      for (const [k, v] of st) row[k] = v.error ? { error: v.error } : { median: v.median, runs: v.runs };
      // A prefill from an empty cache is the same computation in both: the outputs must agree.
      if (ctx === 0 && !st.get('ours')?.error && st.get('ort') && !st.get('ort').error) {
        const a = st.get('ours').output,
          b = st.get('ort').output;
        let worst = 0;
        for (let i = 0; i < a.length; i++)
          worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1e-3 + 1e-3 * Math.abs(b[i])));
        row.agreesWithOrt = worst <= 1;
      }
      result.rows.push(row);
      if (ort) await ort.dispose();
      cache.dispose();
    }
    layer.dispose();
  }
  result.bandwidth.push(bandwidthProbe());
} catch (e) {
  result.error = String(e?.message ?? e).split('\n')[0];
}
process.stdout.write('\n' + JSON.stringify(result) + '\n');
process.exit(0);
