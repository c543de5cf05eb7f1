// scripts/serve.mjs: the static server of the demo (no browser needed).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { ROOT, startServer } = require('./harness');

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
};

/** A raw HTTP request: the path goes out byte for byte (no URL normalisation). */
function request(base, rawPath, method = 'GET') {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectIsolated(res, what) {
  for (const [k, v] of Object.entries(ISOLATION)) {
    if (res.headers[k] !== v) throw new Error(`${what}: header ${k} is ${res.headers[k]}, expected ${v}`);
  }
}

/** Runs a Node ES-module snippet that calls startServer(); resolves to { url, stop() }. */
function startViaApi(options) {
  const code = `
    import { startServer } from ${JSON.stringify(path.join(ROOT, 'scripts', 'serve.mjs'))};
    const h = await startServer(${JSON.stringify(options)});
    console.log('URL ' + h.url);
    process.on('SIGTERM', () => h.close().then(() => process.exit(0)));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (c) => reject(new Error(`startServer snippet exited ${c}: ${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /URL (\S+)/.exec(out);
      if (m) {
        child.removeAllListeners('exit');
        resolve({
          url: m[1],
          stop: () =>
            new Promise((r) => {
              child.once('exit', r);
              child.kill('SIGTERM');
            }),
        });
      }
    });
  });
}

describe('serving the package folder', () => {
  let server;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    if (server) await server.stop();
  });

  test('prints its URL on 127.0.0.1 and a free port when PORT=0', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(server.url).not.toBe('http://127.0.0.1:0/');
    expect(server.output().stdout).toContain(`Serving wasm-attention demo at ${server.url}`);
  });

  test('redirects / to the page and sends the isolation headers on every response', async () => {
    const root = await request(server.url, '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/web/');
    expectIsolated(root, 'GET /');

    const noSlash = await request(server.url, '/web');
    expect(noSlash.status).toBe(301);
    expect(noSlash.headers.location).toBe('/web/');
    expectIsolated(noSlash, 'GET /web');

    const page = await request(server.url, '/web/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body.toString()).toContain('main.js');
    expectIsolated(page, 'GET /web/');

    const missing = await request(server.url, '/web/nope.js');
    expect(missing.status).toBe(404);
    expectIsolated(missing, 'GET /web/nope.js');
  });

  test('serves modules as JavaScript, the page’s engine import included', async () => {
    for (const p of [
      '/web/main.js',
      '/web/shared/engine.js',
      '/web/shared/engine-worker.js',
      '/web/textbook/views.js',
      '/scripts/serve.mjs',
    ]) {
      const res = await request(server.url, p);
      expect([p, res.status]).toEqual([p, 200]);
      expect(res.headers['content-type']).toMatch(/^text\/javascript/);
      expectIsolated(res, p);
    }
    // The engine is imported by the page's worker, relative to web/shared/.
    const worker = fs.readFileSync(path.join(ROOT, 'web', 'shared', 'engine-worker.js'), 'utf8');
    expect(worker).toContain("'../../dist/index.mjs'");
    const engine = fs.readFileSync(path.join(ROOT, 'web', 'shared', 'engine.js'), 'utf8');
    expect(engine).toContain("new URL('./engine-worker.js', import.meta.url)");
  });

  test('answers HEAD without a body and refuses other methods', async () => {
    const head = await request(server.url, '/web/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(fs.statSync(path.join(ROOT, 'web', 'index.html')).size);
    expect(head.body.length).toBe(0);
    const post = await request(server.url, '/web/index.html', 'POST');
    expect(post.status).toBe(405);
    expectIsolated(post, 'POST');
  });

  test('never leaves the package folder nor shows dot-files', async () => {
    const attempts = [
      '/../../../../etc/passwd',
      '/web/../../../../etc/passwd',
      '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/web/..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/web/..%5c..%5c..%5cetc%5cpasswd',
      '/web/%00',
      '/%',
      '/.git/config',
      '/web/.hidden',
    ];
    for (const p of attempts) {
      const res = await request(server.url, p);
      if (![400, 403, 404].includes(res.status)) throw new Error(`${p} answered ${res.status}`);
      expect(res.body.toString()).not.toMatch(/root:.*:0:0:/);
    }
  });
});

describe('startServer({ port, root })', () => {
  let dir;
  let outside;
  let server;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-root-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-outside-'));
    fs.mkdirSync(path.join(dir, 'web'));
    fs.mkdirSync(path.join(dir, 'dist'));
    fs.writeFileSync(path.join(dir, 'web', 'index.html'), '<!doctype html><title>t</title>');
    fs.writeFileSync(path.join(dir, 'dist', 'm.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    fs.writeFileSync(path.join(dir, 'dist', 'index.mjs'), 'export {};');
    fs.writeFileSync(path.join(dir, 'dist', 'x.worker.js'), '');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'web', 'link.txt'));
    server = await startViaApi({ port: 0, root: dir });
  });
  afterAll(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test('serves another root with the right MIME types', async () => {
    const wasm = await request(server.url, '/dist/m.wasm');
    expect(wasm.status).toBe(200);
    expect(wasm.headers['content-type']).toBe('application/wasm');
    expect(wasm.body.subarray(0, 4).toString('hex')).toBe('0061736d');
    expectIsolated(wasm, '.wasm');
    expect((await request(server.url, '/dist/index.mjs')).headers['content-type']).toMatch(/^text\/javascript/);
    expect((await request(server.url, '/dist/x.worker.js')).headers['content-type']).toMatch(/^text\/javascript/);
    expect((await request(server.url, '/web/')).status).toBe(200);
  });

  test('does not follow a symlink out of the root', async () => {
    const res = await request(server.url, '/web/link.txt');
    expect(res.status).toBe(403);
    expect(res.body.toString()).not.toContain('secret');
  });
});

describe('the command line', () => {
  test('--port wins over PORT, and a bad port is refused with a message', async () => {
    const s = await startServer({ args: ['--port', '0'], env: { PORT: '1' } });
    try {
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(s.url).not.toBe('http://127.0.0.1:1/');
    } finally {
      await s.stop();
    }
    const bad = spawn(process.execPath, [path.join(ROOT, 'scripts', 'serve.mjs'), '--port', 'abc'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    bad.stderr.on('data', (d) => {
      err += d;
    });
    const code = await new Promise((r) => bad.on('exit', r));
    expect(code).toBe(2);
    expect(err).toMatch(/port must be an integer/);
  });
});

// `npx wasm-attention` in a project that installed the package: the bin link in node_modules/.bin.
describe('the installed package’s command (package.json bin)', () => {
  const { PKG, installPackageCopy } = require('./installed-package');
  const { startUrlChild } = require('./harness');
  let installed;
  beforeAll(() => {
    installed = installPackageCopy();
  });
  afterAll(() => installed?.remove());

  const runBin = (args) =>
    startUrlChild({
      argv: [installed.bin, ...args],
      env: { ...process.env, PORT: '' },
      urlPattern: /Serving wasm-attention demo at (http:\/\/127\.0\.0\.1:\d+\/)/,
      timeoutMs: 15000,
      what: 'the bin',
    });

  /** A port that was free a moment ago. */
  const freePort = () =>
    new Promise((resolve) => {
      const s = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });

  test('is an executable Node script, and the package ships the poem model but none of its Python', () => {
    expect(PKG.bin).toEqual({ 'wasm-attention': 'scripts/serve.mjs' });
    const script = path.join(ROOT, 'scripts', 'serve.mjs');
    expect(fs.readFileSync(script, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(fs.statSync(script).mode & 0o111).not.toBe(0);
    for (const f of ['config.json', 'tokenizer.json', 'model.safetensors', 'heads.json', 'recited.json'])
      expect(PKG.files).toContain(`models/tang-poems/${f}`);
    expect(PKG.files.filter((f) => f.startsWith('models/') && !/\.(json|safetensors)$/.test(f))).toEqual([]);
  });

  test('--port N serves the page, the engine and the poem model from the installed folder', async () => {
    const port = await freePort();
    const server = await runBin(['--port', String(port)]);
    try {
      expect(server.url).toBe(`http://127.0.0.1:${port}/`);
      expect(server.output().stdout).toContain(`Open http://127.0.0.1:${port}/web/ in a browser`);
      for (const p of [
        '/web/',
        '/dist/index.mjs',
        '/models/tang-poems/config.json',
        '/models/tang-poems/tokenizer.json',
        '/models/tang-poems/heads.json',
        '/models/tang-poems/recited.json',
      ]) {
        const res = await request(server.url, p);
        expect([p, res.status]).toEqual([p, 200]);
        expectIsolated(res, p);
      }
      const weights = await request(server.url, '/models/tang-poems/model.safetensors', 'HEAD');
      expect(weights.status).toBe(200);
      expect(Number(weights.headers['content-length'])).toBe(
        fs.statSync(path.join(ROOT, 'models', 'tang-poems', 'model.safetensors')).size,
      );
      // The training scripts stay in the repository.
      expect((await request(server.url, '/models/tang-poems/train.py')).status).toBe(404);
    } finally {
      await server.stop();
    }
  });

  test('--port=N works too, and a bad or missing --port is refused with the reason and the usage', async () => {
    const port = await freePort();
    const server = await runBin([`--port=${port}`]);
    await server.stop();
    expect(server.url).toBe(`http://127.0.0.1:${port}/`);
    const refusals = [
      [['--port', 'abc'], /port must be an integer from 0 to 65535, got "abc"/],
      [['--port', '70000'], /port must be an integer from 0 to 65535, got "70000"/],
      [['--port', '-1'], /--port needs a value|port must be an integer/],
      [['--port'], /--port needs a value/],
      [['--prot', '8000'], /unknown argument "--prot"/],
    ];
    for (const [args, message] of refusals) {
      const child = spawn(process.execPath, [installed.bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
      });
      const code = await new Promise((r) => child.on('exit', r));
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(err).toMatch(message);
      expect(err).toContain('usage: wasm-attention [--port N]');
    }
  });
});
