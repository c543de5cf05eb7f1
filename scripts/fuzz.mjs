// The long differential fuzz: `npm run fuzz -- [cases] [seed]` (default 20000 cases, a seed from
// the clock, printed so a failure can be replayed). Each case is checked against the float64
// reference (tests/js/fuzz-cases.js); the first mismatch is printed and the exit code is 1.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createAttention } = require('../dist/index.cjs');
const { randomCase, runCase } = require('../tests/js/fuzz-cases.js');

const cases = Number(process.argv[2] ?? 20000);
const seed = Number(process.argv[3] ?? Date.now() % 1e9);
if (!Number.isInteger(cases) || cases < 1 || !Number.isInteger(seed)) {
  console.error('usage: node scripts/fuzz.mjs [cases] [seed]');
  process.exit(2);
}

const engines = { 1: await createAttention({ threads: 1 }), 2: await createAttention({ threads: 2 }) };
const heap = () => [engines[1].memoryStats().heapInUse, engines[2].memoryStats().heapInUse];
const heapBefore = heap();
let failed = 0;
for (let i = 0; i < cases; i++) {
  try {
    runCase(engines, randomCase(seed, i), `case ${i}`);
  } catch (e) {
    failed++;
    console.error(`${e.message}\n  replay: node scripts/fuzz.mjs ${i + 1} ${seed}`);
    if (failed >= 5) break;
  }
  if ((i + 1) % 5000 === 0) console.log(`${i + 1} cases…`);
}
const heapAfter = heap();
const leaked = heapAfter.some((h, k) => h !== heapBefore[k]);
engines[1].dispose();
engines[2].dispose();
console.log(`fuzz seed ${seed}: ${cases} cases, ${failed} failed; heap in use ${heapBefore} → ${heapAfter}`);
process.exit(failed || leaked ? 1 : 0);
