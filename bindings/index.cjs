// Entry for Node (require, and import through node.mjs): the CommonJS glues in node/ and files
// read from disk (Emscripten 3.1.6 would fetch() a file path under Node and fail).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fileURLToPath } = require('node:url');
const {
  createAttentionWith,
  loadModelWith,
  VERSION,
  readSafetensors,
  attentionArgsFromStateDict,
  isKeyMasked,
  kvHeadOf,
  mulberry32,
  SUPPORTED_MODEL_TYPES,
} = require('./create.cjs');

const inDist = (file) => path.join(__dirname, file);
// The glues and Emscripten's pthread worker script for Node live in node/.
const inNode = (file) => path.join(__dirname, 'node', file);

const loader = {
  isNode: true,
  glue: async (build) => require(inNode(`${build}.js`)),
  glueFile: (build) => inNode(`${build}.js`),
  wasmSource: (file, userLocateFile) => fs.promises.readFile(userLocateFile ? userLocateFile(file, '') : inDist(file)),
  locateFile: (file) => (file.endsWith('.wasm') ? inDist(file) : inNode(file)),
  // Emscripten's worker script evaluates the glue from this path.
  mainScript: (build) => inNode(`${build}.js`),
  workerScript: (build) => inNode(`${build}.worker.js`),
  hardwareThreads: () => os.availableParallelism?.() ?? os.cpus().length,
};

async function createAttention(options) {
  return createAttentionWith(loader, options);
}

// loadModel's folders: a source string without a URL scheme (or a file: URL) is a folder on disk.
const modelFiles = {
  readFile: (file, options) => fs.promises.readFile(file, options),
  join: path.join,
  resolve: path.resolve,
  fileURLToPath,
};

function loadModel(attn, source, options) {
  return loadModelWith(modelFiles, attn, source, options);
}

module.exports = {
  createAttention,
  loadModel,
  version: VERSION,
  readSafetensors,
  attentionArgsFromStateDict,
  isKeyMasked,
  kvHeadOf,
  mulberry32,
  SUPPORTED_MODEL_TYPES,
};
