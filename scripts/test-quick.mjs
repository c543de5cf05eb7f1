// npm run test:quick: the one-minute loop. Jest's unit project, and the engine project against the build
// already in dist/ (none is made here), less the slow files tests/test-sets.js names; then what it left
// out, so nobody mistakes it for `npm test`. Arguments after `--` go to Jest (a path pattern, -t …).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './house-rules.mjs';

const require = createRequire(import.meta.url);
const { QUICK_LEAVES_OUT } = require('../tests/test-sets.js');
const hasBuild = existsSync(join(ROOT, 'dist', 'index.cjs'));

// The newest modification time under a folder: a source newer than everything in dist/ means the build
// is stale (assemble-dist rewrites only the files whose content changed).
function newest(folder) {
  let latest = 0;
  for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return latest;
}

const projects = hasBuild ? ['unit', 'engine'] : ['unit'];
const jest = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const started = performance.now();
const run = spawnSync(process.execPath, [jest, '--selectProjects', ...projects, ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, WA_TEST_QUICK: '1' },
});
const seconds = ((performance.now() - started) / 1000).toFixed(0);

console.log(
  `\ntest:quick ran Jest's ${projects.join(' and ')} project${projects.length > 1 ? 's' : ''} in ${seconds} s. Left out:`,
);
if (!hasBuild) console.log('  - the engine project: there is no build (dist/). `npm run build` makes one.');
else {
  const built = newest('dist');
  const stale = ['bindings', 'lib', 'src'].filter((folder) => newest(folder) > built);
  if (stale.length > 0)
    console.log(
      `  ! dist/ is older than ${stale.join(', ')}: run \`node scripts/assemble-dist.mjs\` (JavaScript) or \`npm run build\` (C++)`,
    );
}
console.log(`  - the slow files: ${QUICK_LEAVES_OUT.map((name) => `${name}.test.js`).join(', ')}`);
console.log('  - the browser and bundlers projects, and the native ctest runs (Release, ASan + UBSan)');
console.log('  `npm test` runs everything.');
process.exitCode = run.status ?? 1;
