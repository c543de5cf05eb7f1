#!/usr/bin/env node
// The model rows of `npm run bench` (run.mjs runs them last; --skip=model leaves them out), also
// runnable alone. Whole models, tokens per second: a 128-token prefill and one decode step after
// 128 and 1024 cached tokens (the poem model: after 128 and 255, its last position), for the demo's
// poem model and a random-weight model of SmolLM-135M's shape, ours (loadModel) against
// onnxruntime-web running the same checkpoint exported to ONNX by bench/export-onnx.py (torch.onnx),
// at 1 and 2 threads (one child process each: onnxruntime-web's thread count is per process).
// Checkpoints and ONNX files are made on first use in bench/.cache/ (model-files.mjs).
//
//   node bench/model.mjs [--quick] [--models=poem,smollm] [--threads=1,2] [--json=bench/model-results.json]
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CACHE, ensurePoemCheckpoint, ensureSmolCheckpoint } from './model-files.mjs';
import { installPeers, installPythonTorch, PYTHON } from './install-peers.mjs';
import { runChild } from './child-process.mjs';
import { modelReport } from './model-report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

export const MODELS = {
  poem: { label: 'tang-poems', checkpoint: ensurePoemCheckpoint },
  smollm: { label: 'smollm-135m-shape', checkpoint: ensureSmolCheckpoint },
};

/** bench/.cache/NAME.onnx, exported again when older than its checkpoint or the scripts that make it. */
export function ensureOnnx(name, dir) {
  const out = path.join(CACHE, `${name}.onnx`);
  const inputs = [
    path.join(here, 'export-onnx.py'),
    path.join(here, '..', 'scripts', 'model_references.py'),
    path.join(dir, 'config.json'),
    path.join(dir, 'model.safetensors'),
  ];
  const newest = Math.max(...inputs.map((f) => fs.statSync(f).mtimeMs));
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= newest) return out;
  const why = installPythonTorch();
  if (why) throw new Error(why);
  log(`bench: exporting ${name} to ONNX with torch.onnx (bench/export-onnx.py) …`);
  fs.mkdirSync(CACHE, { recursive: true }); // the poem model's checkpoint is not in the cache: nothing made it yet
  const r = spawnSync(PYTHON, ['-W', 'ignore', path.join(here, 'export-onnx.py'), dir, out], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`bench/export-onnx.py ${name} failed (status ${r.status})`);
  return out;
}

/** Makes what is missing, runs one child per thread count; the results (what model-report.mjs reads). */
export async function runModelRows({ quick = false, models = Object.keys(MODELS), threads = [1, 2] } = {}) {
  const unknown = models.filter((m) => !MODELS[m]);
  if (unknown.length)
    throw new RangeError(`bench/model.mjs: --models takes ${Object.keys(MODELS).join(', ')}; got ${unknown}`);
  const res = { models: models.map((m) => MODELS[m].label), byThreads: {} };
  const depsError = installPeers();
  if (depsError) return { ...res, error: depsError };
  const specs = [];
  for (const m of models) {
    try {
      const dir = MODELS[m].checkpoint();
      specs.push([MODELS[m].label, dir, ensureOnnx(MODELS[m].label, dir)].join(':'));
    } catch (e) {
      res[`${m}Error`] = String(e?.message ?? e).split('\n')[0];
      log(`bench: ${m}: ${res[`${m}Error`]}`);
    }
  }
  if (!specs.length) return { ...res, error: 'no model could be prepared' };
  for (const t of threads) {
    log(`bench: model rows, ${t} thread(s) (separate process) …`);
    res.byThreads[t] = await runChild(
      [
        path.join(here, 'model-rows.mjs'),
        `--threads=${t}`,
        `--models=${specs.join(',')}`,
        ...(quick ? ['--quick'] : []),
      ],
      30 * 60e3,
      process.execArgv,
    );
  }
  return res;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const T0 = performance.now();
  const res = await runModelRows({
    quick: argv.includes('--quick'),
    models: opt('models')?.split(',') ?? Object.keys(MODELS),
    threads: opt('threads')?.split(',').map(Number) ?? [1, 2],
  });
  res.date = new Date().toISOString();
  res.wallSeconds = (performance.now() - T0) / 1000;
  const json = path.resolve(opt('json') ?? path.join(here, 'model-results.json'));
  fs.writeFileSync(json, JSON.stringify(res, null, 1) + '\n');
  console.log(modelReport(res).join('\n'));
  console.log(`\ntotal ${res.wallSeconds.toFixed(0)} s; raw numbers in ${path.relative(process.cwd(), json)}`);
}
