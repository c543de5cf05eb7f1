'use strict';
// The shipped .wasm is a SIMD128 build: its text has many f32x4 multiplies and adds and vector
// loads. A scalar build (or one whose kernels did not vectorise) fails here.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const WASM = path.join(ROOT, 'dist', 'wasm-attention.wasm');

function count(text, op) {
  const re = new RegExp(`\\b${op.replace('.', '\\.')}\\b`, 'g');
  return (text.match(re) || []).length;
}

let wat;
beforeAll(() => {
  if (!fs.existsSync(WASM)) throw new Error(`${WASM} is missing: run bash scripts/build.sh`);
  wat = execFileSync('wasm2wat', ['--enable-all', WASM], { maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' });
});

test.each([
  ['f32x4.mul', 20],
  ['f32x4.add', 20],
  ['v128.load', 20],
  ['v128.store', 5],
])('dist/wasm-attention.wasm contains at least %s × %i', (op, min) => {
  const n = count(wat, op);
  if (n < min) throw new Error(`${op} occurs ${n} times in dist/wasm-attention.wasm, expected ≥ ${min}: not a SIMD build?`);
});

test('the package reports simd: true', async () => {
  const { createAttention } = require('wasm-attention');
  const attn = await createAttention({ threads: 1 });
  expect(attn.info.simd).toBe(true);
});
