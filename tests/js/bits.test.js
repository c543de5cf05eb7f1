'use strict';
// Every build at 1 and 2 threads gives, bit for bit, the outputs recorded in tests/fixtures/bits/hashes.json
// (scripts/record-bits.js, on the tree before the core was split into files by job): a change meant
// to keep the numbers keeps every bit of them, on every path (tests/js/bits-cases.js).
const fs = require('fs');
const path = require('path');
const { BUILDS, runBuild } = require('./bits-run');
const { CASES } = require('./bits-cases');

const RECORDED = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'bits', 'hashes.json'), 'utf8'));
const RUNS = Object.entries(BUILDS).flatMap(([build, { threads }]) => threads.map((t) => [build, t]));

test('the fixture holds every build, thread count and case', () => {
  expect(Object.keys(RECORDED).sort()).toEqual(RUNS.map(([b, t]) => `${b} threads ${t}`).sort());
  for (const hashes of Object.values(RECORDED)) expect(Object.keys(hashes).sort()).toEqual(Object.keys(CASES).sort());
});

test.each(RUNS)(
  '%s at %i thread(s): every array of every case has its recorded bits',
  (build, threads) => {
    const want = RECORDED[`${build} threads ${threads}`];
    const got = runBuild(build, threads);
    const differ = [];
    for (const [name, arrays] of Object.entries(want)) {
      for (const [array, hash] of Object.entries(arrays)) {
        if (got[name]?.[array] !== hash) differ.push(`${build} threads ${threads}: case '${name}' ${array}`);
      }
      for (const array of Object.keys(got[name] ?? {})) {
        if (!(array in arrays))
          differ.push(`${build} threads ${threads}: case '${name}' returns ${array}, not recorded`);
      }
    }
    expect(differ).toEqual([]);
  },
  200000,
);
