// CommonJS entry (Node): same API as index.mjs.
const fs = require('node:fs');
const path = require('node:path');
const { createAttentionWith, VERSION } = require('./create.cjs');

const WASM = 'wasm-attention.wasm';

const loader = {
  factory: async () => require('./wasm-attention.cjs'),
  // Emscripten 3.1.6 would fetch() a file path under Node and fail: read the bytes ourselves.
  wasmBytes: async (locateFile) => fs.promises.readFile(locateFile ? locateFile(WASM) : path.join(__dirname, WASM)),
  defaultLocateFile: (name) => path.join(__dirname, name),
};

async function createAttention(options) {
  return createAttentionWith(loader, options);
}

module.exports = { createAttention, version: VERSION };
