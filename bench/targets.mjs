// The performance targets the bench checks, from one run's results: those of issue 4 (the first
// kernels), issue 9 (decoding with a KV cache) and issue 11 (performance II, with relaxed SIMD).
// Each target is [what, met (true/false/null when not measured), the figures behind it].
import { fmtMiB, fmtNum, fmtRatio, median } from './util.mjs';

export const verdict = (cond) => (cond == null ? 'n/a' : cond ? 'met' : 'NOT met');
export const fmtRatio3 = (x) => (x == null || !Number.isFinite(x) ? 'n/a' : x.toFixed(3) + '×');
const everyOf = (vals, ok) => (vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => ok(v)) : null);

/** Issue 4, from the shapes' summaries (report.mjs's summarizeShapes) and the fresh-process runs. */
export function issue4Targets(results) {
  const T = [];
  const S = (k) => results.shapes[k]?.summary;
  const bigKeys = Object.keys(results.shapes).filter((k) => results.shapes[k].n >= 256 && results.shapes[k].d >= 512);
  {
    const vals = bigKeys.map((k) => [k, S(k).ours1PctPeak]);
    T.push([
      `1 thread ≥ 85 % of peak, 256×768×12 and larger`,
      everyOf(vals, (v) => v >= 85),
      vals.map(([k, v]) => `${k} ${fmtNum(v, 1)}%`).join(', '),
    ]);
  }
  {
    const vals = Object.keys(results.shapes).map((k) => [k, S(k).speedupOverFastestPeer1, S(k).fastestPeer1]);
    T.push([
      '1 thread ≥ 1.4× the fastest peer, every shape',
      everyOf(vals, (v) => v >= 1.4),
      vals.map(([k, v, pk]) => `${k} ${fmtRatio3(v)}${pk ? ` (${pk.replace('-1', '')})` : ''}`).join(', '),
    ]);
  }
  {
    const vals = bigKeys.map((k) => [k, S(k).twoOverOne]);
    T.push([
      '2 threads ≥ 1.8× our 1 thread, 256×768×12 and larger',
      everyOf(vals, (v) => v >= 1.8),
      vals.map(([k, v]) => `${k} ${fmtRatio3(v)}`).join(', '),
    ]);
  }
  for (const [k, need] of [
    ['8x64x2', 5],
    ['4x512x8', 1.5],
  ]) {
    const v = S(k)?.speedupOverFastestPeer1;
    T.push([
      `${k}: ≥ ${need}× the fastest peer`,
      v == null ? null : v >= need,
      v == null ? '' : `${fmtRatio3(v)} vs ${S(k).fastestPeer1}`,
    ]);
  }
  {
    const r = results.firstCall?.prepared?.error ? results.firstCall?.oneshot : results.firstCall?.prepared;
    const v = r && !r.error ? r.firstMs / r.steadyMs : null;
    T.push([
      'first call within 2× of steady state (default flags)',
      v == null ? null : v <= 2,
      v == null ? '' : `${fmtRatio3(v)} (${r.variant})`,
    ]);
  }
  {
    const m = results.memory;
    const v = m && !m.error ? m.after.memoryBytes : null;
    T.push([
      '16384 tokens, needWeights false: peak memory < 128 MiB',
      v == null ? null : v < 128 * 1048576,
      v == null ? '' : fmtMiB(v),
    ]);
  }
  return T;
}

/** One decode-table row's figures: ours ÷ ORT, and for a one-token step its bandwidth bound. */
export function decodeFigures(row, bandwidth) {
  const ours = row.ours?.median,
    ort = row.ort?.median;
  const decode = row.tokens === 1;
  return {
    ours,
    ort,
    decode,
    speedup: ours && ort ? ort / ours : null,
    boundMs: decode ? (row.bytes / bandwidth) * 1000 : null,
  };
}

/** Issue 9, from the decode children (results.decode: thread count → their answer). */
export function issue9Targets(decode) {
  const speedups = [],
    bounds = [];
  for (const [threads, r] of Object.entries(decode)) {
    if (r.error) continue;
    const bandwidth = median(r.bandwidth);
    for (const row of r.rows) {
      const { ours, decode: oneToken, speedup, boundMs } = decodeFigures(row, bandwidth);
      if (speedup != null)
        speedups.push([`${row.shape} ${oneToken ? `ctx ${row.ctx}` : `prefill ${row.tokens}`} ${threads}t`, speedup]);
      if (oneToken && ours) bounds.push([`${row.shape} ctx ${row.ctx} ${threads}t`, ours / boundMs]);
    }
  }
  const all = (vals, ok) => (vals.length ? vals.every(([, v]) => ok(v)) : null);
  return [
    [
      'decode and prefill ≥ 1.3× onnxruntime-web at equal threads',
      all(speedups, (v) => v >= 1.3),
      speedups.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', '),
    ],
    [
      'decode step within 1.5× of the bandwidth bound',
      all(bounds, (v) => v <= 1.5),
      bounds.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', '),
    ],
  ];
}

// Issue 11: ours is the fastest of our variants a user gets at that thread count (prepared mul+add
// or relaxed SIMD; at one thread also one-shot), against the fastest peer at the same thread count.
const fastest = (impls, keys) => {
  const times = keys
    .map((k) => impls[k])
    .filter((v) => v && !v.error && Number.isFinite(v.median))
    .map((v) => v.median);
  return times.length ? Math.min(...times) : null;
};
const OURS = { 1: ['wa-oneshot-1', 'wa-prepared-1', 'wa-relaxed-1'], 2: ['wa-prepared-2', 'wa-relaxed-2'] };
const PEERS = { 1: ['tfjs-1', 'ort-1'], 2: ['tfjs-2', 'ort-2'] };
export const RELAXED_TARGET = { ratio: 1.15, minTokens: 96 };

/** Relaxed 1 thread ÷ mul+add 1 thread, every shape from 96 tokens. */
function relaxedTarget(shapes) {
  const vals = Object.entries(shapes)
    .filter(([, r]) => r.n >= RELAXED_TARGET.minTokens)
    .map(([k, r]) => {
      const mulAdd = r.impls['wa-prepared-1'],
        relaxed = r.impls['wa-relaxed-1'];
      return [k, mulAdd?.median && relaxed?.median ? mulAdd.median / relaxed.median : null];
    });
  return [
    `relaxed SIMD, 1 thread ≥ ${RELAXED_TARGET.ratio}× the mul+add build, ${RELAXED_TARGET.minTokens} tokens and up`,
    everyOf(vals, (v) => v >= RELAXED_TARGET.ratio),
    vals.map(([k, v]) => `${k} ${fmtRatio3(v)}`).join(', '),
  ];
}

/** Issue 11, from the shapes' medians. */
export function issue11Targets(shapes) {
  const entries = Object.entries(shapes);
  const rows = [];
  for (const threads of [1, 2]) {
    const vals = entries.map(([k, r]) => {
      const ours = fastest(r.impls, OURS[threads]),
        peer = fastest(r.impls, PEERS[threads]);
      return [k, ours && peer ? peer / ours : null];
    });
    rows.push([
      `${threads} thread${threads > 1 ? 's' : ''}: ours ≥ 1.4× the fastest peer, every shape`,
      everyOf(vals, (v) => v >= 1.4),
      vals.map(([k, v]) => `${k} ${fmtRatio3(v)}`).join(', '),
    ]);
  }
  const scaling = entries
    .filter(([, r]) => r.n >= 96)
    .flatMap(([k, r]) =>
      [
        ['', 'prepared'],
        ['relaxed ', 'relaxed'],
      ].map(([label, key]) => {
        const one = fastest(r.impls, [`wa-${key}-1`]),
          two = fastest(r.impls, [`wa-${key}-2`]);
        return [`${k} ${label}`.trim(), one && two ? one / two : null];
      }),
    );
  rows.push([
    '2 threads ≥ 1.8× 1 thread, 96 tokens and up (each build)',
    everyOf(scaling, (v) => v >= 1.8),
    scaling.map(([k, v]) => `${k} ${fmtRatio3(v)}`).join(', '),
  ]);
  rows.push(relaxedTarget(shapes));
  const tiny = shapes['8x64x2'];
  const tinyRatio = tiny
    ? (() => {
        const ours = fastest(tiny.impls, OURS[1]),
          peer = fastest(tiny.impls, PEERS[1]);
        return ours && peer ? peer / ours : null;
      })()
    : null;
  rows.push([
    '8x64x2: ≥ 4× the fastest peer (1 thread)',
    tinyRatio == null ? null : tinyRatio >= 4,
    tinyRatio == null ? '' : fmtRatio3(tinyRatio),
  ]);
  return rows;
}
