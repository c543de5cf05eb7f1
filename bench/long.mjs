#!/usr/bin/env node
// Long-context rows: self-attention over 2,048, 4,096 and 8,192 tokens (512 wide, 8 heads), without a
// mask, causal, and causal with a sliding window of 1,024 — our prepared layer (mul+add and relaxed
// builds) against onnxruntime-web where it runs them, one child process per thread count
// (long-rows.mjs), each row's GFLOP/s as a % of the matching 1-thread peak probe (peak.wat,
// peak-relaxed.wat) times the cores its threads had. Part of `npm run bench` (--skip=long leaves it
// out); alone:
//
//   node bench/long.mjs [--threads 1,2] [--quick] [--lengths=2048,4096] [--json=bench/long-results.json]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild } from './child-process.mjs';
import { machineCores, parseThreads } from './threads.mjs';
import { fmtMs, fmtNum, fmtRatio, renderTable } from './util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

/** One child per thread count; { byThreads: { [t]: child answer }, cores }. */
export async function runLongRows({ threads = [1, 2], quick = false, lengths } = {}) {
  const res = { cores: machineCores(), byThreads: {} };
  for (const t of threads) {
    log(`bench: long contexts, ${t} thread(s) (separate process) …`);
    res.byThreads[t] = await runChild(
      [
        path.join(here, 'long-rows.mjs'),
        `--threads=${t}`,
        ...(quick ? ['--quick'] : []),
        ...(lengths ? [`--lengths=${lengths.join(',')}`] : []),
      ],
      40 * 60e3,
      process.execArgv,
    );
  }
  return res;
}

const MASK_LABEL = { none: 'no mask', causal: 'causal', window: 'causal, window 1,024' };

/** The printed table: a row per length, mask and thread count. */
export function longReport(res) {
  const rows = [];
  for (const [t, r] of Object.entries(res.byThreads)) {
    if (r.error) {
      rows.push(['', '', t, 'n/a', '', '', '', '', '', r.error]);
      continue;
    }
    const cores = Math.min(Number(t), res.cores);
    for (const row of r.rows) {
      const pct = (side, peak) =>
        row[side]?.median && peak
          ? `${fmtNum((100 * row.flops) / row[side].median / 1e6 / (peak * cores), 0)}%`
          : 'n/a';
      const ms = (side) => (row[side]?.median ? fmtMs(row[side].median) : 'n/a');
      const best = Math.min(...['mulAdd', 'relaxed'].map((k) => row[k]?.median).filter(Number.isFinite));
      rows.push([
        String(row.n),
        MASK_LABEL[row.mask],
        t,
        ms('mulAdd'),
        pct('mulAdd', r.peak?.mulAdd),
        ms('relaxed'),
        pct('relaxed', r.peak?.relaxed),
        ms('ort'),
        row.ort?.median && Number.isFinite(best) ? fmtRatio(row.ort.median / best) : 'n/a',
        row.ort?.error ??
          (row.agreesWithOrt === undefined ? '' : row.agreesWithOrt ? 'agrees with ORT' : 'DIFFERS from ORT'),
      ]);
    }
    rows.push(null);
  }
  if (rows.at(-1) === null) rows.pop();
  const out = [''];
  out.push('Long contexts: self-attention, 512 wide, 8 heads, batch 1, needWeights false (bench/long.mjs). FLOPs =');
  out.push('  8·n·d² + 4·d·(query-key pairs the mask leaves); % peak: of the 1-thread probe of that build (mul+add,');
  out.push('  relaxed_madd; medians before and after, in the same process) × the cores the threads had.');
  out.push(
    '  onnxruntime-web: com.microsoft Attention (no mask), GroupQueryAttention (causal; window: local_window_size).',
  );
  for (const [t, r] of Object.entries(res.byThreads))
    if (r.peak)
      out.push(
        `  peak probe, ${t}-thread process: mul+add ${fmtNum(r.peak.mulAdd)}, relaxed_madd ${fmtNum(r.peak.relaxed)} GFLOP/s`,
      );
  out.push(
    renderTable(
      ['tokens', 'mask', 'thr', 'mul+add ms', '% peak', 'relaxed ms', '% peak', 'ORT ms', 'ours × faster', 'note'],
      rows,
      ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { restartWithRelaxedSimd } = await import('./relaxed.mjs');
  restartWithRelaxedSimd();
  const argv = process.argv.slice(2);
  const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  let threads;
  try {
    threads = parseThreads(argv);
  } catch (e) {
    console.error(`bench/long.mjs: ${e.message}`);
    process.exit(2);
  }
  const { installPeers } = await import('./install-peers.mjs');
  const depsError = installPeers();
  if (depsError) log(`bench: ${depsError} (onnxruntime-web rows will be n/a)`);
  const res = await runLongRows({
    threads,
    quick: argv.includes('--quick'),
    lengths: opt('lengths')?.split(',').map(Number),
  });
  res.date = new Date().toISOString();
  const json = path.resolve(opt('json') ?? path.join(here, 'long-results.json'));
  fs.writeFileSync(json, JSON.stringify(res, null, 1) + '\n');
  console.log(longReport(res).join('\n'));
  console.log(`\nraw numbers in ${path.relative(process.cwd(), json)}`);
}
