'use strict';
// A fresh Node with V8 flags of its own (an engine without SIMD, with or without relaxed SIMD):
// what a test cannot get inside Jest's process.
const { spawnSync } = require('child_process');
const path = require('path');

const DIST = path.join(__dirname, '..', '..', 'dist');

/** Runs `code` (CommonJS, with createAttention in scope) in a fresh Node; returns { status, signal, stdout, stderr, ms }. */
function runNode(code, { flags = [], timeout = 60000 } = {}) {
  const script = `const { createAttention } = require(${JSON.stringify(path.join(DIST, 'index.cjs'))});\n${code}`;
  const started = Date.now();
  const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', timeout });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

module.exports = { runNode, DIST };
