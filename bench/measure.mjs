// Interleaved timing: every repetition runs each implementation once (a block of calls), in a
// rotating order, so the VM's ~100 ms slowdown bursts fall on all of them alike. Each block starts
// on a quiet machine with its own threads awake: a pause (settleMs) lets what the previous block
// left running finish (perhaps V8's concurrent garbage collection of a peer's tensors, or a pool's
// threads going to sleep; the cause was not pinned down), and one untimed call wakes this
// implementation's threads. Without it, on 2 cores, a block of 2-thread calls started while the
// previous one's leftovers held a core: on the poem model's 128-token prefill, ours at 2 threads
// gave 6.8k tokens/s that way and 23k after a 50 ms pause (1 thread: 15–19k), and a GQA decode
// step after 128 tokens 2.7 ms against 1.25 ms.
import { median, sleep, timeBlock } from './util.mjs';

const isPromise = (v) => v && typeof v.then === 'function';

/**
 * Warms up fn, measures its time per call.
 * @returns {Promise<{ output, msPerCall, isAsync }>}
 */
export async function warmUp(fn, x, calls) {
  const t0 = performance.now();
  let out = fn(x);
  const isAsync = isPromise(out);
  if (isAsync) out = await out;
  const first = performance.now() - t0;
  const ts = [];
  for (let i = 1; i < calls; i++) {
    const t = performance.now();
    const r = fn(x);
    if (isAsync) await r;
    ts.push(performance.now() - t);
  }
  return { output: out, first, msPerCall: ts.length ? median(ts) : first, isAsync };
}

/**
 * Picks the fastest of several ways of running the same computation (e.g. tfjs per-head vs
 * batched matMul): a short interleaved race after warm-up.
 */
export async function pickVariant(variants, x, { activate, warm = 3, rounds = 3, blockMs = 20 } = {}) {
  const names = Object.keys(variants);
  if (names.length === 1) return { name: names[0], times: {} };
  const info = {};
  for (const name of names) {
    if (activate) await activate();
    try {
      const w = await warmUp(variants[name], x, warm);
      info[name] = {
        ...w,
        times: [],
        calls: Math.max(1, Math.min(5000, Math.round(blockMs / Math.max(w.msPerCall, 1e-4)))),
      };
    } catch (e) {
      info[name] = { error: String(e?.message ?? e).split('\n')[0] };
    }
  }
  const ok = names.filter((n) => !info[n].error);
  if (!ok.length) throw new Error(names.map((n) => `${n}: ${info[n].error}`).join('; '));
  for (let r = 0; r < rounds; r++) {
    for (const name of ok) {
      if (activate) await activate();
      const v = info[name];
      v.times.push(await timeBlock(() => variants[name](x), v.calls, v.isAsync));
    }
  }
  let best = ok[0];
  for (const n of ok) if (median(info[n].times) < median(info[best].times)) best = n;
  const times = Object.fromEntries(names.map((n) => [n, info[n].error ? info[n].error : median(info[n].times)]));
  return { name: best, times };
}

/** The pause before a block, then (for a block of several short calls) one untimed call. */
async function settle(im, x, s, settleMs) {
  if (settleMs > 0) await sleep(settleMs);
  if (s.calls < 2) return; // one long call: its own start is a small part of it
  const out = im.run(x);
  if (s.isAsync) await out;
}

/**
 * @param impls [{ key, run(x) → Float32Array | Promise, activate?() }]
 * @param x input
 * @param opts { reps, warm, blockMs, settleMs }
 * @returns Map key → { median, runs, calls, output, first } or { error }
 */
export async function measureInterleaved(impls, x, { reps = 7, warm = 3, blockMs = 25, settleMs = 50 } = {}) {
  const state = new Map();
  for (const im of impls) {
    try {
      if (im.activate) await im.activate();
      const w = await warmUp(im.run, x, im.warm ?? warm);
      const calls = Math.max(1, Math.min(20000, Math.round(blockMs / Math.max(w.msPerCall, 1e-4))));
      state.set(im.key, { im, calls, isAsync: w.isAsync, output: w.output, first: w.first, runs: [] });
    } catch (e) {
      state.set(im.key, { error: String(e?.message ?? e).split('\n')[0] });
    }
  }
  const live = impls.filter((im) => !state.get(im.key).error);
  for (let r = 0; r < reps; r++) {
    for (let j = 0; j < live.length; j++) {
      const im = live[(j + r) % live.length];
      const s = state.get(im.key);
      if (s.error) continue;
      try {
        if (im.activate) await im.activate();
        await settle(im, x, s, settleMs);
        s.runs.push(await timeBlock(() => im.run(x), s.calls, s.isAsync));
      } catch (e) {
        s.error = String(e?.message ?? e).split('\n')[0];
      }
    }
  }
  for (const [, s] of state) if (!s.error) s.median = median(s.runs);
  return state;
}
