// CommonJS entry (Node): same API as index.mjs.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createAttentionWith, VERSION } = require('./create.cjs');

const glueName = (variant) => (variant === 'mt' ? 'wasm-attention-mt' : 'wasm-attention');
const locateFile = (name) => path.join(__dirname, name);

const loader = {
  isNode: true,
  factory: async (variant) => require(`./${glueName(variant)}.cjs`),
  // Emscripten 3.1.6 would fetch() a file path under Node and fail: read the bytes ourselves.
  wasmBytes: async (variant, userLocateFile) =>
    fs.promises.readFile((userLocateFile ?? locateFile)(`${glueName(variant)}.wasm`)),
  locateFile,
  hardwareThreads: () => os.availableParallelism?.() ?? os.cpus().length,
};

async function createAttention(options) {
  return createAttentionWith(loader, options);
}

module.exports = { createAttention, version: VERSION };
