// The package as `npm install` lays it out, without `npm pack` (whose prepack runs the whole build):
// every path of package.json's `files` (and package.json) copied into
// <tmp>/node_modules/wasm-attention/, and the `bin` linked into node_modules/.bin/ as npm links it.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('./harness');

const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** → { project, dir (the installed package), bin (the .bin link), remove() } */
function installPackageCopy() {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'installed-demo-'));
  const dir = path.join(project, 'node_modules', 'wasm-attention');
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of [...PKG.files, 'package.json']) {
    const from = path.join(ROOT, entry);
    if (!fs.existsSync(from)) throw new Error(`package.json's files names ${entry}, which is missing`);
    fs.cpSync(from, path.join(dir, entry), { recursive: true });
  }
  const binDir = path.join(project, 'node_modules', '.bin');
  fs.mkdirSync(binDir);
  const [[name, target]] = Object.entries(PKG.bin);
  const bin = path.join(binDir, name);
  fs.symlinkSync(path.join('..', 'wasm-attention', target), bin);
  return { project, dir, bin, remove: () => fs.rmSync(project, { recursive: true, force: true }) };
}

module.exports = { PKG, installPackageCopy };
