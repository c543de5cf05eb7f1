#!/usr/bin/env node
// npm run bench: wasm-attention's multi-head self-attention forward (Float32Array in → out) against
// a naive JavaScript implementation, TensorFlow.js (tfjs-backend-wasm) and onnxruntime-web, in one
// process, interleaved per repetition; plus a SIMD128 peak probe, the first-call time and the peak
// WebAssembly memory of a 16384-token forward (both in fresh child processes).
//
// Our rows: the SIMD build (mul+add), and the relaxed-SIMD build (fused multiply-add) at 1 and 2
// threads beside it, each with its own peak probe (peak.wat, peak-relaxed.wat). Node 20 needs a V8
// flag for relaxed SIMD: run.mjs restarts itself with it (bench/relaxed.mjs).
//
// Then the decode table (bench/decode.mjs, one child process per thread count): one new token
// against a KV cache, and a prefill, against onnxruntime-web's GroupQueryAttention.
//
//   node bench/run.mjs [--quick] [--shapes=8x64x2,256x768x12] [--skip=naive,tfjs,ort,ort2,firstcall,memory,decode]
//                      [--no-verify-big] [--json=bench/results.json]
//   BENCH_ENGINE=/path/to/index.mjs overrides the engine (default: dist/index.mjs).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { restartWithRelaxedSimd } = await import('./relaxed.mjs');
const { issue11Targets } = await import('./targets-11.mjs');
restartWithRelaxedSimd();

// ---------------------------------------------------------------- options
const argv = process.argv.slice(2);
const opt = (name) => {
  const a = argv.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (!a) return undefined;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : true;
};
const QUICK = !!opt('quick');
const CHILD = opt('child');
const SKIP = new Set(String(opt('skip') || '').split(',').filter(Boolean));
const VERIFY_BIG = !opt('no-verify-big') && !QUICK;
const JSON_OUT = path.resolve(typeof opt('json') === 'string' ? opt('json') : path.join(here, 'results.json'));

const ALL_SHAPES = [[8, 64, 2], [12, 48, 3], [4, 512, 8], [64, 256, 4], [96, 384, 6], [128, 512, 8], [256, 768, 12], [512, 768, 12], [1024, 512, 8]];
const shapeKey = ([n, d, h]) => `${n}x${d}x${h}`;
const shapeLabel = ([n, d, h]) => `${n}×${d}×${h}`;
let SHAPES = ALL_SHAPES;
if (typeof opt('shapes') === 'string') {
  SHAPES = opt('shapes').split(',').map((s) => s.split(/[x×]/).map(Number));
} else if (QUICK) {
  SHAPES = ALL_SHAPES.slice(0, 6);
}
const NAIVE_MAX_TOKENS = 256;            // naive JS is timed up to this many tokens
const WEIGHTS_SHAPE = '256x768x12';       // where needWeights: true is timed too
const repsFor = (n) => (QUICK ? 3 : n <= 128 ? 11 : n <= 256 ? 9 : 7);
const warmFor = (n) => (n >= 512 ? 2 : 3);                       // warm-up calls per implementation
const raceFor = (n) => ({ warm: n >= 512 ? 2 : 3, rounds: QUICK || n >= 512 ? 1 : 3 });   // variant races
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// ---------------------------------------------------------------- dependencies of bench/ itself
function ensureDeps() {
  const deps = Object.keys(JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8')).dependencies || {});
  const nm = path.join(here, 'node_modules');
  const marker = path.join(nm, '.package-lock.json');
  const lock = path.join(here, 'package-lock.json');
  const missing = deps.filter((d) => !fs.existsSync(path.join(nm, d, 'package.json')));
  const stale = fs.existsSync(lock) && fs.existsSync(marker) && fs.statSync(lock).mtimeMs > fs.statSync(marker).mtimeMs;
  if (!missing.length && !stale) return null;
  log(`bench: installing the benchmark's own dependencies in bench/ (${missing.length ? 'missing: ' + missing.join(', ') : 'lockfile changed'})`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd: here, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) return `npm install in bench/ failed (status ${r.status}${r.error ? ', ' + r.error.message : ''})`;
  return null;
}

const depsError = CHILD ? null : ensureDeps();

// local modules (no third-party imports at module level)
const { makeProblem, mhaFlops, errorVsTolerance, fmtMs, fmtNum, fmtRatio, fmtPct, fmtMiB, renderTable, median, cpuSnapshot, otherLoad } = await import('./util.mjs');
const { measureInterleaved, pickVariant } = await import('./measure.mjs');
const { loadEngine, createInstance, oneShot, prepared, enginePath } = await import('./engine.mjs');
const { naiveMha } = await import('./naive.mjs');

// ---------------------------------------------------------------- child: onnxruntime-web with 2 threads
if (CHILD === 'ort2') {
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
        if (w.error) waErr = w.error; else { impls.push({ key: 'wa-prepared-2', run: w.run }); disposers.push(() => w.dispose()); }
      }
      const o = await prepareOrt(p);
      disposers.push(o.dispose);
      let ortVariant = null, ortErr = null;
      try {
        const pick = await pickVariant(o.variants, p.query, raceFor(s[0]));
        ortVariant = pick;
        impls.push({ key: 'ort-2', run: o.variants[pick.name] });
      } catch (e) { ortErr = String(e.message); }
      const st = await measureInterleaved(impls, p.query, { reps: repsFor(s[0]), warm: warmFor(s[0]) });
      const shapeRes = {};
      for (const [k, v] of st) shapeRes[k] = v.error ? { error: v.error } : { median: v.median, runs: v.runs, calls: v.calls };
      if (waErr) shapeRes['wa-prepared-2'] = { error: waErr };
      if (ortErr) shapeRes['ort-2'] = { error: ortErr };
      if (ortVariant) shapeRes['ort-2'].variant = ortVariant;
      res.shapes[shapeKey(s)] = shapeRes;
      for (const d of disposers) await d();
    }
  } catch (e) {
    res.error = String(e?.message ?? e).split('\n')[0];
  }
  process.stdout.write('\n' + JSON.stringify(res) + '\n');
  process.exit(0);
}

// ---------------------------------------------------------------- helpers for child processes
function runChild(args, timeoutMs, flags = []) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...flags, ...args], { cwd: path.join(here, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').pop();
      let json = null;
      try { json = JSON.parse(last); } catch { /* no JSON */ }
      if (!json) {
        json = { error: signal === 'SIGKILL' ? `timed out after ${(timeoutMs / 1000).toFixed(0)} s`
          : `child exited with ${code ?? signal}: ${(stderr.trim().split('\n').pop() || '').slice(0, 200)}` };
      }
      json.wallMs = performance.now() - t0;
      resolve(json);
    });
  });
}

// ---------------------------------------------------------------- main
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
const inst1 = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 1);
const inst2 = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 2);
// The scalar build, what engines without WebAssembly SIMD get: its cost against the SIMD build.
const instScalar = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 1, { simd: false });
const instScalar2 = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, 2, { simd: false });
const instRelaxed = {};
for (const t of [1, 2]) instRelaxed[t] = eng.error ? { error: eng.error } : await createInstance(eng.createAttention, t, { relaxedSimd: true });
results.engine = { path: enginePath, info: inst1.info ?? null, info2: inst2.info ?? null, error1: inst1.error ?? null, error2: inst2.error ?? null,
  relaxed: instRelaxed[1].info ?? instRelaxed[1].error };

// TensorFlow.js
let tfjs = null, tfjsMt = null, tfjsErr = null, tfjsMtErr = null;
if (SKIP.has('tfjs')) tfjsErr = tfjsMtErr = 'skipped (--skip=tfjs)';
else if (depsError) tfjsErr = tfjsMtErr = depsError;
else {
  try {
    tfjs = await import('./tfjs-peer.mjs');
    results.tfjs = await tfjs.loadTfjs();
    try { results.tfjsThreaded = await tfjs.loadTfjsThreaded(2); tfjsMt = true; } catch (e) { tfjsMtErr = String(e?.message ?? e).split('\n')[0]; }
  } catch (e) { tfjsErr = tfjsMtErr = String(e?.message ?? e).split('\n')[0]; tfjs = null; }
}
// onnxruntime-web (1 thread here; 2 threads in a child process)
let ort = null, ortErr = null;
if (SKIP.has('ort')) ortErr = 'skipped (--skip=ort)';
else if (depsError) ortErr = depsError;
else {
  try { ort = await import('./ort-peer.mjs'); results.ort = await ort.loadOrt(1); } catch (e) { ortErr = String(e?.message ?? e).split('\n')[0]; ort = null; }
}

const IMPLS = [
  { key: 'wa-oneshot-1', name: 'wasm-attention one-shot', threads: 1, ours: true },
  { key: 'wa-prepared-1', name: 'wasm-attention prepared', threads: 1, ours: true },
  { key: 'wa-prepared-2', name: 'wasm-attention prepared', threads: 2, ours: true },
  { key: 'wa-relaxed-1', name: 'wasm-attention prepared, relaxed SIMD', threads: 1, ours: true, relaxed: true },
  { key: 'wa-relaxed-2', name: 'wasm-attention prepared, relaxed SIMD', threads: 2, ours: true, relaxed: true },
  { key: 'wa-prepared-1-w', name: 'wasm-attention prepared, needWeights', threads: 1, ours: true, extra: true },
  { key: 'wa-scalar-1', name: 'wasm-attention prepared, scalar build', threads: 1, ours: true, extra: true },
  { key: 'wa-scalar-2', name: 'wasm-attention prepared, scalar build', threads: 2, ours: true, extra: true },
  { key: 'naive', name: 'naive JavaScript', threads: 1 },
  { key: 'tfjs-1', name: 'tfjs-backend-wasm', threads: 1 },
  { key: 'tfjs-2', name: 'tfjs-backend-wasm', threads: 2 },
  { key: 'ort-1', name: 'onnxruntime-web', threads: 1 },
  { key: 'ort-2', name: 'onnxruntime-web †', threads: 2 },
];

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
    if (inst.error) { rowErr[k] = inst.error; return; }
    const w = make(inst.attn, p, needWeights);
    if (w.error) { rowErr[k] = w.error; return; }
    impls.push({ key: k, run: w.run });
    disposers.push(() => w.dispose());
  };
  addEngine('wa-oneshot-1', inst1, oneShot);
  addEngine('wa-prepared-1', inst1, prepared);
  addEngine('wa-prepared-2', inst2, prepared);
  addEngine('wa-relaxed-1', instRelaxed[1], prepared);
  addEngine('wa-relaxed-2', instRelaxed[2], prepared);
  if (key === WEIGHTS_SHAPE) addEngine('wa-prepared-1-w', inst1, prepared, true);
  addEngine('wa-scalar-1', instScalar, prepared);
  addEngine('wa-scalar-2', instScalar2, prepared);
  if (SKIP.has('naive')) rowErr.naive = 'skipped (--skip=naive)';
  else if (n > NAIVE_MAX_TOKENS) rowErr.naive = `not timed above ${NAIVE_MAX_TOKENS} tokens`;
  else impls.push({ key: 'naive', run: (x) => naiveMha({ ...p, query: x, embedDim: d, numHeads: h }), warm: 2 });
  // tfjs
  const tfjsBackends = [['tfjs-1', 'wasm', tfjs && !tfjsErr, tfjsErr], ['tfjs-2', 'wasm-mt', tfjs && tfjsMt, tfjsMtErr]];
  for (const [k, backend, ok, err] of tfjsBackends) {
    if (!ok) { rowErr[k] = err; continue; }
    try {
      const prep = await tfjs.prepareTfjs(backend, p);
      disposers.push(prep.dispose);
      const pick = await pickVariant(prep.variants, p.query, { activate: prep.activate, ...raceFor(n) });
      extra[k] = { variant: pick.name, variantTimes: pick.times };
      impls.push({ key: k, run: prep.variants[pick.name], activate: prep.activate });
    } catch (e) { rowErr[k] = String(e?.message ?? e).split('\n')[0]; }
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
    } catch (e) { rowErr['ort-1'] = String(e?.message ?? e).split('\n')[0]; }
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
  for (const [k, f, name] of [['peak-1', probe?.flops1, 'peak1'], ['peak-2', probe?.flops2, 'peak2'], ['peak-r1', probeRelaxed?.flops1, 'peakRelaxed1']]) {
    const v = st.get(k);
    if (v && !v.error) shapeRes[name] = { gflops: f / v.median / 1e6, runs: v.runs.map((t) => f / t / 1e6) };
  }
  for (const im of IMPLS) {
    const v = st.get(im.key);
    if (v && !v.error) {
      const err = ref && im.key !== 'naive' ? errorVsTolerance(v.output, ref) : null;
      shapeRes.impls[im.key] = { median: v.median, runs: v.runs, callsPerRun: v.calls, firstCallMs: v.first, errVsTol: err, ...extra[im.key] };
    } else if (v?.error || rowErr[im.key]) {
      shapeRes.impls[im.key] = { error: v?.error ?? rowErr[im.key] };
    }
  }
  shapeRes.cpu = otherLoad(cpuShape, cpuSnapshot());
  results.shapes[key] = shapeRes;
  for (const dsp of disposers) { try { await dsp(); } catch { /* ignore */ } }
  log(`bench: ${shapeLabel(s)} done in ${((performance.now() - tShape) / 1000).toFixed(1)} s`);
}

results.cpuDuringShapes = otherLoad(cpuAtStart, cpuSnapshot());
if (probe) {
  await probe.close();
  const all1 = Object.values(results.shapes).map((r) => r.peak1?.gflops).filter(Number.isFinite);
  const all2 = Object.values(results.shapes).map((r) => r.peak2?.gflops).filter(Number.isFinite);
  results.peak.interleaved = { oneThread: all1.length ? median(all1) : null, twoThreads: all2.length ? median(all2) : null };
}
if (probeRelaxed) {
  await probeRelaxed.close();
  const all = Object.values(results.shapes).map((r) => r.peakRelaxed1?.gflops).filter(Number.isFinite);
  results.peakRelaxed.interleaved = { oneThread: all.length ? median(all) : null };
}

// ---------------------------------------------------------------- child processes
if (!SKIP.has('ort2') && ort) {
  log('bench: onnxruntime-web with 2 threads (separate process) …');
  const r = await runChild([path.join(here, 'run.mjs'), '--child=ort2', `--shapes=${SHAPES.map(shapeKey).join(',')}`, ...(QUICK ? ['--quick'] : [])], 10 * 60e3,
    process.execArgv);
  results.ort2Child = r;
  for (const s of SHAPES) {
    const key = shapeKey(s);
    const c = r.shapes?.[key];
    const o = c?.['ort-2'];
    if (o && !o.error) {
      const wa = c['wa-prepared-2'];
      results.shapes[key].impls['ort-2'] = {
        median: o.median, runs: o.runs, callsPerRun: o.calls, variant: o.variant?.name,
        separateProcess: true, oursTwoThreadsSameProcess: wa?.median ?? null,
      };
    } else {
      results.shapes[key].impls['ort-2'] = { error: o?.error ?? r.error ?? 'no result' };
    }
  }
} else {
  for (const s of SHAPES) results.shapes[shapeKey(s)].impls['ort-2'] = { error: ort ? 'skipped (--skip=ort2)' : ortErr };
}

if (!SKIP.has('firstcall')) {
  log('bench: first call in fresh processes …');
  results.firstCall = {
    prepared: await runChild([path.join(here, 'child.mjs'), 'firstcall', 'prepared'], 3 * 60e3),
    oneshot: await runChild([path.join(here, 'child.mjs'), 'firstcall', 'oneshot'], 3 * 60e3),
  };
}
if (!SKIP.has('memory') && !QUICK) {
  log('bench: 16384-token forward for peak memory (fresh process) …');
  results.memory = await runChild([path.join(here, 'child.mjs'), 'memory'], 8 * 60e3);
}

if (!SKIP.has('decode')) {
  results.decode = {};
  for (const threads of [1, 2]) {
    log(`bench: decode and prefill with a KV cache, ${threads} thread(s) (separate process) …`);
    results.decode[threads] = await runChild([path.join(here, 'decode.mjs'), `--threads=${threads}`, ...(QUICK ? ['--quick'] : [])], 10 * 60e3);
  }
}

// ---------------------------------------------------------------- report
const rows = [];
for (const s of SHAPES) {
  const key = shapeKey(s);
  const R = results.shapes[key];
  const I = R.impls;
  const ok = (k) => I[k] && !I[k].error && Number.isFinite(I[k].median);
  const ours1Key = ['wa-oneshot-1', 'wa-prepared-1'].filter(ok).sort((a, b) => I[a].median - I[b].median)[0];
  const ours1 = ours1Key ? I[ours1Key].median : null;
  const ours2 = ok('wa-prepared-2') ? I['wa-prepared-2'].median : null;
  // % of peak: the probe that ran interleaved with this shape (same conditions), else the one at the start
  // 2-thread rows: twice the 1-thread peak (two cores' worth). The 2-thread probe itself is shown,
  // but it swings far more on this VM (one core often busy or slow to wake) to serve as the yardstick.
  const peak1 = R.peak1?.gflops ?? results.peak.start?.oneThread;
  const peak2 = peak1 ? 2 * peak1 : null;
  const peakRelaxed1 = R.peakRelaxed1?.gflops ?? results.peakRelaxed?.start?.oneThread;
  const peers1 = ['naive', 'tfjs-1', 'ort-1'].filter(ok);
  const fastestPeer1 = peers1.sort((a, b) => I[a].median - I[b].median)[0] ?? null;
  const peers2 = ['tfjs-2', 'ort-2'].filter(ok);
  const fastestPeer2 = peers2.sort((a, b) => I[a].median - I[b].median)[0] ?? null;
  R.summary = {
    ours1Key, ours1, ours2,
    ours1GFlops: ours1 ? R.flops / ours1 / 1e6 : null,
    ours1PctPeak: ours1 && peak1 ? 100 * R.flops / ours1 / 1e6 / peak1 : null,
    ours2PctPeak: ours2 && peak2 ? 100 * R.flops / ours2 / 1e6 / peak2 : null,
    twoOverOne: ours1 && ours2 ? ours1 / ours2 : null,
    fastestPeer1, speedupOverFastestPeer1: ours1 && fastestPeer1 ? I[fastestPeer1].median / ours1 : null,
    fastestPeer2, speedupOverFastestPeer2: ours2 && fastestPeer2 ? I[fastestPeer2].median / ours2 : null,
  };
  let first = true;
  for (const im of IMPLS) {
    const v = I[im.key];
    if (!v) continue;
    const label = first ? shapeLabel(s) : '';
    first = false;
    if (v.error) {
      rows.push([label, im.name, String(im.threads), 'n/a', 'n/a', 'n/a', '', '', v.error]);
      continue;
    }
    const gf = R.flops / v.median / 1e6;
    const pk = (im.relaxed ? peakRelaxed1 : peak1) * im.threads || null;
    let speed = '';
    const mulAdd = I[`wa-prepared-${im.threads}`];
    if (im.relaxed) speed = ok(`wa-prepared-${im.threads}`) ? `÷ mul+add ${fmtRatio(mulAdd.median / v.median)}` : '';
    else if (im.key === ours1Key) speed = 'best 1t';
    else if (im.key === 'wa-prepared-2') speed = ours1 ? `1t÷2t ${fmtRatio(ours1 / v.median)}` : '';
    else if (im.key === 'wa-prepared-1-w' || im.key.startsWith('wa-scalar-')) speed = ok(`wa-prepared-${im.threads}`) ? `cost ${fmtRatio(v.median / mulAdd.median)}` : '';
    else if (im.key === 'ort-2') speed = v.oursTwoThreadsSameProcess ? fmtRatio(v.median / v.oursTwoThreadsSameProcess) : 'n/a';
    else if (im.threads === 2 && !im.ours) speed = ours2 ? fmtRatio(v.median / ours2) : 'n/a';
    else if (!im.ours) speed = ours1 ? fmtRatio(v.median / ours1) : 'n/a';
    let check = '';
    if (v.errVsTol != null) {
      const limit = im.ours ? 1 : 10;   // contract tolerance for us; 10× looser for peers
      check = v.errVsTol <= limit ? 'ok' : `ERR ${v.errVsTol.toExponential(1)}`;
    }
    const note = v.variant ? `via ${v.variant}` : '';
    rows.push([label, im.name, String(im.threads), fmtMs(v.median), fmtNum(gf), pk ? fmtPct(100 * gf / pk) : 'n/a', speed, check, note]);
  }
  if (R.peak1 || R.peak2) {
    rows.push(['', 'peak probe (interleaved)', '1 / 2', '', `${fmtNum(R.peak1?.gflops)} / ${fmtNum(R.peak2?.gflops)}`,
      R.peak1 && R.peak2 ? `100 / ${fmtNum(100 * R.peak2.gflops / (2 * R.peak1.gflops), 0)}%` : '', '', '', '']);
  }
  if (R.peakRelaxed1) rows.push(['', 'peak probe, relaxed_madd (interleaved)', '1', '', fmtNum(R.peakRelaxed1.gflops), '100%', '', '', '']);
  rows.push(null);
}
rows.pop();

results.loadAverageAtEnd = os.loadavg();
const out = [];
out.push('');
{
  // CPU used by other processes (and stolen by the hypervisor) while the shapes were timed
  const c = results.cpuDuringShapes;
  const worst = Object.entries(results.shapes).map(([k, r]) => [k, r.cpu?.otherCores ?? 0]).sort((a, b) => b[1] - a[1])[0];
  if (c && (c.otherCores > 0.15 || c.stealCores > 0.15 || (worst && worst[1] > 0.3))) {
    out.push(`WARNING: other processes used ${c.otherCores.toFixed(2)} of ${os.cpus().length} cores on average while the shapes were timed`
      + ` (most during ${worst[0]}: ${worst[1].toFixed(2)}; hypervisor steal ${c.stealCores.toFixed(2)}):`);
    out.push('         absolute figures and above all thread scaling are unreliable; ratios within a repetition less so.');
  } else if (!c && results.loadAverageAtStart[0] > 0.8) {
    out.push(`WARNING: load average ${results.loadAverageAtStart[0].toFixed(1)} at the start: the machine was busy; figures are unreliable.`);
  }
}
out.push(`wasm-attention bench — Node ${process.version}, ${results.cpu}${QUICK ? '  (QUICK: 3 reps, not for the record)' : ''}`);
out.push(`engine: ${results.engine.info ? JSON.stringify(results.engine.info) : 'n/a (' + inst1.error + ')'}`
  + `${inst2.error ? `; 2 threads: n/a (${inst2.error})` : `; with threads: 2 → ${JSON.stringify(results.engine.info2)}`}`
  + `; relaxed SIMD: ${instRelaxed[1].error ? `n/a (${instRelaxed[1].error})` : JSON.stringify(instRelaxed[1].info)}`);
out.push(`peers: ${results.tfjs ? `@tensorflow/tfjs-backend-wasm ${results.tfjs.version}` : `tfjs n/a (${tfjsErr})`}${tfjsMtErr && !tfjsErr ? ` [2 threads n/a: ${tfjsMtErr}]` : ''}; `
  + `${results.ort ? `onnxruntime-web ${results.ort.version}` : `onnxruntime-web n/a (${ortErr})`}`);
out.push(results.peak.error ? `peak probe: n/a (${results.peak.error})`
  : `peak probe (12 independent f32x4 mul+add chains, register-resident), GFLOP/s: 1 thread ${fmtNum(results.peak.start.oneThread)}, `
    + `2 threads ${fmtNum(results.peak.start.twoThreads)} at the start; interleaved with the shapes (median): `
    + `${fmtNum(results.peak.interleaved?.oneThread)} and ${fmtNum(results.peak.interleaved?.twoThreads)}`);
out.push(results.peakRelaxed.error ? `peak probe, relaxed_madd: n/a (${results.peakRelaxed.error})`
  : `peak probe, relaxed_madd (peak-relaxed.wat: the same 12 chains, one f32x4.relaxed_madd each), GFLOP/s: 1 thread `
    + `${fmtNum(results.peakRelaxed.start.oneThread)}, 2 threads ${fmtNum(results.peakRelaxed.start.twoThreads)} at the start; `
    + `interleaved (median): ${fmtNum(results.peakRelaxed.interleaved?.oneThread)}; relaxed ÷ mul+add, 1 thread: `
    + `${fmtRatio(results.peakRelaxed.interleaved?.oneThread / results.peak.interleaved?.oneThread)}`);
out.push('self-attention, batch 1, query = key = value, with biases, needWeights false; Float32Array in → Float32Array out;');
out.push('FLOPs = 4·2·n·d² + 2·2·n²·d; median of ≥ 7 interleaved repetitions after warm-up (small shapes: blocks of calls).');
out.push('');
out.push(renderTable(['n×d×heads', 'implementation', 'thr', 'median ms', 'GFLOP/s', '% peak', 'ours × faster', 'check', 'note'],
  rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'l']));
out.push('');
out.push('ours × faster: a peer\'s time ÷ our best 1-thread time (2-thread peers: ÷ our 2-thread time); "1t÷2t": our best');
out.push('  1-thread time ÷ our 2-thread time; "cost": needWeights true ÷ false, or the scalar build ÷ the SIMD build; "÷ mul+add": the');
out.push('  SIMD (mul+add) build\'s time ÷ the relaxed build\'s at the same threads. % peak: of the 1-thread peak probe that');
out.push('  ran interleaved with that shape\'s repetitions (row "peak probe"; relaxed rows: the relaxed_madd probe); 2-thread rows: of twice that (the 2-thread probe');
out.push('  is shown too, with its % of twice the 1-thread one: on this VM it swings with the other core\'s availability).');
out.push('check: output vs a naive float64-accumulated reference, within the contract tolerance (peers: 10× looser).');
out.push(`naive JavaScript is timed up to ${NAIVE_MAX_TOKENS} tokens only (≈1 GFLOP/s: seconds per call above that).`);
out.push('tfjs: weights pre-transposed to [in, out] and uploaded once (tf.matMul with transposeB misses XNNPACK in 4.22, ~13× slower);');
out.push('  "via perHead" = one 2-D tf.matMul per head for Q·Kᵀ and P·V, "via batched" = one batched tf.matMul; the faster is used.');
out.push('  2 threads: the threaded-SIMD build, loaded by hand in Node (tfjs disables threads under Node; see bench/tfjs-peer.mjs).');
out.push('onnxruntime-web: "via contrib" = com.microsoft Attention + MatMul + Add, "via standard" = plain ai.onnx ops; the faster is used.');
out.push('† its thread count is fixed per process, so 2 threads run in a separate process, interleaved with our 2-thread');
out.push('  prepared forward there; its speed-up column is the ratio within that process.');

// first call
if (results.firstCall) {
  out.push('');
  out.push('First call (fresh `node` process, default flags, 256×768×12, 1 thread):');
  for (const [k, r] of Object.entries(results.firstCall)) {
    if (r.error) { out.push(`  ${k.padEnd(9)} n/a (${r.error})`); continue; }
    out.push(`  ${k.padEnd(9)} createAttention ${fmtMs(r.createMs)} ms${k === 'prepared' ? `, createMultiHeadAttention ${fmtMs(r.prepareMs)} ms` : ''}, `
      + `first forward ${fmtMs(r.firstMs)} ms, steady median of next 7 ${fmtMs(r.steadyMs)} ms → first ÷ steady ${fmtRatio(r.firstMs / r.steadyMs)}`
      + ` (incl. createAttention ${fmtRatio((r.createMs + r.prepareMs + r.firstMs) / r.steadyMs)})`);
  }
}
if (results.memory) {
  const m = results.memory;
  out.push('');
  if (m.error) out.push(`Peak WebAssembly memory, 16384×512×8 forward, needWeights false: n/a (${m.error})`);
  else out.push(`Peak WebAssembly memory, 16384×512×8 forward, needWeights false (fresh process, ${m.threads} thread): `
    + `${fmtMiB(m.after.memoryBytes)} (${fmtMiB(m.before.memoryBytes)} before the call; the call took ${fmtMs(m.ms)} ms = ${fmtNum(mhaFlops(16384, 512) / m.ms / 1e6)} GFLOP/s)`);
}

// decode table
const decodeTargets = [];
if (results.decode) {
  const drows = [];
  const speedups = [], bounds = [];
  for (const [threads, r] of Object.entries(results.decode)) {
    if (r.error) { drows.push(['', '', '', threads, 'n/a', 'n/a', '', '', '', '', r.error]); continue; }
    const bandwidth = median(r.bandwidth);
    for (const row of r.rows) {
      const ours = row.ours?.median, ort = row.ort?.median;
      const speedup = ours && ort ? ort / ours : null;
      const decode = row.tokens === 1;
      const boundMs = decode ? row.bytes / bandwidth * 1000 : null;
      if (speedup != null) speedups.push([`${row.shape} ${decode ? `ctx ${row.ctx}` : `prefill ${row.tokens}`} ${threads}t`, speedup]);
      if (decode && ours) bounds.push([`${row.shape} ctx ${row.ctx} ${threads}t`, ours / boundMs]);
      drows.push([row.shape, decode ? String(row.ctx) : '0', String(row.tokens), threads, fmtMs(ours), row.ort?.error || row.ortError ? 'n/a' : fmtMs(ort),
        speedup == null ? 'n/a' : fmtRatio(speedup), decode ? fmtMiB(row.bytes) : '', decode ? fmtMs(boundMs) : '',
        decode && ours ? fmtRatio(ours / boundMs) : '',
        row.agreesWithOrt === undefined ? (row.ortError ?? row.ort?.error ?? '') : row.agreesWithOrt ? 'agrees with ORT' : 'DIFFERS from ORT']);
    }
    drows.push(['', '', '', '', '', '', '', '', '', '', `copy bandwidth probe: ${fmtNum(bandwidth / 1e9)} GB/s`]);
    drows.push(null);
  }
  drows.pop();
  out.push('');
  out.push('Decoding with a KV cache (prepared layer, needWeights false, no RoPE): one new token after `cache` tokens, or a');
  out.push('prefill of `tokens` from an empty cache; onnxruntime-web: MatMul → com.microsoft GroupQueryAttention (past K/V fed');
  out.push('as inputs) → MatMul, in the same process, interleaved. bytes: weights + cached K/V a step must read; bound: bytes ÷');
  out.push('the copy-bandwidth probe of that process (one core copying 64 MiB; 2 cores may move more).');
  out.push(renderTable(['shape', 'cache', 'tokens', 'thr', 'ours ms', 'ORT ms', 'ours × faster', 'bytes', 'bound ms', 'ours ÷ bound', 'note'],
    drows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l']));
  const all = (vals, ok) => (vals.length ? vals.every(([, v]) => ok(v)) : null);
  decodeTargets.push(['decode and prefill ≥ 1.3× onnxruntime-web at equal threads', all(speedups, (v) => v >= 1.3),
    speedups.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', ')]);
  decodeTargets.push(['decode step within 1.5× of the bandwidth bound', all(bounds, (v) => v <= 1.5),
    bounds.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', ')]);
}

const fmtRatio3 = (x) => (x == null || !Number.isFinite(x) ? 'n/a' : x.toFixed(3) + '×');
// targets of issue 4
const T = [];
const S = (k) => results.shapes[k]?.summary;
const verdict = (cond) => (cond == null ? 'n/a' : cond ? 'met' : 'NOT met');
const bigKeys = Object.keys(results.shapes).filter((k) => results.shapes[k].n >= 256 && results.shapes[k].d >= 512);
{
  const vals = bigKeys.map((k) => [k, S(k).ours1PctPeak]);
  const all = vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => v >= 85) : null;
  T.push([`1 thread ≥ 85 % of peak, 256×768×12 and larger`, verdict(all), vals.map(([k, v]) => `${k} ${fmtNum(v, 1)}%`).join(', ')]);
}
{
  const vals = Object.keys(results.shapes).map((k) => [k, S(k).speedupOverFastestPeer1, S(k).fastestPeer1]);
  const all = vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => v >= 1.4) : null;
  T.push(['1 thread ≥ 1.4× the fastest peer, every shape', verdict(all), vals.map(([k, v, pk]) => `${k} ${fmtRatio3(v)}${pk ? ` (${pk.replace('-1', '')})` : ''}`).join(', ')]);
}
{
  const vals = bigKeys.map((k) => [k, S(k).twoOverOne]);
  const all = vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => v >= 1.8) : null;
  T.push(['2 threads ≥ 1.8× our 1 thread, 256×768×12 and larger', verdict(all), vals.map(([k, v]) => `${k} ${fmtRatio3(v)}`).join(', ')]);
}
for (const [k, need] of [['8x64x2', 5], ['4x512x8', 1.5]]) {
  const v = S(k)?.speedupOverFastestPeer1;
  T.push([`${k}: ≥ ${need}× the fastest peer`, verdict(v == null ? null : v >= need), v == null ? '' : `${fmtRatio3(v)} vs ${S(k).fastestPeer1}`]);
}
{
  const r = results.firstCall?.prepared?.error ? results.firstCall?.oneshot : results.firstCall?.prepared;
  const v = r && !r.error ? r.firstMs / r.steadyMs : null;
  T.push(['first call within 2× of steady state (default flags)', verdict(v == null ? null : v <= 2), v == null ? '' : `${fmtRatio3(v)} (${r.variant})`]);
}
{
  const m = results.memory;
  const v = m && !m.error ? m.after.memoryBytes : null;
  T.push(['16384 tokens, needWeights false: peak memory < 128 MiB', verdict(v == null ? null : v < 128 * 1048576), v == null ? '' : fmtMiB(v)]);
}
results.targets = T.map(([target, status, detail]) => ({ target, status, detail }));
out.push('');
out.push('Targets of issue 4 (from this run):');
out.push(renderTable(['target', 'status', 'measured'], T, ['l', 'l', 'l']).split('\n').map((l) => '  ' + l).join('\n'));
if (decodeTargets.length) {
  const D = decodeTargets.map(([target, met, detail]) => [target, verdict(met), detail]);
  results.decodeTargets = D.map(([target, status, detail]) => ({ target, status, detail }));
  out.push('');
  out.push('Targets of issue 9 (from this run):');
  out.push(renderTable(['target', 'status', 'measured'], D, ['l', 'l', 'l']).split('\n').map((l) => '  ' + l).join('\n'));
}
{
  const rows = issue11Targets(results.shapes, fmtRatio3).map(([target, met, detail]) => [target, verdict(met), detail]);
  results.issue11Targets = rows.map(([target, status, detail]) => ({ target, status, detail }));
  out.push('');
  out.push('Targets of issue 11 (from this run; ours = our fastest variant at that thread count):');
  out.push(renderTable(['target', 'status', 'measured'], rows, ['l', 'l', 'l']).split('\n').map((l) => '  ' + l).join('\n'));
}
if (notes.length) { out.push(''); out.push('Notes:'); for (const nt of notes) out.push('  ' + nt); }
results.wallSeconds = (performance.now() - T0) / 1000;
out.push('');
out.push(`total ${results.wallSeconds.toFixed(0)} s; raw numbers in ${path.relative(process.cwd(), JSON_OUT) || JSON_OUT}`);
console.log(out.join('\n'));
fs.writeFileSync(JSON_OUT, JSON.stringify(results, null, 1) + '\n');
if (tfjsMt && results.tfjsThreaded?.cleanup) results.tfjsThreaded.cleanup();
process.exit(0);
