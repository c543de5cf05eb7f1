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
