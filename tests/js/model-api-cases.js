'use strict';
// What the loadModel tests share: the contract's tolerance against the fixtures' float64 references,
// slices of the reference arrays, and a small HTTP server of the fixture folders (for URL sources).
const fs = require('fs');
const http = require('http');
const path = require('path');
const { FIXTURES } = require('./model-modules');

/** Entries of got outside |got − ref| ≤ 1e-4 + 1e-4·|ref| (at most five, with their index), [] when all agree. */
function offTolerance(got, want) {
  if (got === null || got === undefined || got.length !== want.length) {
    return [`length ${got?.length} where the reference has ${want.length}`];
  }
  const off = [];
  for (let i = 0; i < want.length && off.length < 5; i++) {
    if (!(Math.abs(got[i] - want[i]) <= 1e-4 + 1e-4 * Math.abs(want[i]))) off.push(`[${i}] ${got[i]} vs ${want[i]}`);
  }
  return off;
}

/** Rows [from, to) of a [T, width] array. */
const rows = (data, width, from, to) => data.subarray(from * width, to * width);

/**
 * The reference attention of one layer ([heads, T, T]) restricted to some heads (in the order given),
 * query rows [from, to) and keys [0, keys): what a forward of those rows returns.
 */
function attentionSlice(reference, T, heads, from, to, keys = to) {
  const out = new Float32Array(heads.length * (to - from) * keys);
  let k = 0;
  for (const h of heads) {
    for (let i = from; i < to; i++) {
      for (let j = 0; j < keys; j++) out[k++] = reference[(h * T + i) * T + j];
    }
  }
  return out;
}

const MIME = { '.json': 'application/json', '.safetensors': 'application/octet-stream' };

/**
 * Serves tests/fixtures/models on 127.0.0.1: GET /<fixture>/<file>. Under /no-tokenizer/<fixture>/,
 * tokenizer.json is a 404 (a checkpoint without one); /chunked/<fixture>/ sends no Content-Length.
 * `requests` records each request's path and headers.
 */
async function serveFixtures() {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url, headers: req.headers });
    let url = decodeURIComponent(req.url.split('?')[0]);
    const noTokenizer = url.startsWith('/no-tokenizer/');
    const chunked = url.startsWith('/chunked/');
    url = url.replace(/^\/(no-tokenizer|chunked)\//, '/');
    const file = path.join(FIXTURES, path.normalize(url));
    const missing = !file.startsWith(FIXTURES + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory();
    if (missing || (noTokenizer && url.endsWith('/tokenizer.json'))) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
      return;
    }
    const body = fs.readFileSync(file);
    const headers = { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' };
    if (!chunked) headers['Content-Length'] = body.length;
    res.writeHead(200, headers);
    if (!chunked) return res.end(body);
    // Several writes, so a reader sees the bytes arrive in pieces.
    const piece = Math.ceil(body.length / 4);
    for (let i = 0; i < body.length; i += piece) res.write(body.subarray(i, i + piece));
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (p) => `http://127.0.0.1:${server.address().port}/${p}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

module.exports = { offTolerance, rows, attentionSlice, serveFixtures };
