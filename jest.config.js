// Jest's four projects, so one kind of test runs alone (`npx jest --selectProjects unit`): `unit` needs
// nothing built, `engine` the package in dist/ (a build), `browser` that and Chromium, `bundlers` the
// packed tarball. `npm test` runs them all; `npm run test:quick` (scripts/test-quick.mjs) runs unit and
// engine less the files tests/test-sets.js names. CONTRIBUTING.md says how to use them.
'use strict';

const { UNIT, QUICK_LEAVES_OUT } = require('./tests/test-sets.js');

// scripts/test-quick.mjs sets WA_TEST_QUICK: both Node projects then skip the slow files.
const skipped = process.env.WA_TEST_QUICK ? QUICK_LEAVES_OUT.map((name) => `/tests/js/${name}\\.test\\.js$`) : [];

const file = (name) => `<rootDir>/tests/js/${name}.test.js`;
const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  moduleNameMapper: { '^wasm-attention$': '<rootDir>/dist/index.cjs' },
  testTimeout: 120000,
};

module.exports = {
  testTimeout: 120000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: UNIT.map(file),
      testPathIgnorePatterns: ['/node_modules/', ...skipped],
    },
    {
      ...common,
      displayName: 'engine',
      testMatch: ['<rootDir>/tests/js/**/*.test.js'],
      testPathIgnorePatterns: ['/node_modules/', ...UNIT.map((name) => `/tests/js/${name}\\.test\\.js$`), ...skipped],
    },
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/tests/browser/**/*.test.js'] },
    { ...common, displayName: 'bundlers', testMatch: ['<rootDir>/tests/bundlers/**/*.test.js'] },
  ],
};
