'use strict';
// Loads tests/fixtures/*.json (written by scripts/make-fixtures.py from PyTorch) as API arguments.
const fs = require('fs');
const path = require('path');

const FIXTURE_DIR = path.join(__dirname, '..', 'fixtures');

/** A mask {dtype, data} → Uint8Array (bool) or Float32Array (additive; "-Infinity" → -∞). */
function decodeMask(m) {
  if (m.dtype === 'bool') return Uint8Array.from(m.data);
  if (m.dtype === 'float32') return Float32Array.from(m.data, Number);
  throw new Error(`unknown mask dtype ${m.dtype}`);
}

/** Fixture args → package arguments: number lists become Float32Arrays, masks typed arrays. */
function decodeArgs(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    if (Array.isArray(v)) out[k] = Float32Array.from(v);
    else if (v && typeof v === 'object' && 'dtype' in v) out[k] = decodeMask(v);
    else out[k] = v;
  }
  return out;
}

function loadFixtures() {
  const files = fs
    .readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
  return files.map((f) => {
    const fx = JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, f), 'utf8'));
    fx.file = f;
    fx.decodedArgs = decodeArgs(fx.args);
    return fx;
  });
}

module.exports = { loadFixtures, decodeArgs, FIXTURE_DIR };
