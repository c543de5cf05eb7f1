'use strict';
// mulberry32, the sampler's seeded generator, exported by every entry so a page (the demo's textbook)
// draws the same numbers from a seed as the package does, without importing the package's internals.
const { execFileSync } = require('child_process');
const path = require('path');
const { mulberry32 } = require('wasm-attention');

const ROOT = path.join(__dirname, '..', '..');

test('mulberry32 from require: floats in [0, 1), one sequence per seed', () => {
  const a = mulberry32(42);
  const first = Array.from({ length: 5 }, () => a());
  for (const x of first) expect(x >= 0 && x < 1).toBe(true);
  const again = mulberry32(42);
  expect(Array.from({ length: 5 }, () => again())).toEqual(first);
  const other = mulberry32(43);
  expect(Array.from({ length: 5 }, () => other())).not.toEqual(first);
});

test('the ES module entries give the sequence require gives', () => {
  const a = mulberry32(7);
  const expected = Array.from({ length: 4 }, () => a());
  const script = `const entries = await Promise.all([${['index.mjs', 'node.mjs']
    .map((f) => `import(${JSON.stringify(path.join(ROOT, 'dist', f))})`)
    .join(', ')}]);
    console.log(JSON.stringify(entries.map((m) => { const r = m.mulberry32(7); return [r(), r(), r(), r()]; })));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([expected, expected]);
});
