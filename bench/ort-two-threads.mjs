// onnxruntime-web with 2 threads, in its own process (run.mjs starts it): its thread count is fixed
// per process, so this process times it interleaved with our 2-thread prepared forward, and the
// ratio within the process is what the table shows.
//
//   node bench/ort-two-threads.mjs --shapes=8x64x2,… [--quick]     prints one JSON line
import { restartWithRelaxedSimd } from './relaxed.mjs';
import { SHAPES, raceFor, repsFor, shapeKey, warmFor } from './plan.mjs';
import { makeProblem } from './util.mjs';
import { measureInterleaved, pickVariant } from './measure.mjs';
import { loadEngine, createInstance, prepared } from './engine.mjs';
import { answer } from './child-process.mjs';

restartWithRelaxedSimd();

const res = { shapes: {} };
try {
  const { loadOrt, prepareOrt } = await import('./ort-peer.mjs');
  res.ort = await loadOrt(2);
  const eng = await loadEngine();
  const inst2 = eng.error ? eng : await createInstance(eng.createAttention, 2);
  if (inst2.error) res.engineError = inst2.error;
  for (const s of SHAPES) {
    const p = makeProblem(...s);
    const impls = [];
    const disposers = [];
    let waErr = inst2.error;
    if (!waErr) {
      const w = prepared(inst2.attn, p);
      if (w.error) waErr = w.error;
      else {
        impls.push({ key: 'wa-prepared-2', run: w.run });
        disposers.push(() => w.dispose());
      }
    }
    const o = await prepareOrt(p);
    disposers.push(o.dispose);
    let ortVariant = null,
      ortErr = null;
    try {
      const pick = await pickVariant(o.variants, p.query, raceFor(s[0]));
      ortVariant = pick;
      impls.push({ key: 'ort-2', run: o.variants[pick.name] });
    } catch (e) {
      ortErr = String(e.message);
    }
    const st = await measureInterleaved(impls, p.query, { reps: repsFor(s[0]), warm: warmFor(s[0]) });
    const shapeRes = {};
    for (const [k, v] of st)
      shapeRes[k] = v.error ? { error: v.error } : { median: v.median, runs: v.runs, calls: v.calls };
    if (waErr) shapeRes['wa-prepared-2'] = { error: waErr };
    if (ortErr) shapeRes['ort-2'] = { error: ortErr };
    if (ortVariant) shapeRes['ort-2'].variant = ortVariant;
    res.shapes[shapeKey(s)] = shapeRes;
    for (const d of disposers) await d();
  }
} catch (e) {
  res.error = String(e?.message ?? e).split('\n')[0];
}
answer(res);
process.exit(0);
