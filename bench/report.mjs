// The bench's printed report, from one run's results: the warning about a busy machine, the
// engine and peers in use, the table of every shape and implementation with its legend, the first
// call, the peak memory, the decode table, and the targets (targets.mjs) with their verdicts.
// Writes into results only what the table derives (each shape's summary) and the targets' verdicts.
import os from 'node:os';
import { fmtMiB, fmtMs, fmtNum, fmtPct, fmtRatio, median, mhaFlops, renderTable } from './util.mjs';
import { IMPLS, NAIVE_MAX_TOKENS, coresOf, shapeKey, shapeLabel } from './plan.mjs';
import { scalingTables } from './scaling-report.mjs';
import { decodeFigures, issue11Targets, issue4Targets, issue9Targets, verdict } from './targets.mjs';

/** The main table's rows; sets each shape's summary (our best times, % of peak, the fastest peers). */
function shapeTable(results, shapes) {
  const rows = [];
  for (const s of shapes) {
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
      ours1Key,
      ours1,
      ours2,
      ours1GFlops: ours1 ? R.flops / ours1 / 1e6 : null,
      ours1PctPeak: ours1 && peak1 ? (100 * R.flops) / ours1 / 1e6 / peak1 : null,
      ours2PctPeak: ours2 && peak2 ? (100 * R.flops) / ours2 / 1e6 / peak2 : null,
      twoOverOne: ours1 && ours2 ? ours1 / ours2 : null,
      fastestPeer1,
      speedupOverFastestPeer1: ours1 && fastestPeer1 ? I[fastestPeer1].median / ours1 : null,
      fastestPeer2,
      speedupOverFastestPeer2: ours2 && fastestPeer2 ? I[fastestPeer2].median / ours2 : null,
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
      const pk = (im.relaxed ? peakRelaxed1 : peak1) * coresOf(im.threads) || null;
      let speed = '';
      const mulAdd = I[`wa-prepared-${im.threads}`];
      if (im.relaxed) speed = ok(`wa-prepared-${im.threads}`) ? `÷ mul+add ${fmtRatio(mulAdd.median / v.median)}` : '';
      else if (im.key === ours1Key) speed = 'best 1t';
      else if (im.key.startsWith('wa-prepared-') && im.threads > 1)
        speed = ours1 ? `1t÷${im.threads}t ${fmtRatio(ours1 / v.median)}` : '';
      else if (im.key === 'wa-prepared-1-w' || im.key.startsWith('wa-scalar-'))
        speed = ok(`wa-prepared-${im.threads}`) ? `cost ${fmtRatio(v.median / mulAdd.median)}` : '';
      else if (im.key === 'ort-2')
        speed = v.oursTwoThreadsSameProcess ? fmtRatio(v.median / v.oursTwoThreadsSameProcess) : 'n/a';
      else if (im.threads === 2 && !im.ours) speed = ours2 ? fmtRatio(v.median / ours2) : 'n/a';
      else if (!im.ours) speed = ours1 ? fmtRatio(v.median / ours1) : 'n/a';
      let check = '';
      if (v.errVsTol != null) {
        const limit = im.ours ? 1 : 10; // contract tolerance for us; 10× looser for peers
        check = v.errVsTol <= limit ? 'ok' : `ERR ${v.errVsTol.toExponential(1)}`;
      }
      const note = v.variant ? `via ${v.variant}` : '';
      rows.push([
        label,
        im.name,
        String(im.threads),
        fmtMs(v.median),
        fmtNum(gf),
        pk ? fmtPct((100 * gf) / pk) : 'n/a',
        speed,
        check,
        note,
      ]);
    }
    if (R.peak1 || R.peak2) {
      rows.push([
        '',
        'peak probe (interleaved)',
        '1 / 2',
        '',
        `${fmtNum(R.peak1?.gflops)} / ${fmtNum(R.peak2?.gflops)}`,
        R.peak1 && R.peak2 ? `100 / ${fmtNum((100 * R.peak2.gflops) / (2 * R.peak1.gflops), 0)}%` : '',
        '',
        '',
        '',
      ]);
    }
    if (R.peakRelaxed1)
      rows.push([
        '',
        'peak probe, relaxed_madd (interleaved)',
        '1',
        '',
        fmtNum(R.peakRelaxed1.gflops),
        '100%',
        '',
        '',
        '',
      ]);
    rows.push(null);
  }
  rows.pop();
  return rows;
}

/** A targets table, indented under its heading; the verdicts go into results[key]. */
function targetsSection(out, results, key, heading, targets) {
  const rows = targets.map(([target, met, detail]) => [target, verdict(met), detail]);
  results[key] = rows.map(([target, status, detail]) => ({ target, status, detail }));
  out.push('');
  out.push(heading);
  out.push(
    renderTable(['target', 'status', 'measured'], rows, ['l', 'l', 'l'])
      .split('\n')
      .map((l) => '  ' + l)
      .join('\n'),
  );
}

/**
 * The report's lines (all but the closing "total" line).
 * @param {object} results   the run's results (results.json)
 * @param {{ shapes: number[][], errors: object }} o   errors: why an engine or a peer is missing
 *   ({ engine1, engine2, relaxed, relaxedInfo, tfjs, tfjsMt, ort })
 */
export function report(results, { shapes, errors }) {
  const rows = shapeTable(results, shapes);
  const out = [];
  out.push('');
  {
    // CPU used by other processes (and stolen by the hypervisor) while the shapes were timed
    const c = results.cpuDuringShapes;
    const worst = Object.entries(results.shapes)
      .map(([k, r]) => [k, r.cpu?.otherCores ?? 0])
      .sort((a, b) => b[1] - a[1])[0];
    if (c && (c.otherCores > 0.15 || c.stealCores > 0.15 || (worst && worst[1] > 0.3))) {
      out.push(
        `WARNING: other processes used ${c.otherCores.toFixed(2)} of ${os.cpus().length} cores on average while the shapes were timed` +
          ` (most during ${worst[0]}: ${worst[1].toFixed(2)}; hypervisor steal ${c.stealCores.toFixed(2)}):`,
      );
      out.push(
        '         absolute figures and above all thread scaling are unreliable; ratios within a repetition less so.',
      );
    } else if (!c && results.loadAverageAtStart[0] > 0.8) {
      out.push(
        `WARNING: load average ${results.loadAverageAtStart[0].toFixed(1)} at the start: the machine was busy; figures are unreliable.`,
      );
    }
  }
  out.push(
    `wasm-attention bench — Node ${process.version}, ${results.cpu}${results.quick ? '  (QUICK: 3 reps, not for the record)' : ''}`,
  );
  out.push(
    `engine: ${results.engine.info ? JSON.stringify(results.engine.info) : 'n/a (' + errors.engine1 + ')'}` +
      `${errors.engine2 ? `; 2 threads: n/a (${errors.engine2})` : `; with threads: 2 → ${JSON.stringify(results.engine.info2)}`}` +
      `; relaxed SIMD: ${errors.relaxed ? `n/a (${errors.relaxed})` : JSON.stringify(errors.relaxedInfo)}`,
  );
  out.push(
    `peers: ${results.tfjs ? `@tensorflow/tfjs-backend-wasm ${results.tfjs.version}` : `tfjs n/a (${errors.tfjs})`}${errors.tfjsMt && !errors.tfjs ? ` [2 threads n/a: ${errors.tfjsMt}]` : ''}; ` +
      `${results.ort ? `onnxruntime-web ${results.ort.version}` : `onnxruntime-web n/a (${errors.ort})`}`,
  );
  out.push(
    results.peak.error
      ? `peak probe: n/a (${results.peak.error})`
      : `peak probe (12 independent f32x4 mul+add chains, register-resident), GFLOP/s: 1 thread ${fmtNum(results.peak.start.oneThread)}, ` +
          `2 threads ${fmtNum(results.peak.start.twoThreads)} at the start; interleaved with the shapes (median): ` +
          `${fmtNum(results.peak.interleaved?.oneThread)} and ${fmtNum(results.peak.interleaved?.twoThreads)}`,
  );
  out.push(
    results.peakRelaxed.error
      ? `peak probe, relaxed_madd: n/a (${results.peakRelaxed.error})`
      : `peak probe, relaxed_madd (peak-relaxed.wat: the same 12 chains, one f32x4.relaxed_madd each), GFLOP/s: 1 thread ` +
          `${fmtNum(results.peakRelaxed.start.oneThread)}, 2 threads ${fmtNum(results.peakRelaxed.start.twoThreads)} at the start; ` +
          `interleaved (median): ${fmtNum(results.peakRelaxed.interleaved?.oneThread)}; relaxed ÷ mul+add, 1 thread: ` +
          `${fmtRatio(results.peakRelaxed.interleaved?.oneThread / results.peak.interleaved?.oneThread)}`,
  );
  out.push(
    'self-attention, batch 1, query = key = value, with biases, needWeights false; Float32Array in → Float32Array out;',
  );
  out.push(
    'FLOPs = 4·2·n·d² + 2·2·n²·d; median of ≥ 7 interleaved repetitions after warm-up (small shapes: blocks of calls).',
  );
  out.push('');
  out.push(
    renderTable(
      ['n×d×heads', 'implementation', 'thr', 'median ms', 'GFLOP/s', '% peak', 'ours × faster', 'check', 'note'],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
    ),
  );
  out.push('');
  out.push(
    'ours × faster: a peer\'s time ÷ our best 1-thread time (2-thread peers: ÷ our 2-thread time); "1t÷2t": our best',
  );
  out.push(
    '  1-thread time ÷ our 2-thread time; "cost": needWeights true ÷ false, or the scalar build ÷ the SIMD build; "÷ mul+add": the',
  );
  out.push(
    "  SIMD (mul+add) build's time ÷ the relaxed build's at the same threads. % peak: of the 1-thread peak probe that",
  );
  out.push(
    '  ran interleaved with that shape\'s repetitions (row "peak probe"; relaxed rows: the relaxed_madd probe); 2-thread rows: of twice that (the 2-thread probe',
  );
  out.push(
    "  is shown too, with its % of twice the 1-thread one: on this VM it swings with the other core's availability).",
  );
  out.push(
    'check: output vs a naive float64-accumulated reference, within the contract tolerance (peers: 10× looser).',
  );
  out.push(
    `naive JavaScript is timed up to ${NAIVE_MAX_TOKENS} tokens only (≈1 GFLOP/s: seconds per call above that).`,
  );
  out.push(
    'tfjs: weights pre-transposed to [in, out] and uploaded once (tf.matMul with transposeB misses XNNPACK in 4.22, ~13× slower);',
  );
  out.push(
    '  "via perHead" = one 2-D tf.matMul per head for Q·Kᵀ and P·V, "via batched" = one batched tf.matMul; the faster is used.',
  );
  out.push(
    '  2 threads: the threaded-SIMD build, loaded by hand in Node (tfjs disables threads under Node; see bench/tfjs-peer.mjs).',
  );
  out.push(
    'onnxruntime-web: "via contrib" = com.microsoft Attention + MatMul + Add, "via standard" = plain ai.onnx ops; the faster is used.',
  );
  out.push(
    '† its thread count is fixed per process, so 2 threads run in a separate process, interleaved with our 2-thread',
  );
  out.push('  prepared forward there; its speed-up column is the ratio within that process.');

  if (results.firstCall) {
    out.push('');
    out.push('First call (fresh `node` process, default flags, 256×768×12, 1 thread):');
    for (const [k, r] of Object.entries(results.firstCall)) {
      if (r.error) {
        out.push(`  ${k.padEnd(9)} n/a (${r.error})`);
        continue;
      }
      out.push(
        `  ${k.padEnd(9)} createAttention ${fmtMs(r.createMs)} ms${k === 'prepared' ? `, createMultiHeadAttention ${fmtMs(r.prepareMs)} ms` : ''}, ` +
          `first forward ${fmtMs(r.firstMs)} ms, steady median of next 7 ${fmtMs(r.steadyMs)} ms → first ÷ steady ${fmtRatio(r.firstMs / r.steadyMs)}` +
          ` (incl. createAttention ${fmtRatio((r.createMs + r.prepareMs + r.firstMs) / r.steadyMs)})`,
      );
    }
  }
  if (results.memory) {
    const m = results.memory;
    out.push('');
    if (m.error) out.push(`Peak WebAssembly memory, 16384×512×8 forward, needWeights false: n/a (${m.error})`);
    else
      out.push(
        `Peak WebAssembly memory, 16384×512×8 forward, needWeights false (fresh process, ${m.threads} thread): ` +
          `${fmtMiB(m.after.memoryBytes)} (${fmtMiB(m.before.memoryBytes)} before the call; the call took ${fmtMs(m.ms)} ms = ${fmtNum(mhaFlops(16384, 512) / m.ms / 1e6)} GFLOP/s)`,
      );
  }

  if (results.decode) {
    const drows = [];
    for (const [threads, r] of Object.entries(results.decode)) {
      if (r.error) {
        drows.push(['', '', '', threads, 'n/a', 'n/a', '', '', '', '', r.error]);
        continue;
      }
      const bandwidth = median(r.bandwidth);
      for (const row of r.rows) {
        const { ours, ort, decode, speedup, boundMs } = decodeFigures(row, bandwidth);
        drows.push([
          row.shape,
          decode ? String(row.ctx) : '0',
          String(row.tokens),
          threads,
          fmtMs(ours),
          row.ort?.error || row.ortError ? 'n/a' : fmtMs(ort),
          speedup == null ? 'n/a' : fmtRatio(speedup),
          decode ? fmtMiB(row.bytes) : '',
          decode ? fmtMs(boundMs) : '',
          decode && ours ? fmtRatio(ours / boundMs) : '',
          row.agreesWithOrt === undefined
            ? (row.ortError ?? row.ort?.error ?? '')
            : row.agreesWithOrt
              ? 'agrees with ORT'
              : 'DIFFERS from ORT',
        ]);
      }
      drows.push(['', '', '', '', '', '', '', '', '', '', `copy bandwidth probe: ${fmtNum(bandwidth / 1e9)} GB/s`]);
      drows.push(null);
    }
    drows.pop();
    out.push('');
    out.push(
      'Decoding with a KV cache (prepared layer, needWeights false, no RoPE): one new token after `cache` tokens, or a',
    );
    out.push(
      'prefill of `tokens` from an empty cache; onnxruntime-web: MatMul → com.microsoft GroupQueryAttention (past K/V fed',
    );
    out.push(
      'as inputs) → MatMul, in the same process, interleaved. bytes: weights + cached K/V a step must read; bound: bytes ÷',
    );
    out.push('the copy-bandwidth probe of that process (one core copying 64 MiB; 2 cores may move more).');
    out.push(
      renderTable(
        [
          'shape',
          'cache',
          'tokens',
          'thr',
          'ours ms',
          'ORT ms',
          'ours × faster',
          'bytes',
          'bound ms',
          'ours ÷ bound',
          'note',
        ],
        drows,
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
    );
  }

  out.push(...scalingTables(results, shapes));

  targetsSection(out, results, 'targets', 'Targets of issue 4 (from this run):', issue4Targets(results));
  if (results.decode)
    targetsSection(out, results, 'decodeTargets', 'Targets of issue 9 (from this run):', issue9Targets(results.decode));
  targetsSection(
    out,
    results,
    'issue11Targets',
    'Targets of issue 11 (from this run; ours = our fastest variant at that thread count):',
    issue11Targets(results.shapes),
  );
  const notes = results.notes;
  if (notes.length) {
    out.push('');
    out.push('Notes:');
    for (const nt of notes) out.push('  ' + nt);
  }
  return out;
}
