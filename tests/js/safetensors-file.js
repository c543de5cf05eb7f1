'use strict';
// Builds .safetensors bytes for tests: well-formed files from tensors, and files with any header
// (a corrupt one included) from a header object or text and the data bytes.
const fs = require('fs');
const path = require('path');
const { FIXTURE_DIR } = require('./fixtures');

const SAFETENSORS_DIR = path.join(FIXTURE_DIR, 'safetensors');

/** 8-byte little-endian header length, the header (an object is JSON-encoded), the data bytes. */
function fileOf(header, data = new Uint8Array(0), declaredLength) {
  const text = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(declaredLength ?? text.length));
  return new Uint8Array(Buffer.concat([length, text, Buffer.from(data)]));
}

/** A well-formed file of { name: { dtype, shape, bytes } }, laid out in the given order. */
function encodeFile(tensors, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  const chunks = [];
  let offset = 0;
  for (const [name, { dtype, shape, bytes }] of Object.entries(tensors)) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    chunks.push(Buffer.from(bytes));
    offset += bytes.length;
  }
  return fileOf(header, Buffer.concat(chunks));
}

/** Little-endian bytes of values written by DataView's setter `set` (e.g. 'setUint16'), `size` each. */
function littleEndian(values, size, set) {
  const view = new DataView(new ArrayBuffer(values.length * size));
  values.forEach((v, i) => view[set](i * size, v, true));
  return new Uint8Array(view.buffer);
}

/** The committed fixture `name`: its .safetensors bytes and its sidecar (prefix, arguments, PyTorch's output). */
function loadSafetensorsFixture(name) {
  return {
    bytes: fs.readFileSync(path.join(SAFETENSORS_DIR, `${name}.safetensors`)),
    sidecar: JSON.parse(fs.readFileSync(path.join(SAFETENSORS_DIR, `${name}.json`), 'utf8')),
  };
}

module.exports = { fileOf, encodeFile, littleEndian, loadSafetensorsFixture, SAFETENSORS_DIR };
