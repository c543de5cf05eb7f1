// Small helpers shared by the bench modules: seeded data, statistics, timing loops, formatting.
import fsSync from 'node:fs';

export function rng(seed) {
  // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randArray(len, scale, rand) {
  const a = new Float32Array(len);
  for (let i = 0; i < len; i++) a[i] = (rand() * 2 - 1) * scale;
  return a;
}

/** Weights of one nn.MultiheadAttention layer (with biases) and an input [n, d]. */
export function makeProblem(n, d, h, seed = 1234) {
  const rand = rng(seed + n * 7919 + d * 31 + h);
  const ws = 1 / Math.sqrt(d);
  return {
    n,
    d,
    h,
    query: randArray(n * d, 1, rand),
    inProjWeight: randArray(3 * d * d, ws, rand),
    inProjBias: randArray(3 * d, 0.1, rand),
    outProjWeight: randArray(d * d, ws, rand),
    outProjBias: randArray(d, 0.1, rand),
  };
}

/** FLOPs of one forward as the issue counts them: projections 4·2·n·d², attention 2·2·n²·d. */
export const mhaFlops = (n, d) => 4 * 2 * n * d * d + 2 * 2 * n * n * d;

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Largest elementwise error relative to the contract's tolerance 1e-4 + 1e-4·|ref| (so ≤ 1 passes it). */
export function errorVsTolerance(got, ref, atol = 1e-4, rtol = 1e-4) {
  if (!got || got.length !== ref.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(got[i] - ref[i]) / (atol + rtol * Math.abs(ref[i]));
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
  }
  return worst;
}

/** Times `calls` back-to-back calls of fn (awaiting it when it returns a promise); ms per call. */
export async function timeBlock(fn, calls, isAsync) {
  if (isAsync) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await fn();
    return (performance.now() - t0) / calls;
  }
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) fn();
  return (performance.now() - t0) / calls;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------- formatting ----------
export function fmtMs(ms) {
  if (ms == null || !Number.isFinite(ms)) return 'n/a';
  if (ms < 0.1) return ms.toFixed(4);
  if (ms < 10) return ms.toFixed(3);
  if (ms < 1000) return ms.toFixed(1);
  return ms.toFixed(0);
}
export const fmtNum = (x, digits = 1) => (x == null || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits));
export const fmtRatio = (x) =>
  x == null || !Number.isFinite(x) ? 'n/a' : (x >= 100 ? x.toFixed(0) : x.toFixed(2)) + '×';
export const fmtPct = (x) => (x == null || !Number.isFinite(x) ? 'n/a' : x.toFixed(0) + '%');
export const fmtMiB = (b) => (b == null || !Number.isFinite(b) ? 'n/a' : (b / 1048576).toFixed(1) + ' MiB');

/** Renders rows (arrays of strings) under headers; `align` per column: 'l' or 'r'. */
export function renderTable(headers, rows, align) {
  const widths = headers.map((h, c) =>
    Math.max(h.length, ...rows.filter(Boolean).map((r) => String(r[c] ?? '').length)),
  );
  const line = (cells) =>
    cells
      .map((x, c) => {
        const s = String(x ?? '');
        return align[c] === 'r' ? s.padStart(widths[c]) : s.padEnd(widths[c]);
      })
      .join('  ')
      .trimEnd();
  const out = [line(headers), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of rows) out.push(r === null ? '' : line(r));
  return out.join('\n');
}

/**
 * CPU time of the whole machine (Linux /proc/stat) and of this process (all its threads), to
 * tell how much other processes ran meanwhile. Returns null fields where unavailable.
 */
export function cpuSnapshot() {
  let busyMs = null,
    stealMs = null;
  try {
    const f = readProcStat().split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    busyMs = (user + nice + system + irq + softirq) * 10; // USER_HZ = 100
    stealMs = (steal || 0) * 10;
  } catch {
    /* not Linux */
  }
  const u = process.cpuUsage();
  return { t: performance.now(), busyMs, stealMs, ownMs: (u.user + u.system) / 1000 };
}
function readProcStat() {
  return fsSync.readFileSync('/proc/stat', 'utf8');
}

/** Average number of cores used by other processes (and stolen by the hypervisor) between two snapshots. */
export function otherLoad(a, b) {
  const wall = b.t - a.t;
  if (a.busyMs == null || !(wall > 0)) return null;
  return {
    otherCores: Math.max(0, (b.busyMs - a.busyMs - (b.ownMs - a.ownMs)) / wall),
    stealCores: (b.stealMs - a.stealMs) / wall,
    ownCores: (b.ownMs - a.ownMs) / wall,
  };
}
