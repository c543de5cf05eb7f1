'use strict';
// Engines of 1 and 2 threads for a test file: created before its tests, disposed after them.
// relaxed.test.js reruns some suites in a Node with relaxed SIMD and WA_TEST_RELAXED=1: every engine
// made here must then be a relaxed build, or that rerun would test the SIMD build twice.
const { createAttention } = require('wasm-attention');

const EXPECT_RELAXED = process.env.WA_TEST_RELAXED === '1';

/** createAttention({ threads }), checked to be a relaxed build under WA_TEST_RELAXED=1. */
async function createEngine(threads) {
  const attn = await createAttention({ threads });
  if (EXPECT_RELAXED && attn.info.relaxedSimd !== true) {
    attn.dispose();
    throw new Error(
      `WA_TEST_RELAXED=1, but createAttention({ threads: ${threads} }) gave info ${JSON.stringify(attn.info)}`,
    );
  }
  return attn;
}

/**
 * Registers beforeAll/afterAll; returns { 1: attn, 2: attn }, filled once beforeAll has run. 'scalar'
 * among the counts adds the scalar build at 1 thread (never relaxed, so not checked as createEngine's).
 */
function useEngines(threadCounts = [1, 2]) {
  const engines = {};
  beforeAll(async () => {
    for (const t of threadCounts)
      engines[t] = t === 'scalar' ? await createAttention({ simd: false, threads: 1 }) : await createEngine(t);
  });
  afterAll(() => {
    for (const attn of Object.values(engines)) attn.dispose();
  });
  return engines;
}

module.exports = { useEngines, createEngine };
