'use strict';
// Runs bits-cases.js for one build in a child Node that has relaxed SIMD (Node 20 needs the flag):
// shared by scripts/record-bits.js, which records the hashes, and bits.test.js, which checks them.
const { spawnSync } = require('child_process');
const path = require('path');
const { BUILDS, NODE_FLAGS } = require('./bits-cases');

/** { case: { array: sha256 } } of `build` at `threads`; throws with the child's stderr when it failed. */
function runBuild(build, threads) {
  const r = spawnSync(
    process.execPath,
    [...NODE_FLAGS, path.join(__dirname, 'bits-cases.js'), build, String(threads)],
    { encoding: 'utf8', timeout: 180000, maxBuffer: 64 << 20 },
  );
  if (r.status !== 0)
    throw new Error(`${build} at ${threads} threads: child exited ${r.status} (${r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

module.exports = { BUILDS, runBuild };
