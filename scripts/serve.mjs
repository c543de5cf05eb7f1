#!/usr/bin/env node
// Static server for the demo page. Node's standard library only. It is also the package's `bin`:
//
//   npx wasm-attention [--port N]            (an installed package: the demo, its model included)
//   node scripts/serve.mjs [--port N]        (or PORT=N; PORT=0 picks a free port)
//
// Serves the package root, so web/ (the page) and dist/ (the engine) are both reachable;
// `/` redirects to `/web/`. Every response carries the cross-origin isolation headers
// (COOP same-origin + COEP require-corp), which browsers require before they allow
// SharedArrayBuffer, i.e. the threaded build of the engine.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HOST = '127.0.0.1';
const DEFAULT_PORT = 8080;
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function send(res, status, headers, body) {
  res.writeHead(status, { ...ISOLATION_HEADERS, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

function sendText(res, status, text) {
  send(res, status, { 'Content-Type': 'text/plain; charset=utf-8' }, `${text}\n`);
}

// Maps a URL path onto a file under root, or returns null when the path tries to leave
// root, names a dot-file (.git, .env …) or is malformed.
export function resolveInside(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..' || s.startsWith('.'))) return null;
  const full = path.resolve(root, ...segments);
  return isInside(root, full) ? full : null;
}

function handle(root, req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }, 'Method Not Allowed\n');
    return;
  }
  const url = new URL(req.url, `http://${HOST}`);
  if (url.pathname === '/') {
    send(res, 302, { Location: '/web/' }, '');
    return;
  }
  const file = resolveInside(root, url.pathname);
  if (file === null) {
    sendText(res, 403, 'Forbidden');
    return;
  }
  fs.stat(file, (err, stat) => {
    if (err) {
      sendText(res, 404, `Not found: ${url.pathname}`);
      return;
    }
    if (stat.isDirectory()) {
      if (!url.pathname.endsWith('/')) {
        send(res, 301, { Location: `${url.pathname}/${url.search}` }, '');
        return;
      }
      serveFile(root, req, res, path.join(file, 'index.html'), url.pathname);
      return;
    }
    serveFile(root, req, res, file, url.pathname);
  });
}

function isInside(root, file) {
  return file === root || file.startsWith(root + path.sep);
}

function serveFile(root, req, res, file, shownPath) {
  // Resolve symlinks before opening, so nothing outside the root leaks through one.
  fs.realpath(file, (err, real) => {
    if (err) {
      sendText(res, 404, `Not found: ${shownPath}`);
      return;
    }
    if (!isInside(root, real)) {
      sendText(res, 403, 'Forbidden');
      return;
    }
    fs.stat(real, (err2, stat) => {
      if (err2 || !stat.isFile()) {
        sendText(res, 404, `Not found: ${shownPath}`);
        return;
      }
      streamFile(req, res, real, stat);
    });
  });
}

function streamFile(req, res, file, stat) {
  const type = MIME[path.extname(file).toLowerCase()] || 'application/octet-stream';
  res.writeHead(200, {
    ...ISOLATION_HEADERS,
    'Cache-Control': 'no-store',
    'Content-Type': type,
    'Content-Length': stat.size,
    'X-Content-Type-Options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = fs.createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/**
 * Starts the server. Resolves to { url, port, server, close() } once it listens.
 * @param {{ port?: number, root?: string, host?: string }} [options]
 */
export function startServer({ port = DEFAULT_PORT, root = PACKAGE_ROOT, host = HOST } = {}) {
  const absRoot = fs.realpathSync(path.resolve(root));
  const server = http.createServer((req, res) => {
    try {
      handle(absRoot, req, res);
    } catch {
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error');
      else res.destroy();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const actual = server.address().port;
      resolve({
        url: `http://${host}:${actual}/`,
        port: actual,
        server,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections?.();
          }),
      });
    });
  });
}

const USAGE = 'usage: wasm-attention [--port N]   (N from 0 to 65535; 0 picks a free port; default PORT or 8080)';

/** The port asked for by argv (`--port N`, `--port=N`) or env.PORT; a RangeError names what was wrong. */
export function parsePort(argv, env) {
  let raw = env.PORT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--port') {
      raw = argv[i + 1];
      if (raw === undefined || raw.startsWith('--'))
        throw new RangeError('--port needs a value: a port number from 0 to 65535');
      i++;
    } else if (arg.startsWith('--port=')) {
      raw = arg.slice('--port='.length);
    } else {
      throw new RangeError(`unknown argument ${JSON.stringify(arg)}`);
    }
  }
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw).trim()) || !Number.isInteger(n) || n > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, got ${JSON.stringify(raw)}`);
  }
  return n;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  let port;
  try {
    port = parsePort(args, process.env);
  } catch (e) {
    console.error(`wasm-attention: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (!fs.existsSync(path.join(PACKAGE_ROOT, 'dist', 'index.mjs'))) {
    console.warn('wasm-attention: dist/index.mjs is missing; run `npm run build` first (the page needs the engine).');
  }
  let handle;
  try {
    handle = await startServer({ port });
  } catch (e) {
    console.error(`wasm-attention: cannot listen on ${HOST}:${port}: ${e.message}`);
    process.exit(1);
  }
  // One write, so a reader of the first line has the second too.
  console.log(
    `Serving wasm-attention demo at ${handle.url}\nOpen ${handle.url}web/ in a browser (Ctrl+C stops the server).`,
  );
  const stop = () => handle.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (invokedDirectly) main();
