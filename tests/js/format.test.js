'use strict';
// The JavaScript is formatted as .prettierrc.json says (C++ has its own check: clang-format in ctest).
// The failure lists every file that is off, so `npx prettier --write <file>` is the fix. Prettier runs
// in a child process: it loads its plugins with dynamic import(), which Jest's module sandbox refuses.
const { execFileSync, spawnSync } = require('child_process');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const PRETTIER = path.join(ROOT, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
const tracked = execFileSync('git', ['ls-files', '-z', '--', '*.js', '*.mjs', '*.cjs'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);

const prettier = (args) => spawnSync(process.execPath, [PRETTIER, ...args], { cwd: ROOT, encoding: 'utf8' });

const checkText = (input) =>
  spawnSync(process.execPath, [PRETTIER, '--check', '--stdin-filepath', 'bindings/example.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
    input,
  });

test('the tree has JavaScript files to check, and the check tells formatted from not', () => {
  expect(tracked.length).toBeGreaterThan(100);
  expect(checkText('const  a = {b:1}\n').status).not.toBe(0);
  expect(checkText('const a = { b: 1 };\n').status).toBe(0);
});

test('every JavaScript file that .prettierignore does not exclude is formatted', () => {
  const r = prettier(['--list-different', '--ignore-unknown', ...tracked]);
  const off = r.stdout.split('\n').filter(Boolean);
  expect({ off, stderr: r.stderr }).toEqual({ off: [], stderr: '' });
}, 120000);
