#!/usr/bin/env node
'use strict';
// Records tests/fixtures/bits/hashes.json: the sha256 of every array of every case of tests/js/bits-cases.js
// on every build at each of its thread counts, from the dist/ built now. Run it only on a tree
// whose numbers are known good (before a refactor that must not change one bit), then commit the
// file: tests/js/bits.test.js compares every later build against it.
//   node scripts/record-bits.js
const fs = require('fs');
const path = require('path');
const { BUILDS, runBuild } = require('../tests/js/bits-run');

const FIXTURE = path.join(__dirname, '..', 'tests', 'fixtures', 'bits', 'hashes.json');

const recorded = {};
for (const [build, { threads }] of Object.entries(BUILDS)) {
  for (const t of threads) {
    recorded[`${build} threads ${t}`] = runBuild(build, t);
    console.log(`${build} threads ${t}: ${Object.keys(recorded[`${build} threads ${t}`]).length} cases`);
  }
}
fs.writeFileSync(FIXTURE, `${JSON.stringify(recorded, null, 1)}\n`);
console.log(`wrote ${path.relative(process.cwd(), FIXTURE)}`);
