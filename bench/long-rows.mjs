// Child process of bench/long.mjs, one thread count (onnxruntime-web fixes its count per process):
// self-attention over 2,048, 4,096 and 8,192 tokens (512 wide, 8 heads), without a mask, causal, and
// causal with a sliding window of 1,024; our prepared layer (mul+add and relaxed builds) against
// onnxruntime-web, interleaved, with both 1-thread peak probes before and after.
//
//   node bench/long-rows.mjs --threads=N [--quick] [--lengths=2048,4096]     prints one JSON line
import { answer } from './child-process.mjs';
import { createInstance, loadEngine } from './engine.mjs';
import { measureInterleaved } from './measure.mjs';
import { assemblePeak, peakOneThread } from './peak.mjs';
import { makeProblem, median, randArray, rng } from './util.mjs';

const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const threads = Number(opt('threads') ?? 1);
const QUICK = argv.includes('--quick');
const WIDTH = 512;
const HEADS = 8;
const WINDOW = 1024;
const LENGTHS = opt('lengths')?.split(',').map(Number) ?? (QUICK ? [2048] : [2048, 4096, 8192]);
const MASKS = ['none', 'causal', 'window'];
// onnxruntime-web's Attention and GroupQueryAttention hold every head's score matrix at once: past
// this many bytes of it (8,192 tokens: 2 GiB) the row is not run for it.
const ORT_MAX_SCORE_BYTES = 2 ** 30;

const repsFor = (n) => (QUICK ? 2 : n <= 2048 ? 5 : 3);

/** Query-key pairs a mask leaves for n tokens (the attention's share of the work). */
function pairs(n, mask) {
  if (mask === 'none') return n * n;
  if (mask === 'causal') return (n * (n + 1)) / 2;
  let p = 0;
  for (let i = 0; i < n; i++) p += Math.min(i + 1, WINDOW);
  return p;
}
/** FLOPs of one forward: projections 4·2·n·d², attention 2·2·d per query-key pair left. */
const longFlops = (n, mask) => 8 * n * WIDTH * WIDTH + 4 * WIDTH * pairs(n, mask);

/** q/k/v/o weights without biases, as GroupQueryAttention's model takes them. */
function gqaProblem(n) {
  const rand = rng(n * 13 + 5);
  const ws = 1 / Math.sqrt(WIDTH);
  const hd = WIDTH / HEADS;
  return {
    d: WIDTH,
    h: HEADS,
    kvHeads: HEADS,
    headDim: hd,
    wq: randArray(WIDTH * WIDTH, ws, rand),
    wk: randArray(WIDTH * WIDTH, ws, rand),
    wv: randArray(WIDTH * WIDTH, ws, rand),
    wo: randArray(WIDTH * WIDTH, ws, rand),
  };
}

function ourLayer(attn, mask, mha, gqa) {
  if (mask === 'none')
    return attn.createMultiHeadAttention({
      embedDim: WIDTH,
      numHeads: HEADS,
      inProjWeight: mha.inProjWeight,
      inProjBias: mha.inProjBias,
      outProjWeight: mha.outProjWeight,
      outProjBias: mha.outProjBias,
    });
  return attn.createMultiHeadAttention({
    embedDim: WIDTH,
    numHeads: HEADS,
    qProjWeight: gqa.wq,
    kProjWeight: gqa.wk,
    vProjWeight: gqa.wv,
    outProjWeight: gqa.wo,
    ...(mask === 'window' ? { slidingWindow: WINDOW } : {}),
  });
}

async function ortRun(ort, mask, n, mha, gqa) {
  if (HEADS * n * n * 4 > ORT_MAX_SCORE_BYTES)
    return {
      error: `not run: its ${HEADS} score matrices of ${n}×${n} would need ${(HEADS * n * n * 4) / 2 ** 30} GiB`,
    };
  if (mask === 'none') {
    const prep = await ort.prepareOrt(mha);
    const run = prep.variants.contrib ?? prep.variants.standard;
    if (!run) return { error: Object.values(prep.errors).join('; ') || 'no model ran', dispose: prep.dispose };
    return { run, dispose: prep.dispose };
  }
  const none = new Float32Array(0);
  const options = mask === 'window' ? { localWindow: WINDOW } : {};
  const prep = await ort.prepareOrtDecode(gqa, n, 0, none, none, options);
  return { run: prep.run, dispose: prep.dispose };
}

const result = { threads, width: WIDTH, heads: HEADS, window: WINDOW, rows: [] };
try {
  const peakBytes = { mulAdd: assemblePeak('peak.wat'), relaxed: assemblePeak('peak-relaxed.wat') };
  const probe = async () => ({
    mulAdd: (await peakOneThread(peakBytes.mulAdd, { reps: 5 })).gflops,
    relaxed: (await peakOneThread(peakBytes.relaxed, { reps: 5 })).gflops,
  });
  const before = await probe();
  const eng = await loadEngine();
  if (eng.error) throw new Error(eng.error);
  const ours = {
    mulAdd: await createInstance(eng.createAttention, threads),
    relaxed: await createInstance(eng.createAttention, threads, { relaxedSimd: true }),
  };
  let ort = null;
  try {
    ort = await import('./ort-peer.mjs');
    result.ort = await ort.loadOrt(threads);
  } catch (e) {
    result.ortError = String(e?.message ?? e).split('\n')[0];
    ort = null;
  }
  for (const n of LENGTHS) {
    const mha = makeProblem(n, WIDTH, HEADS);
    const gqa = gqaProblem(n);
    for (const mask of MASKS) {
      const row = { n, mask, flops: longFlops(n, mask) };
      const impls = [];
      const layers = [];
      for (const [key, inst] of Object.entries(ours)) {
        if (inst.error) {
          row[key] = { error: inst.error };
          continue;
        }
        const layer = ourLayer(inst.attn, mask, mha, gqa);
        layers.push(layer);
        const isCausal = mask !== 'none';
        impls.push({ key, run: (x) => layer.forward({ query: x, isCausal, needWeights: false }).output });
      }
      let peer = null;
      if (!ort) row.ort = { error: result.ortError ?? 'skipped' };
      else {
        try {
          peer = await ortRun(ort, mask, n, mha, gqa);
          if (peer.run) impls.push({ key: 'ort', run: peer.run });
          else row.ort = { error: peer.error };
        } catch (e) {
          row.ort = { error: String(e?.message ?? e).split('\n')[0] };
        }
      }
      const x = mask === 'none' ? mha.query : randArray(n * WIDTH, 1, rng(n));
      const st = await measureInterleaved(impls, x, { reps: repsFor(n), warm: 1 });
      for (const [k, v] of st) row[k] = v.error ? { error: v.error } : { median: v.median, runs: v.runs };
      // The same computation on both sides: the outputs must agree (as decode.mjs checks its prefill).
      const a = st.get('mulAdd'),
        b = st.get('ort');
      if (a && !a.error && b && !b.error) {
        let worst = 0;
        for (let i = 0; i < a.output.length; i++)
          worst = Math.max(worst, Math.abs(a.output[i] - b.output[i]) / (1e-3 + 1e-3 * Math.abs(b.output[i])));
        row.agreesWithOrt = worst <= 1;
      }
      result.rows.push(row);
      for (const layer of layers) layer.dispose();
      await peer?.dispose?.();
    }
  }
  const after = await probe();
  result.peak = {
    mulAdd: median([before.mulAdd, after.mulAdd]),
    relaxed: median([before.relaxed, after.relaxed]),
    before,
    after,
  };
} catch (e) {
  result.error = String(e?.message ?? e).split('\n')[0];
}
answer(result);
process.exit(0);
