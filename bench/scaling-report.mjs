// The thread-scaling tables of a run: one row per shape, one column group per thread count of
// --threads (median ms, × our 1-thread time of that build, % of the peak of the cores it had), for the
// mul+add build and the relaxed build; then the decode rows the same way. Counts past the machine's
// cores are marked (*): their threads share the cores.
import { fmtMs, fmtNum, fmtRatio, renderTable } from './util.mjs';
import { shapeKey, shapeLabel } from './plan.mjs';

const mark = (threads, cores) => (threads > cores ? `${threads}t*` : `${threads}t`);

/** One build's table: rows of shapes, a column group (ms, ×1t, % peak) per thread count. */
function buildTable(results, shapes, build, label) {
  const { counts, cores } = results.threads;
  const headers = ['n×d×heads'];
  const align = ['l'];
  for (const t of counts) {
    headers.push(`${mark(t, cores)} ms`, `${mark(t, cores)} ×1t`, `${mark(t, cores)} %pk`);
    align.push('r', 'r', 'r');
  }
  const rows = [];
  for (const s of shapes) {
    const R = results.shapes[shapeKey(s)];
    if (!R) continue;
    const peak1 =
      build === 'relaxed'
        ? (R.peakRelaxed1?.gflops ?? results.peakRelaxed?.start?.oneThread)
        : (R.peak1?.gflops ?? results.peak?.start?.oneThread);
    const one = R.impls[`wa-${build}-1`];
    const row = [shapeLabel(s)];
    for (const t of counts) {
      const v = R.impls[`wa-${build}-${t}`];
      if (!v || v.error || !Number.isFinite(v.median)) {
        row.push('n/a', '', '');
        continue;
      }
      const gflops = R.flops / v.median / 1e6;
      row.push(
        fmtMs(v.median),
        one?.median ? fmtRatio(one.median / v.median) : 'n/a',
        peak1 ? `${fmtNum((100 * gflops) / (peak1 * Math.min(t, cores)), 0)}%` : 'n/a',
      );
    }
    rows.push(row);
  }
  return [`${label}:`, renderTable(headers, rows, align)];
}

/** The decode children (one per count) side by side: ours ms and × 1 thread per row. */
function decodeTable(results) {
  const { counts, cores } = results.threads;
  const byThreads = results.decode;
  const base = byThreads?.[1];
  if (!base || base.error || !Array.isArray(base.rows)) return [];
  const headers = ['shape', 'cache', 'tokens'];
  const align = ['l', 'r', 'r'];
  for (const t of counts) {
    headers.push(`${mark(t, cores)} ms`, `${mark(t, cores)} ×1t`);
    align.push('r', 'r');
  }
  const rows = base.rows.map((row, i) => {
    const cells = [row.shape, row.tokens === 1 ? String(row.ctx) : '0', String(row.tokens)];
    for (const t of counts) {
      const r = byThreads[t]?.rows?.[i];
      const ms = r?.ours?.median;
      cells.push(ms ? fmtMs(ms) : 'n/a', ms && row.ours?.median ? fmtRatio(row.ours.median / ms) : '');
    }
    return cells;
  });
  return ['Decode and prefill with a KV cache, ours by thread count:', renderTable(headers, rows, align)];
}

/**
 * The scaling section's lines (empty when the run timed only 1 and 2 threads on a machine with as
 * many cores: the main table has them already).
 * @param {object} results   the run's results (results.threads: { counts, cores, plan })
 * @param {number[][]} shapes
 */
export function scalingTables(results, shapes) {
  const t = results.threads;
  if (!t || (t.counts.length <= 2 && t.counts.every((n) => n <= t.cores))) return [];
  const out = [''];
  out.push(
    `Thread scaling (--threads ${t.counts.join(',')}; this machine: ${t.cores} core${t.cores > 1 ? 's' : ''}): median ms, ` +
      '× our 1-thread time of that build, % of the peak of the cores the threads had (1-thread probe × min(threads, cores)).',
  );
  for (const { note } of t.plan) if (note) out.push(`  * ${note}`);
  out.push('');
  out.push(...buildTable(results, shapes, 'prepared', 'mul+add build (prepared)'));
  out.push('');
  out.push(...buildTable(results, shapes, 'relaxed', 'relaxed-SIMD build (prepared)'));
  const d = decodeTable(results);
  if (d.length) out.push('', ...d);
  const peaks = results.peak?.start?.byThreads;
  if (peaks)
    out.push(
      '',
      `peak probe at the start, GFLOP/s by threads at once: ${Object.entries(peaks)
        .map(([n, g]) => `${n}: ${fmtNum(g)}`)
        .join(', ')}`,
    );
  return out;
}
