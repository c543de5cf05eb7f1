// The targets of issue 11 (performance II), from one run's medians: ours is the fastest of our
// variants a user gets at that thread count (prepared mul+add or relaxed SIMD; at one thread also
// one-shot), against the fastest peer at the same thread count.
import { relaxedTarget } from './relaxed.mjs';

const fastest = (impls, keys) => {
  const times = keys.map((k) => impls[k]).filter((v) => v && !v.error && Number.isFinite(v.median)).map((v) => v.median);
  return times.length ? Math.min(...times) : null;
};
const OURS = { 1: ['wa-oneshot-1', 'wa-prepared-1', 'wa-relaxed-1'], 2: ['wa-prepared-2', 'wa-relaxed-2'] };
const PEERS = { 1: ['tfjs-1', 'ort-1'], 2: ['tfjs-2', 'ort-2'] };
const everyOf = (vals, ok) => (vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => ok(v)) : null);

/** [[target, met (true/false/null), detail], …] */
export function issue11Targets(shapes, fmtRatio) {
  const entries = Object.entries(shapes);
  const rows = [];
  for (const threads of [1, 2]) {
    const vals = entries.map(([k, r]) => {
      const ours = fastest(r.impls, OURS[threads]), peer = fastest(r.impls, PEERS[threads]);
      return [k, ours && peer ? peer / ours : null];
    });
    rows.push([`${threads} thread${threads > 1 ? 's' : ''}: ours ≥ 1.4× the fastest peer, every shape`, everyOf(vals, (v) => v >= 1.4),
      vals.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', ')]);
  }
  const scaling = entries.filter(([, r]) => r.n >= 96).flatMap(([k, r]) => [['', 'prepared'], ['relaxed ', 'relaxed']].map(([label, key]) => {
    const one = fastest(r.impls, [`wa-${key}-1`]), two = fastest(r.impls, [`wa-${key}-2`]);
    return [`${k} ${label}`.trim(), one && two ? one / two : null];
  }));
  rows.push(['2 threads ≥ 1.8× 1 thread, 96 tokens and up (each build)', everyOf(scaling, (v) => v >= 1.8),
    scaling.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', ')]);
  rows.push(relaxedTarget(shapes, fmtRatio));
  const tiny = shapes['8x64x2'];
  const tinyRatio = tiny ? (() => {
    const ours = fastest(tiny.impls, OURS[1]), peer = fastest(tiny.impls, PEERS[1]);
    return ours && peer ? peer / ours : null;
  })() : null;
  rows.push(['8x64x2: ≥ 4× the fastest peer (1 thread)', tinyRatio == null ? null : tinyRatio >= 4, tinyRatio == null ? '' : fmtRatio(tinyRatio)]);
  return rows;
}
