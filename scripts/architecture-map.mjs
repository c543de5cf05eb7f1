// docs/ARCHITECTURE.md as data: which files it names, read the way its tables are written. A section
// whose heading holds a folder in backticks (## `src/kernels/`) names the files its table rows give in
// backticks, relative to that folder (`f32-gemm.cpp`, or `model/linear.cpp` from a parent's section).
// The house-rules test compares that with the tracked source files, so the map cannot fall behind.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './house-rules.mjs';

// The folders a newcomer walks through: the code, its scripts and its benchmarks.
export const MAPPED_FOLDERS = ['bindings/', 'lib/', 'src/', 'viz/', 'web/', 'scripts/', 'bench/'];
const MAPPED_FILE = /\.(mjs|cjs|js|ts|mts|cpp|h|css|html|sh|py|wat|json)$/;

export function mappedFiles() {
  return execFileSync('git', ['ls-files', '--', ...MAPPED_FOLDERS], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => MAPPED_FILE.test(file) && !file.endsWith('package-lock.json'));
}

/** Every path the map names, made relative to the repository: a Set. */
export function namedPaths(text = readFileSync(join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8')) {
  const named = new Set();
  let folder = null;
  for (const line of text.split('\n')) {
    const heading = /^#{2,4}\s.*?`([\w./-]+\/)`/.exec(line);
    if (heading) folder = heading[1];
    else if (/^#{1,4}\s/.test(line)) folder = null;
    if (folder === null || !line.startsWith('|')) continue;
    const firstCell = line.split('|')[1] ?? '';
    for (const [, name] of firstCell.matchAll(/`([^`]+)`/g)) named.add(folder + name);
  }
  return named;
}

/** Tracked files of the mapped folders that the map does not name. */
export function unmappedFiles() {
  const named = namedPaths();
  return mappedFiles().filter((file) => !named.has(file));
}

/** Names in the map that are no tracked file (a file moved or removed, the map not told). */
export function staleNames() {
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const files = new Set(tracked);
  const folders = new Set(
    tracked.flatMap((f) =>
      f
        .split('/')
        .slice(0, -1)
        .map((_, i, p) => `${p.slice(0, i + 1).join('/')}/`),
    ),
  );
  return [...namedPaths()].filter((name) => !files.has(name) && !folders.has(name));
}
