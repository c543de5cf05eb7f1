// The bench's own dependencies (the peers, in bench/package.json): installed into bench/ the
// first time, and again when its lockfile changes, so `npm run bench` needs no separate step.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

/** Installs what is missing; null when all is there, else the reason the peers are unavailable. */
export function installPeers() {
  const deps = Object.keys(JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8')).dependencies || {});
  const nm = path.join(here, 'node_modules');
  const marker = path.join(nm, '.package-lock.json');
  const lock = path.join(here, 'package-lock.json');
  const missing = deps.filter((d) => !fs.existsSync(path.join(nm, d, 'package.json')));
  const stale = fs.existsSync(lock) && fs.existsSync(marker) && fs.statSync(lock).mtimeMs > fs.statSync(marker).mtimeMs;
  if (!missing.length && !stale) return null;
  log(
    `bench: installing the benchmark's own dependencies in bench/ (${missing.length ? 'missing: ' + missing.join(', ') : 'lockfile changed'})`,
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund'], {
    cwd: here,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0)
    return `npm install in bench/ failed (status ${r.status}${r.error ? ', ' + r.error.message : ''})`;
  return null;
}

export const PYTHON = '/usr/bin/python3';

/**
 * Debian's python3-torch, which bench/export-onnx.py needs to write the model rows' ONNX files:
 * installed with apt-get when missing (as scripts/bootstrap.sh installs Debian packages; OpenBLAS
 * because torch falls back to the reference BLAS without it). null when there, else the reason.
 */
export function installPythonTorch() {
  const has = () => spawnSync(PYTHON, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
  if (has()) return null;
  log('bench: installing Debian packages for the ONNX export: python3-torch libopenblas0-pthread');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (args) =>
    spawnSync(sudo[0] ?? 'apt-get', [...(sudo.length ? ['apt-get'] : []), ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  apt(['update', '-qq']);
  const r = apt(['install', '-y', '-qq', 'python3-torch', 'libopenblas0-pthread']);
  if (r.status !== 0 || !has()) return `apt-get install python3-torch failed (status ${r.status})`;
  return null;
}
