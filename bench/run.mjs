#!/usr/bin/env node
// npm run bench: wasm-attention's multi-head self-attention forward (Float32Array in → out) against
// a naive JavaScript implementation, TensorFlow.js (tfjs-backend-wasm) and onnxruntime-web, in one
// process, interleaved per repetition; plus a SIMD128 peak probe, the first-call time and the peak
// WebAssembly memory of a 16384-token forward (both in fresh child processes).
// This file runs the measurements in order; what it measures is plan.mjs's, the child processes
// are their own files, and the printed report is report.mjs's (its targets targets.mjs's).
//
// Our rows: the SIMD build (mul+add), and the relaxed-SIMD build (fused multiply-add) at 1 and 2
// threads beside it, each with its own peak probe (peak.wat, peak-relaxed.wat). Node 20 needs a V8
// flag for relaxed SIMD: run.mjs restarts itself with it (bench/relaxed.mjs).
//
// Then the decode table (bench/decode.mjs, one child process per thread count): one new token
// against a KV cache, and a prefill, against onnxruntime-web's GroupQueryAttention. Last, the model
// rows (bench/model.mjs): whole models, prefill and decode tokens/s against onnxruntime-web.
//
//   node bench/run.mjs [--quick] [--shapes=8x64x2,256x768x12] [--skip=naive,tfjs,ort,ort2,firstcall,memory,decode,model,long]
//                      [--threads 1,2,4,8,16] [--no-verify-big] [--json=bench/results.json]
// --threads (threads.mjs): our prepared and relaxed builds, the decode and the model rows at each
// count (counts beyond the cores run too, and say so); the scaling table gives each against 1 thread.
//   BENCH_ENGINE=/path/to/index.mjs overrides the engine (default: dist/index.mjs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { restartWithRelaxedSimd } = await import('./relaxed.mjs');
restartWithRelaxedSimd();

const {
  QUICK,
  SKIP,
  VERIFY_BIG,
  JSON_OUT,
  SHAPES,
  IMPLS,
  NAIVE_MAX_TOKENS,
  WEIGHTS_SHAPE,
  shapeKey,
  shapeLabel,
  repsFor,
  warmFor,
  raceFor,
  THREADS,
  THREAD_PLAN,
  CORES,
} = await import('./plan.mjs');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const { installPeers } = await import('./install-peers.mjs');
const depsError = installPeers();

// local modules (no third-party imports at module level)
const { makeProblem, mhaFlops, errorVsTolerance, median, cpuSnapshot, otherLoad } = await import('./util.mjs');
const { measureInterleaved, pickVariant } = await import('./measure.mjs');
const { loadEngine, createInstance, oneShot, prepared, enginePath } = await import('./engine.mjs');
const { naiveMha } = await import('./naive.mjs');
const { runChild } = await import('./child-process.mjs');
const { report } = await import('./report.mjs');

const T0 = performance.now();
const results = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
  quick: QUICK,
  notes: [],
  shapes: {},
};
const notes = results.notes;
results.loadAverageAtStart = os.loadavg();
if (depsError) notes.push(depsError);

// peak probes: mul+add (peak.wat) and its relaxed_madd twin (peak-relaxed.wat), 1 and 2 threads at the
// start; each also runs as one more "implementation" in every repetition of every shape (the relaxed
// one on 1 thread only: the relaxed build's yardstick).
log('bench: peak probe …');
async function peakProbe(wat, interleavedThreads) {
  try {
    const { assemblePeak, peakOneThread, peakThreads, createPeakProbe } = await import('./peak.mjs');
    const bytes = assemblePeak(wat);
    const p1 = await peakOneThread(bytes, { reps: QUICK ? 5 : 9 });
    const p2 = await peakThreads(bytes, 2, { reps: QUICK ? 3 : 7 });
    const start = { oneThread: p1.gflops, twoThreads: p2.gflops, oneThreadRuns: p1.runs, twoThreadRuns: p2.runs };
    // Every other count of --threads, at once on that many workers (capped by nothing: shared cores show).
    start.byThreads = { 1: p1.gflops, 2: p2.gflops };
    for (const t of THREADS.filter((n) => n > 2))
      start.byThreads[t] = (await peakThreads(bytes, t, { reps: QUICK ? 3 : 5 })).gflops;
    return { result: { start }, probe: await createPeakProbe(bytes, { targetMs: 20, nThreads: interleavedThreads }) };
  } catch (e) {
    const error = String(e?.message ?? e).split('\n')[0];
    notes.push(`peak probe ${wat} failed: ${error}`);
    return { result: { error }, probe: null };
  }
}
const { result: peakResult, probe } = await peakProbe('peak.wat', 2);
const { result: peakRelaxedResult, probe: probeRelaxed } = await peakProbe('peak-relaxed.wat', 0);
results.peak = peakResult;
results.peakRelaxed = peakRelaxedResult;

// wasm-attention
log('bench: loading wasm-attention from', path.relative(process.cwd(), enginePath) || enginePath);
const eng = await loadEngine();
// The mul+add build at every thread count (1 and 2 always: the peers' counts).
const instPrepared = {};
for (const t of new Set([1, 2, ...THREADS]))
  instPrepared[t] = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, t);
const inst1 = instPrepared[1];
const inst2 = instPrepared[2];
// The scalar build, what engines without WebAssembly SIMD get: its cost against the SIMD build.
const instScalar = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 1, { simd: false });
const instScalar2 = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 2, { simd: false });
const instRelaxed = {};
for (const t of THREADS)
  instRelaxed[t] = eng.error
    ? { error: eng.error }
    : await createInstance(eng.createAttention, t, { relaxedSimd: true });
results.threads = { counts: THREADS, cores: CORES, plan: THREAD_PLAN };
for (const { note } of THREAD_PLAN) if (note) notes.push(note);
results.engine = {
  path: enginePath,
  info: inst1.info ?? null,
  info2: inst2.info ?? null,
  error1: inst1.error ?? null,
  error2: inst2.error ?? null,
  relaxed: instRelaxed[1].info ?? instRelaxed[1].error,
};

// TensorFlow.js
let tfjs = null,
  tfjsMt = null,
  tfjsErr = null,
  tfjsMtErr = null;
if (SKIP.has('tfjs')) tfjsErr = tfjsMtErr = 'skipped (--skip=tfjs)';
else if (depsError) tfjsErr = tfjsMtErr = depsError;
else {
  try {
    tfjs = await import('./tfjs-peer.mjs');
    results.tfjs = await tfjs.loadTfjs();
    try {
      results.tfjsThreaded = await tfjs.loadTfjsThreaded(2);
      tfjsMt = true;
    } catch (e) {
      tfjsMtErr = String(e?.message ?? e).split('\n')[0];
    }
  } catch (e) {
    tfjsErr = tfjsMtErr = String(e?.message ?? e).split('\n')[0];
    tfjs = null;
  }
}
// onnxruntime-web (1 thread here; 2 threads in a child process)
let ort = null,
  ortErr = null;
if (SKIP.has('ort')) ortErr = 'skipped (--skip=ort)';
else if (depsError) ortErr = depsError;
else {
  try {
    ort = await import('./ort-peer.mjs');
    results.ort = await ort.loadOrt(1);
  } catch (e) {
    ortErr = String(e?.message ?? e).split('\n')[0];
    ort = null;
  }
}

const cpuAtStart = cpuSnapshot();
for (const s of SHAPES) {
  const [n, d, h] = s;
  const key = shapeKey(s);
  const tShape = performance.now();
  const cpuShape = cpuSnapshot();
  const p = makeProblem(n, d, h);
  const impls = [];
  const rowErr = {};
  const extra = {};
  const disposers = [];
  const addEngine = (k, inst, make, needWeights = false) => {
    if (inst.error) {
      rowErr[k] = inst.error;
      return;
    }
    const w = make(inst.attn, p, needWeights);
    if (w.error) {
      rowErr[k] = w.error;
      return;
    }
    impls.push({ key: k, run: w.run });
    disposers.push(() => w.dispose());
  };
  addEngine('wa-oneshot-1', inst1, oneShot);
  for (const t of THREADS) addEngine(`wa-prepared-${t}`, instPrepared[t], prepared);
  for (const t of THREADS) addEngine(`wa-relaxed-${t}`, instRelaxed[t], prepared);
  if (key === WEIGHTS_SHAPE) addEngine('wa-prepared-1-w', inst1, prepared, true);
  addEngine('wa-scalar-1', instScalar, prepared);
  addEngine('wa-scalar-2', instScalar2, prepared);
  if (SKIP.has('naive')) rowErr.naive = 'skipped (--skip=naive)';
  else if (n > NAIVE_MAX_TOKENS) rowErr.naive = `not timed above ${NAIVE_MAX_TOKENS} tokens`;
  else impls.push({ key: 'naive', run: (x) => naiveMha({ ...p, query: x, embedDim: d, numHeads: h }), warm: 2 });
  // tfjs
  const tfjsBackends = [
    ['tfjs-1', 'wasm', tfjs && !tfjsErr, tfjsErr],
    ['tfjs-2', 'wasm-mt', tfjs && tfjsMt, tfjsMtErr],
  ];
  for (const [k, backend, ok, err] of tfjsBackends) {
    if (!ok) {
      rowErr[k] = err;
      continue;
    }
    try {
      const prep = await tfjs.prepareTfjs(backend, p);
      disposers.push(prep.dispose);
      const pick = await pickVariant(prep.variants, p.query, { activate: prep.activate, ...raceFor(n) });
      extra[k] = { variant: pick.name, variantTimes: pick.times };
      impls.push({ key: k, run: prep.variants[pick.name], activate: prep.activate });
    } catch (e) {
      rowErr[k] = String(e?.message ?? e).split('\n')[0];
    }
  }
  // onnxruntime-web, 1 thread
  if (!ort) rowErr['ort-1'] = ortErr;
  else {
    try {
      const prep = await ort.prepareOrt(p);
      disposers.push(prep.dispose);
      const pick = await pickVariant(prep.variants, p.query, raceFor(n));
      extra['ort-1'] = { variant: pick.name, variantTimes: pick.times, modelErrors: prep.errors };
      impls.push({ key: 'ort-1', run: prep.variants[pick.name] });
    } catch (e) {
      rowErr['ort-1'] = String(e?.message ?? e).split('\n')[0];
    }
  }

  if (probe) {
    impls.push({ key: 'peak-1', run: probe.run1, warm: 1 });
    impls.push({ key: 'peak-2', run: probe.run2, warm: 1 });
  }
  if (probeRelaxed) impls.push({ key: 'peak-r1', run: probeRelaxed.run1, warm: 1 });
  const st = await measureInterleaved(impls, p.query, { reps: repsFor(n), warm: warmFor(n) });

  // reference for the correctness check: the naive output (float64 sums) when it ran, else one naive call
  let ref = st.get('naive')?.output ?? null;
  if (!ref && VERIFY_BIG && !SKIP.has('naive')) ref = naiveMha({ ...p, embedDim: d, numHeads: h });
  const shapeRes = { n, d, h, flops: mhaFlops(n, d), reps: repsFor(n), impls: {} };
  for (const [k, f, name] of [
    ['peak-1', probe?.flops1, 'peak1'],
    ['peak-2', probe?.flops2, 'peak2'],
    ['peak-r1', probeRelaxed?.flops1, 'peakRelaxed1'],
  ]) {
    const v = st.get(k);
    if (v && !v.error) shapeRes[name] = { gflops: f / v.median / 1e6, runs: v.runs.map((t) => f / t / 1e6) };
  }
  for (const im of IMPLS) {
    const v = st.get(im.key);
    if (v && !v.error) {
      const err = ref && im.key !== 'naive' ? errorVsTolerance(v.output, ref) : null;
      shapeRes.impls[im.key] = {
        median: v.median,
        runs: v.runs,
        callsPerRun: v.calls,
        firstCallMs: v.first,
        errVsTol: err,
        ...extra[im.key],
      };
    } else if (v?.error || rowErr[im.key]) {
      shapeRes.impls[im.key] = { error: v?.error ?? rowErr[im.key] };
    }
  }
  shapeRes.cpu = otherLoad(cpuShape, cpuSnapshot());
  results.shapes[key] = shapeRes;
  for (const dsp of disposers) {
    try {
      await dsp();
    } catch {
      /* ignore */
    }
  }
  log(`bench: ${shapeLabel(s)} done in ${((performance.now() - tShape) / 1000).toFixed(1)} s`);
}

results.cpuDuringShapes = otherLoad(cpuAtStart, cpuSnapshot());
if (probe) {
  await probe.close();
  const all1 = Object.values(results.shapes)
    .map((r) => r.peak1?.gflops)
    .filter(Number.isFinite);
  const all2 = Object.values(results.shapes)
    .map((r) => r.peak2?.gflops)
    .filter(Number.isFinite);
  results.peak.interleaved = {
    oneThread: all1.length ? median(all1) : null,
    twoThreads: all2.length ? median(all2) : null,
  };
}
if (probeRelaxed) {
  await probeRelaxed.close();
  const all = Object.values(results.shapes)
    .map((r) => r.peakRelaxed1?.gflops)
    .filter(Number.isFinite);
  results.peakRelaxed.interleaved = { oneThread: all.length ? median(all) : null };
}

// ---------------------------------------------------------------- child processes
if (!SKIP.has('ort2') && ort) {
  log('bench: onnxruntime-web with 2 threads (separate process) …');
  const r = await runChild(
    [
      path.join(here, 'ort-two-threads.mjs'),
      `--shapes=${SHAPES.map(shapeKey).join(',')}`,
      ...(QUICK ? ['--quick'] : []),
    ],
    10 * 60e3,
    process.execArgv,
  );
  results.ort2Child = r;
  for (const s of SHAPES) {
    const key = shapeKey(s);
    const c = r.shapes?.[key];
    const o = c?.['ort-2'];
    if (o && !o.error) {
      const wa = c['wa-prepared-2'];
      results.shapes[key].impls['ort-2'] = {
        median: o.median,
        runs: o.runs,
        callsPerRun: o.calls,
        variant: o.variant?.name,
        separateProcess: true,
        oursTwoThreadsSameProcess: wa?.median ?? null,
      };
    } else {
      results.shapes[key].impls['ort-2'] = { error: o?.error ?? r.error ?? 'no result' };
    }
  }
} else {
  for (const s of SHAPES)
    results.shapes[shapeKey(s)].impls['ort-2'] = { error: ort ? 'skipped (--skip=ort2)' : ortErr };
}

if (!SKIP.has('firstcall')) {
  log('bench: first call in fresh processes …');
  results.firstCall = {
    prepared: await runChild([path.join(here, 'fresh-process.mjs'), 'firstcall', 'prepared'], 3 * 60e3),
    oneshot: await runChild([path.join(here, 'fresh-process.mjs'), 'firstcall', 'oneshot'], 3 * 60e3),
  };
}
if (!SKIP.has('memory') && !QUICK) {
  log('bench: 16384-token forward for peak memory (fresh process) …');
  results.memory = await runChild([path.join(here, 'fresh-process.mjs'), 'memory'], 8 * 60e3);
}

if (!SKIP.has('decode')) {
  results.decode = {};
  for (const threads of THREADS) {
    log(`bench: decode and prefill with a KV cache, ${threads} thread(s) (separate process) …`);
    results.decode[threads] = await runChild(
      [path.join(here, 'decode.mjs'), `--threads=${threads}`, ...(QUICK ? ['--quick'] : [])],
      10 * 60e3,
    );
  }
}

if (!SKIP.has('long')) {
  const { runLongRows } = await import('./long.mjs');
  results.long = await runLongRows({ threads: THREADS, quick: QUICK });
}

if (!SKIP.has('model')) {
  const { runModelRows } = await import('./model.mjs');
  results.model = await runModelRows({ quick: QUICK, threads: THREADS });
}

results.loadAverageAtEnd = os.loadavg();
const out = report(results, {
  shapes: SHAPES,
  errors: {
    engine1: inst1.error,
    engine2: inst2.error,
    relaxed: instRelaxed[1].error,
    relaxedInfo: instRelaxed[1].info,
    tfjs: tfjsErr,
    tfjsMt: tfjsMtErr,
    ort: ortErr,
  },
});
if (results.long) {
  const { longReport } = await import('./long.mjs');
  out.push(...longReport(results.long));
}
if (results.model) {
  const { modelReport } = await import('./model-report.mjs');
  out.push(...modelReport(results.model));
}
if (!SKIP.has('reduced')) out.push(...(await (await import('./reduced.mjs')).reducedSection(QUICK, results)));
results.wallSeconds = (performance.now() - T0) / 1000;
out.push('');
out.push(
  `total ${results.wallSeconds.toFixed(0)} s; raw numbers in ${path.relative(process.cwd(), JSON_OUT) || JSON_OUT}`,
);
console.log(out.join('\n'));
fs.writeFileSync(JSON_OUT, JSON.stringify(results, null, 1) + '\n');
if (tfjsMt && results.tfjsThreaded?.cleanup) results.tfjsThreaded.cleanup();
process.exit(0);
