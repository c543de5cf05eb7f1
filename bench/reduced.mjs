#!/usr/bin/env node
// The reduced-precision rows of `npm run bench` (run.mjs runs them after the model rows; --skip=reduced
// leaves them out), also runnable alone: a decode step per weight dtype (f32, f16, bf16, int8) and
// KV-cache dtype (f32, f16, bf16) for the MHA 768/12 and GQA 2048/32/8 prepared layers and the
// SmolLM-135M-shaped model, beside onnxruntime-web's fp32 and int8 steps, with the bytes each step
// reads against a copy-bandwidth probe (bench/reduced-rows.mjs measures, one child process per thread
// count; bench/reduced-report.mjs prints).
//
//   node bench/reduced.mjs [--quick] [--threads=1,2] [--parts=layer,model] [--json=bench/reduced-results.json]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPeers } from './install-peers.mjs';
import { runChild } from './child-process.mjs';
import { ensureSmolCheckpoint } from './model-files.mjs';
import { ensureOnnx } from './model.mjs';
import { reducedReport } from './reduced-report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

/** Runs the rows (one child per thread count) → { byThreads } or { error }. */
export async function runReducedRows({ quick = false, threads = [1], parts = ['layer', 'model'] } = {}) {
  const depsError = installPeers();
  if (depsError) return { error: depsError };
  const args = [`--parts=${parts.join(',')}`, ...(quick ? ['--quick'] : [])];
  if (parts.includes('model')) {
    try {
      const dir = ensureSmolCheckpoint();
      args.push(`--smollm=${dir}:${ensureOnnx('smollm-135m-shape', dir)}`);
    } catch (e) {
      log(`bench: reduced rows without the model: ${String(e?.message ?? e).split('\n')[0]}`);
    }
  }
  const res = { byThreads: {} };
  for (const t of threads) {
    log(`bench: reduced-precision decode rows, ${t} thread(s) (separate process) …`);
    res.byThreads[t] = await runChild([path.join(here, 'reduced-rows.mjs'), `--threads=${t}`, ...args], 30 * 60e3);
  }
  return res;
}

/** run.mjs's one line: runs the rows into results.reduced and returns the report's lines. */
export async function reducedSection(quick, results) {
  results.reduced = await runReducedRows({ quick });
  return reducedReport(results.reduced);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const T0 = performance.now();
  const res = await runReducedRows({
    quick: argv.includes('--quick'),
    threads: opt('threads')?.split(',').map(Number) ?? [1],
    parts: opt('parts')?.split(',') ?? ['layer', 'model'],
  });
  res.date = new Date().toISOString();
  res.wallSeconds = (performance.now() - T0) / 1000;
  const json = path.resolve(opt('json') ?? path.join(here, 'reduced-results.json'));
  fs.writeFileSync(json, JSON.stringify(res, null, 1) + '\n');
  console.log(reducedReport(res).join('\n'));
  console.log(`\ntotal ${res.wallSeconds.toFixed(0)} s; raw numbers in ${path.relative(process.cwd(), json)}`);
}
