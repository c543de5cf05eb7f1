'use strict';
// Every shipped .wasm (dist/wasm-attention.wasm and any other build in dist/, e.g. the pthreads one)
// is a SIMD128 build: its text has many f32x4 multiplies and adds and vector loads. A scalar build
// (or one whose kernels did not vectorise) fails here.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const MAIN = 'wasm-attention.wasm';

function count(text, op) {
  const re = new RegExp(`\\b${op.replace('.', '\\.')}\\b`, 'g');
  return (text.match(re) || []).length;
}

const wats = {};
beforeAll(() => {
  if (!fs.existsSync(path.join(DIST, MAIN))) throw new Error(`dist/${MAIN} is missing: run bash scripts/build.sh`);
  for (const f of fs.readdirSync(DIST).filter((n) => n.endsWith('.wasm'))) {
    wats[f] = execFileSync('wasm2wat', ['--enable-all', path.join(DIST, f)], { maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' });
  }
});

test.each([
  ['f32x4.mul', 20],
  ['f32x4.add', 20],
  ['v128.load', 20],
  ['v128.store', 5],
])('every dist/*.wasm contains at least %s × %i', (op, min) => {
  expect(Object.keys(wats)).toContain(MAIN);
  for (const [f, wat] of Object.entries(wats)) {
    const n = count(wat, op);
    if (n < min) throw new Error(`${op} occurs ${n} times in dist/${f}, expected ≥ ${min}: not a SIMD build?`);
  }
});

test('the package reports simd: true', async () => {
  const { createAttention } = require('wasm-attention');
  const attn = await createAttention({ threads: 1 });
  expect(attn.info.simd).toBe(true);
});
