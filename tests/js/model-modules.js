'use strict';
// lib/model/*.mjs (ES modules, with @huggingface/tokenizers) for the Jest tests, which run CommonJS
// here: esbuild bundles them into one CommonJS text, evaluated in the test's own realm so that errors
// are this realm's TypeError and RangeError. Also the committed model fixtures, read as files.
const fs = require('fs');
const path = require('path');
const { buildSync } = require('esbuild');

const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(ROOT, 'tests', 'fixtures', 'models');
const MODULES = ['config', 'checkpoint', 'tokenizer', 'sampling', 'families/registry'];

let cached;
function modelModules() {
  if (cached) return cached;
  const { outputFiles } = buildSync({
    stdin: {
      contents: [
        ...MODULES.map((m) => `export * from './lib/model/${m}.mjs';`),
        "export { readSafetensors } from './lib/readers/safetensors.mjs';",
        "export { mulberry32 } from './lib/random.mjs';",
      ].join('\n'),
      resolveDir: ROOT,
      sourcefile: 'model-modules.mjs',
    },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    write: false,
    logLevel: 'silent',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, require);
  cached = module.exports;
  return cached;
}

/** The fixture folders: one tiny checkpoint each (see tests/fixtures/models/README.md). */
const fixtureNames = () =>
  fs
    .readdirSync(FIXTURES)
    .filter((n) => fs.statSync(path.join(FIXTURES, n)).isDirectory())
    .sort();

/** A fixture's files: config, tokenizer, expected (parsed), weight files (bytes by name), reference arrays. */
function loadFixture(name) {
  const dir = path.join(FIXTURES, name);
  const json = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const files = {};
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.safetensors')))
    files[f] = fs.readFileSync(path.join(dir, f));
  const expected = json('expected.json');
  const raw = fs.readFileSync(path.join(dir, 'reference.f32'));
  const floats = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  const reference = {};
  for (const [key, { offset, shape }] of Object.entries(expected.sections)) {
    reference[key] = { shape, data: floats.subarray(offset, offset + shape.reduce((a, b) => a * b, 1)) };
  }
  const index = fs.existsSync(path.join(dir, 'model.safetensors.index.json'))
    ? json('model.safetensors.index.json')
    : null;
  return {
    name,
    config: json('config.json'),
    tokenizer: json('tokenizer.json'),
    expected,
    files,
    index,
    reference,
    floatCount: floats.length,
  };
}

module.exports = { modelModules, fixtureNames, loadFixture, FIXTURES };
