// Which tests/js files form the unit project (no build needed) and which the quick loop leaves out:
// read by jest.config.js, scripts/test-quick.mjs and tests/js/house-rules.test.js.
'use strict';

// tests/js files that load neither the package nor dist/: plain JavaScript, formatting, documents, the
// house rules. tests/js/house-rules.test.js checks that none of them requires the build.
const UNIT = [
  'documents',
  'format',
  'house-rules',
  'model-checkpoint',
  'model-config',
  'model-fixtures',
  'model-sampling',
  'model-tokenizer',
  'poem-model-files',
];

// Files the quick loop leaves out so it stays under a minute on 2 cores, the longest first measured:
// the tarball packed and installed, the relaxed builds re-running five suites, TypeScript compiling
// every entry, long randomized or many-threaded comparisons. npm test runs them.
const QUICK_LEAVES_OUT = [
  'pack',
  'relaxed',
  'model-api-entries',
  'model-sampling',
  'reduced-cache',
  'doc-examples-types',
  'reduced-types',
  'format',
  'safetensors',
  'values',
  'model-types',
  'weights-entries',
  'pool-split',
  'reduced-weights-model',
];

module.exports = { UNIT, QUICK_LEAVES_OUT };
