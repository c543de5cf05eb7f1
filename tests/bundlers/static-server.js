// An ordinary static host, as a user's would be: the usual types for .html, .js/.mjs and .wasm,
// application/octet-stream for everything else (no special type for .cjs). With `isolated` every
// response carries the two headers that make a page cross-origin isolated (needed for threads).
// With `cors` it is a CDN as a page on another origin needs it: every response allows any origin
// (Access-Control-Allow-Origin: *) and any embedder (Cross-Origin-Resource-Policy: cross-origin).
// `headers` adds headers of the caller's own to every response (e.g. a Content-Security-Policy).
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
};
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
const CDN = {
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

/** Serves dir on 127.0.0.1 (a free port); resolves to { url, close(), requests }: every path asked for. */
function serveStatic(dir, { isolated = false, cors = false, headers: extra = {} } = {}) {
  const root = path.resolve(dir);
  const requests = [];
  const server = http.createServer((req, res) => {
    const headers = { ...(isolated ? ISOLATION : {}), ...(cors ? CDN : {}), ...extra };
    requests.push(decodeURIComponent(new URL(req.url, 'http://host').pathname));
    let file = path.join(root, decodeURIComponent(new URL(req.url, 'http://host').pathname));
    if (file.endsWith(path.sep)) file = path.join(file, 'index.html');
    if (!file.startsWith(root + path.sep) || !fs.statSync(file, { throwIfNoEntry: false })?.isFile()) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    headers['Content-Type'] = TYPES[path.extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, headers);
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/`,
        requests,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

module.exports = { serveStatic };
