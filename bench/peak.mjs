// Peak probe: assembles peak.wat (wat2wasm from Debian's wabt) and measures the
// register-resident f32x4 mul+add throughput on 1 thread and on N threads at once; its twin
// peak-relaxed.wat does the same with f32x4.relaxed_madd.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { median } from './util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export function assemblePeak(wat = 'peak.wat') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wa-bench-peak-'));
  const out = path.join(dir, 'peak.wasm');
  try {
    execFileSync('wat2wasm', ['--enable-all', path.join(here, wat), '-o', out], { stdio: 'pipe' });
    return new Uint8Array(fs.readFileSync(out));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function instantiate(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes);
  return instance.exports;
}

/** Warms the probe up to the optimizing tier (V8 has no OSR: short calls first), returns iterations for ~targetMs. */
function calibrate(ex, targetMs) {
  for (let i = 0; i < 400; i++) ex.peak(2000, 0.999, 0.001);
  let iters = 200000;
  for (;;) {
    const t0 = performance.now();
    ex.peak(iters, 0.999, 0.001);
    const t = performance.now() - t0;
    if (t > targetMs / 4) return Math.ceil((iters * targetMs) / t);
    iters *= 4;
  }
}

/** Single-thread peak in this thread: median GFLOP/s over `reps` runs of ≥ targetMs each. */
export async function peakOneThread(bytes, { reps = 9, targetMs = 60 } = {}) {
  const ex = await instantiate(bytes);
  const fpi = ex.flopsPerIteration();
  const iters = calibrate(ex, targetMs);
  const rates = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    ex.peak(iters, 0.999, 0.001);
    rates.push((iters * fpi) / (performance.now() - t0) / 1e6);
  }
  return { gflops: median(rates), runs: rates, msPerRun: (iters * fpi) / median(rates) / 1e6 };
}

/** N threads at once (worker_threads, started together through a shared flag): aggregate GFLOP/s, median over reps. */
export async function peakThreads(bytes, nThreads, { reps = 7, targetMs = 60 } = {}) {
  const sab = new SharedArrayBuffer(4 * (2 + nThreads));
  const ctl = new Int32Array(sab); // [0] = round number, [1] = ready count
  const workers = [];
  const results = [];
  const done = [];
  for (let w = 0; w < nThreads; w++) {
    const worker = new Worker(fileURLToPath(import.meta.url), {
      workerData: { peakWorker: true, bytes, sab, reps, targetMs, index: w },
    });
    workers.push(worker);
    done.push(
      new Promise((resolve, reject) => {
        worker.on('message', (m) => {
          results[w] = m;
          resolve();
        });
        worker.on('error', reject);
      }),
    );
  }
  // wait until every worker has calibrated, then release rounds one by one
  while (Atomics.load(ctl, 1) < nThreads) await new Promise((r) => setTimeout(r, 5));
  for (let r = 1; r <= reps; r++) {
    Atomics.store(ctl, 1, 0);
    Atomics.store(ctl, 0, r);
    Atomics.notify(ctl, 0);
    while (Atomics.load(ctl, 1) < nThreads) await new Promise((res) => setTimeout(res, 1));
  }
  await Promise.all(done);
  await Promise.all(workers.map((w) => w.terminate()));
  // per round: all flops of all threads / time of the slowest thread in that round
  const rates = [];
  for (let r = 0; r < reps; r++) {
    let flops = 0,
      t = 0;
    for (const res of results) {
      flops += res.flops;
      t = Math.max(t, res.times[r]);
    }
    rates.push(flops / t / 1e6);
  }
  return { gflops: median(rates), runs: rates };
}

/**
 * A probe that can run interleaved with the implementations (same conditions, same bursts):
 * run1() ≈ targetMs of the loop on this thread; run2() the same on `nThreads` persistent workers
 * at once (blocking this thread until all are done). flops1 / flops2: work per call.
 */
export async function createPeakProbe(bytes, { targetMs = 20, nThreads = 2 } = {}) {
  const ex = await instantiate(bytes);
  const fpi = ex.flopsPerIteration();
  const iters = calibrate(ex, targetMs);
  const probe = {
    flops1: iters * fpi,
    run1: () => ex.peak(iters, 0.999, 0.001),
    flops2: 0,
    run2: null,
    close: async () => {},
  };
  const sab = new SharedArrayBuffer(16);
  const ctl = new Int32Array(sab); // [0] generation, [1] finished count, [2] ready count, [3] total flops/1e3
  const workers = [];
  for (let w = 0; w < nThreads; w++) {
    workers.push(
      new Worker(fileURLToPath(import.meta.url), { workerData: { persistentPeakWorker: true, bytes, sab, targetMs } }),
    );
  }
  const errors = workers.map((w) => new Promise((_, reject) => w.on('error', reject)));
  await Promise.race([
    (async () => {
      while (Atomics.load(ctl, 2) < nThreads) await new Promise((r) => setTimeout(r, 5));
    })(),
    ...errors,
  ]);
  let gen = 0;
  probe.flops2 = Atomics.load(ctl, 3) * 1e3;
  probe.run2 = () => {
    Atomics.store(ctl, 1, 0);
    Atomics.store(ctl, 0, ++gen);
    Atomics.notify(ctl, 0);
    for (;;) {
      const f = Atomics.load(ctl, 1);
      if (f >= nThreads) break;
      Atomics.wait(ctl, 1, f, 1000);
    }
  };
  probe.close = async () => {
    Atomics.store(ctl, 0, -1);
    Atomics.notify(ctl, 0);
    await Promise.all(workers.map((w) => w.terminate()));
  };
  return probe;
}

if (!isMainThread && workerData?.persistentPeakWorker) {
  const { bytes, sab, targetMs } = workerData;
  const ctl = new Int32Array(sab);
  const ex = await instantiate(bytes);
  const iters = calibrate(ex, targetMs);
  Atomics.add(ctl, 3, Math.round((iters * ex.flopsPerIteration()) / 1e3));
  Atomics.add(ctl, 2, 1);
  let seen = 0;
  for (;;) {
    Atomics.wait(ctl, 0, seen);
    const g = Atomics.load(ctl, 0);
    if (g < 0) break;
    seen = g;
    ex.peak(iters, 0.999, 0.001);
    Atomics.add(ctl, 1, 1);
    Atomics.notify(ctl, 1);
  }
}

if (!isMainThread && workerData?.peakWorker) {
  const { bytes, sab, reps, targetMs } = workerData;
  const ctl = new Int32Array(sab);
  const ex = await instantiate(bytes);
  const fpi = ex.flopsPerIteration();
  const iters = calibrate(ex, targetMs);
  Atomics.add(ctl, 1, 1);
  const times = [];
  for (let r = 1; r <= reps; r++) {
    Atomics.wait(ctl, 0, r - 1); // until the main thread starts round r
    const t0 = performance.now();
    ex.peak(iters, 0.999, 0.001);
    times.push(performance.now() - t0);
    Atomics.add(ctl, 1, 1);
  }
  parentPort.postMessage({ flops: iters * fpi, times });
}
