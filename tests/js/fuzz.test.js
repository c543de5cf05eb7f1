'use strict';
// Seeded differential fuzz: 1,200 random small cases (fuzz-cases.js) against the float64
// reference, on engines of 1 and 2 threads; every 10th case also runs on the other engine and must
// give bit-identical results. `npm run fuzz N` runs N cases (scripts/fuzz.mjs).
const { useEngines } = require('./engines');
const { randomCase, runCase } = require('./fuzz-cases');

const SEED = 20261201;
const CASES = 1200;

const engines = useEngines();

/** Same bits everywhere (any NaN equals any NaN). */
function expectSameBits(a, b, label) {
  if (a === null || b === null) {
    if (a !== b) throw new Error(`${label}: one result is null`);
    return;
  }
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i]) && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) {
      throw new Error(`${label}: index ${i} is ${a[i]} on one engine and ${b[i]} on the other`);
    }
  }
}

test(`${CASES} random cases agree with the float64 reference (seed ${SEED})`, () => {
  const counts = { poisoned: 0, prepared: 0, twoThreads: 0, fused: 0, cached: 0, decoder: 0 };
  const heapBefore = { 1: engines[1].memoryStats().heapInUse, 2: engines[2].memoryStats().heapInUse };
  for (let i = 0; i < CASES; i++) {
    const c = randomCase(SEED, i);
    const got = runCase(engines, c, `case ${i}`);
    if (i % 10 === 0) {
      const other = runCase(engines, { ...c, threads: 3 - c.threads }, `case ${i} (other engine)`);
      expectSameBits(got.output, other.output, `case ${i} output, 1 vs 2 threads`);
      expectSameBits(got.weights, other.weights, `case ${i} weights, 1 vs 2 threads`);
    }
    counts.poisoned += c.poison ? 1 : 0;
    counts.prepared += c.prepared ? 1 : 0;
    counts.twoThreads += c.threads === 2 ? 1 : 0;
    counts.fused += c.o.needWeights === false ? 1 : 0;
    counts.cached += c.cached ? 1 : 0;
    counts.decoder += ['numKvHeads', 'headDim', 'rope', 'alibi', 'slidingWindow', 'positionOffset'].some(
      (k) => k in c.o,
    )
      ? 1
      : 0;
  }
  // the generator really mixes what it claims to
  for (const [what, n] of Object.entries(counts)) {
    if (n < CASES / 50) throw new Error(`only ${n} ${what} cases of ${CASES}`);
  }
  expect(engines[1].memoryStats().heapInUse).toBe(heapBefore[1]);
  expect(engines[2].memoryStats().heapInUse).toBe(heapBefore[2]);
});
