'use strict';
// The packed tarball in a consumer's app, built by the common bundlers with their default
// configuration and run in Debian's Chromium: Vite (dev server and build), webpack 5, esbuild,
// Rollup. Each app runs the worked example on the main thread, in a module Web Worker and with
// threads: 2 in a worker on a cross-origin-isolated page, and is checked against the float64
// reference. The production bundles must hold no declarations, no .cjs and no Node-only code.
// Vite builds once more with worker: { format: 'es' } (docs/building.md's advice for apps whose own workers
// use the package), whose worker chunk must load the builds' glues on demand instead of inlining them.
// Chromium has relaxed SIMD, so there the apps run the relaxed-SIMD builds (their default).
// Then the scalar fallback: a Chromium and a Node whose V8 refuses WebAssembly SIMD.
//
// One `npm pack`, one consumer project (the tarball extracted into its node_modules, the app from
// ./app), the bundlers from this repository's devDependencies (./bundle.mjs runs them in child
// processes), one browser for the whole file and a fresh page per scenario.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, launchBrowser, startUrlChild, watchProblems } = require('../browser/harness');
const ref = require('../js/reference');
const { serveStatic } = require('./static-server');

jest.setTimeout(120000);

const BUNDLE = path.join(__dirname, 'bundle.mjs');
// vite-es-worker: `vite build` with the one option docs/building.md advises, worker: { format: 'es' }.
const PRODUCTION = ['vite', 'vite-es-worker', 'webpack', 'esbuild', 'rollup'];
// What a browser bundle must not carry: Node's modules, by any of the names glue code uses.
const NODE_ONLY = [
  'node:fs',
  'node:module',
  'node:os',
  'node:url',
  'node:path',
  'node:worker_threads',
  'require("worker_threads")',
  "require('worker_threads')",
];
// A page that has not produced its result by then has hung (a worker that never answers).
const RESULT_WAIT_MS = 30000;
// The smallest module that uses SIMD128: (func (result v128) (v128.const i32x4 0 0 0 0)).
const SIMD_PROBE = [
  0,
  97,
  115,
  109,
  1,
  0,
  0,
  0,
  1,
  5,
  1,
  96,
  0,
  1,
  123,
  3,
  2,
  1,
  0,
  10,
  22,
  1,
  20,
  0,
  253,
  12,
  ...new Array(16).fill(0),
  11,
];

let tmp;
let consumer;
let browser;
const builds = {}; // bundler → Promise<{ code, stdout, stderr }>
const servers = []; // everything to close at the end
const emitted = {}; // bundler → [{ name, size }], for the summary

/** Runs `node ...args`; resolves (never rejects) to { code, stdout, stderr }. */
function runNode(args, { cwd = ROOT } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', (e) => resolve({ code: -1, stdout, stderr: `${stderr}${e.stack}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON after "RESULT " in a child's output, or an Error that shows what it printed. */
function resultOf(run, what) {
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (run.code !== 0 || !line) {
    const trimmed = run.stderr
      .split('\n')
      .filter((l) => !/^\s+at /.test(l))
      .slice(0, 40)
      .join('\n');
    throw new Error(`${what} failed (exit ${run.code}):\n${trimmed || run.stdout.slice(-3000)}`);
  }
  return JSON.parse(line.slice('RESULT '.length));
}

const outDir = (bundler) => path.join(tmp, 'out', bundler);

/** Waits for a bundler's build; throws if it failed (its own test shows the details). */
async function built(bundler) {
  const run = await builds[bundler];
  if (run.code !== 0) throw new Error(`the ${bundler} build failed; see "${bundler}: builds the app…" for its errors`);
}

/** Every file under dir, as { name (relative, with /), size }, sorted by name. */
function listFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath ?? e.path, e.name);
      return { name: path.relative(dir, file).split(path.sep).join('/'), size: fs.statSync(file).size };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Starts Vite's dev server on the consumer (with the COOP/COEP headers when isolated). */
async function startViteDev(isolated) {
  const started = await startUrlChild({
    argv: [BUNDLE, 'dev', consumer, ...(isolated ? ['isolated'] : [])],
    urlPattern: /^URL (\S+)$/m,
    timeoutMs: 60000,
    what: 'vite dev server',
  });
  const server = { url: started.url, close: started.stop };
  servers.push(server);
  return server;
}

// Static servers of the production builds, started on first use: [bundler][isolated].
const staticServers = {};
async function staticUrl(bundler, isolated) {
  staticServers[bundler] ??= {};
  if (!staticServers[bundler][isolated]) {
    const server = await serveStatic(outDir(bundler), { isolated });
    servers.push(server);
    staticServers[bundler][isolated] = server;
  }
  return staticServers[bundler][isolated].url;
}

/** Opens the app at url in mode (main | worker | threads) in a fresh page; its result and problems. */
async function openApp(context, url, mode) {
  const page = await context.newPage();
  const problems = watchProblems(page);
  try {
    await page.goto(`${url}?mode=${mode}`);
    const settled = await page
      .waitForFunction(() => window.__result !== undefined, null, { timeout: RESULT_WAIT_MS })
      .then(
        () => true,
        () => false,
      );
    const result = settled ? await page.evaluate(() => window.__result) : undefined;
    return { result, problems: [...problems] };
  } finally {
    await page.close();
  }
}

/** Asserts what ?mode=viz drew with wasm-attention/viz: a 6 × 6 heatmap and 2 × 2 thumbnails, coloured. */
function checkViz({ result, problems }, label) {
  if (result === undefined) throw new Error(`${label}: the page gave no result within ${RESULT_WAIT_MS / 1000} s`);
  if (result.error) throw new Error(`${label}: the app failed: ${result.error}`);
  expect({ label, problems, canvases: result.canvases, thumbs: result.thumbs }).toEqual({
    label,
    problems: [],
    canvases: 5,
    thumbs: 4,
  });
  expect(result.heatmap).toMatchObject({ rows: 6, cols: 6 });
  expect(result.groups).toMatch(/2 query heads share 1 K\/V heads/);
  for (const n of result.colours) expect({ label, colours: n > 4 }).toEqual({ label, colours: true });
}

/**
 * Asserts the app's result: no error, no page problem, the engine's info, the reference's numbers.
 * Chromium has relaxed SIMD, so by default the app runs the relaxed build there; Node 20 has not.
 */
function checkApp({ result, problems }, { simd = true, relaxedSimd = simd, threads = 1 }, label) {
  const seen = problems.length
    ? `\npage problems:\n  ${problems.join('\n  ')}`
    : '\nno page errors, failed requests or console errors';
  if (result === undefined)
    throw new Error(`${label}: the page gave no result within ${RESULT_WAIT_MS / 1000} s${seen}`);
  if (result.error) throw new Error(`${label}: the app failed: ${result.error}${seen}`);
  if (problems.length) throw new Error(`${label}: the app worked but the page reported problems:${seen}`);
  const { info } = result;
  expect({ label, simd: info.simd, relaxedSimd: info.relaxedSimd, threads: info.threads }).toEqual({
    label,
    simd,
    relaxedSimd,
    threads,
  });
  if (threads > 1)
    expect({ label, crossOriginIsolated: result.crossOriginIsolated }).toEqual({ label, crossOriginIsolated: true });
  const want = ref.multiHeadAttention(result.args);
  ref.expectClose(result.output, want.output, `${label}: output`, [1, 4, 16]);
  ref.expectClose(result.weights, want.weights, `${label}: weights`, [1, 4, 4]);
}

// loadModel in the bundled app: a fixture checkpoint with its tokenizer, from another origin (as a
// CDN serves it), generating greedily; its reference's greedy tokens. This is what proves loadModel's
// lazy chunk and the vendored tokenizer (dist/vendor/tokenizers.mjs) survive each bundler.
const MODEL = 'gpt2';
const MODELS_DIR = path.join(ROOT, 'tests', 'fixtures', 'models');
const modelExpected = JSON.parse(fs.readFileSync(path.join(MODELS_DIR, MODEL, 'expected.json'), 'utf8'));
let modelServer;
/** The app's mode for the model: its query after ?mode=. */
async function modelMode() {
  if (!modelServer) {
    modelServer = await serveStatic(MODELS_DIR, { cors: true });
    servers.push(modelServer);
  }
  const query = new URLSearchParams({
    model: `${modelServer.url}${MODEL}/`,
    prompt: modelExpected.prompt,
    n: String(modelExpected.greedy.length),
  });
  return `model&${query}`;
}

function checkModel({ result, problems }, label) {
  const seen = problems.length ? `\npage problems:\n  ${problems.join('\n  ')}` : '';
  if (result === undefined)
    throw new Error(`${label}: the page gave no result within ${RESULT_WAIT_MS / 1000} s${seen}`);
  if (result.error) throw new Error(`${label}: the app failed: ${result.error}${seen}`);
  expect({ label, ids: result.ids, problems }).toEqual({ label, ids: modelExpected.greedy, problems: [] });
  expect({ label, text: result.text }).toEqual({ label, text: result.decoded });
}

const MODES = [
  { mode: 'main', what: 'the main thread', want: {} },
  { mode: 'worker', what: 'a module Web Worker', want: {} },
  { mode: 'threads', what: 'threads: 2 in a module worker on a cross-origin-isolated page', want: { threads: 2 } },
];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-bundlers-'));
  // npm pack runs prepack (the build: quick when dist/ is fresh).
  execFileSync('npm', ['pack', '--pack-destination', tmp], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const tgz = fs.readdirSync(tmp).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new Error(`npm pack produced ${tgz.join(', ') || 'no tarball'} in ${tmp}`);

  // The consumer: the app, and the tarball as npm would install it (no registry needed).
  consumer = path.join(tmp, 'consumer');
  fs.cpSync(path.join(__dirname, 'app'), consumer, { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'lib', 'random.mjs'), path.join(consumer, 'src', 'random.js'));
  fs.writeFileSync(
    path.join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  const installed = path.join(consumer, 'node_modules', 'wasm-attention');
  fs.mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', path.join(tmp, tgz[0]), '-C', installed, '--strip-components=1']);
  for (const name of ['check.mjs', 'check.cjs'])
    fs.copyFileSync(path.join(__dirname, 'node', name), path.join(consumer, name));

  // The four production builds run side by side while the browser starts.
  for (const b of PRODUCTION) builds[b] = runNode([BUNDLE, 'build', b, consumer, outDir(b)]);
  browser = await launchBrowser();
}, 240000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await Promise.all(Object.values(builds));
  if (browser) await browser.close();
  const lines = Object.entries(emitted).map(([b, files]) => {
    const total = files.reduce((s, f) => s + f.size, 0);
    return `${b}: ${files.length} files, ${total} bytes\n    ${files.map((f) => `${f.name} ${f.size}`).join('\n    ')}`;
  });
  if (lines.length)
    console.log(
      `emitted by each production build (esbuild and Rollup: with the copied .wasm and worker files)\n${lines.join('\n')}`,
    );
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60000);

describe('Vite dev server (default configuration; COOP/COEP headers added for threads)', () => {
  let server;
  afterAll(async () => {
    if (server) await server.close();
  });

  test.each(MODES)('vite dev: the example on $what', async ({ mode, want }) => {
    const isolated = mode === 'threads';
    if (!server || server.isolated !== isolated) {
      if (server) await server.close();
      server = null;
      server = { ...(await startViteDev(isolated)), isolated };
    }
    checkApp(await openApp(browser.context, server.url, mode), want, `vite dev, ${mode}`);
  });

  test(`vite dev: loadModel of the ${MODEL} checkpoint from another origin, greedy tokens of its reference`, async () => {
    if (!server || server.isolated) {
      if (server) await server.close();
      server = null;
      server = { ...(await startViteDev(false)), isolated: false };
    }
    checkModel(await openApp(browser.context, server.url, await modelMode()), 'vite dev, model');
  });

  test('vite dev: wasm-attention/viz draws a heatmap and a model view', async () => {
    if (!server) server = { ...(await startViteDev(false)), isolated: false };
    checkViz(await openApp(browser.context, server.url, 'viz'), 'vite dev, viz');
  });
});

describe.each(PRODUCTION)('%s production build, on an ordinary static host', (bundler) => {
  const configuration = bundler === 'vite-es-worker' ? "worker: { format: 'es' }" : 'its default configuration';
  test(`${bundler}: builds the app from the tarball with ${configuration}, without warnings`, async () => {
    const { warnings } = resultOf(await builds[bundler], `the ${bundler} build`);
    expect({ bundler, warnings }).toEqual({ bundler, warnings: [] });
  });

  test.each(MODES)(`${bundler}: the example on $what`, async ({ mode, want }) => {
    await built(bundler);
    const url = await staticUrl(bundler, mode === 'threads');
    checkApp(await openApp(browser.context, url, mode), want, `${bundler}, ${mode}`);
  });

  test(`${bundler}: loadModel of the ${MODEL} checkpoint from another origin, greedy tokens of its reference`, async () => {
    await built(bundler);
    const url = await staticUrl(bundler, false);
    checkModel(await openApp(browser.context, url, await modelMode()), `${bundler}, model`);
  });

  test(`${bundler}: wasm-attention/viz draws a heatmap and a model view`, async () => {
    await built(bundler);
    checkViz(await openApp(browser.context, await staticUrl(bundler, false), 'viz'), `${bundler}, viz`);
  });

  test(`${bundler}: the bundle holds no .d.ts, .cjs, .map or .json file and no Node-only code`, async () => {
    await built(bundler);
    const files = listFiles(outDir(bundler));
    emitted[bundler] = files;
    // Declarations, CommonJS, native addons; maps and JSON would betray a glob over a folder.
    const wrongKind = files.map((f) => f.name).filter((n) => /\.[cm]?ts$|\.cjs$|\.node$|\.map$|\.json$/.test(n));
    const nodeOnly = files.flatMap((f) => {
      const text = fs.readFileSync(path.join(outDir(bundler), f.name), 'latin1');
      return NODE_ONLY.filter((s) => text.includes(s)).map((s) => `${f.name} contains ${s}`);
    });
    expect({ bundler, wrongKind, nodeOnly }).toEqual({ bundler, wrongKind: [], nodeOnly: [] });
    expect(files.map((f) => f.name)).toContain('index.html');
    expect(files.some((f) => f.name.endsWith('.wasm'))).toBe(true);
  });
});

describe("an app whose own worker uses the package, built by Vite (docs/building.md's worker: { format: 'es' })", () => {
  // The app's worker chunk (src/worker.js and what it imports) of a Vite build: { name, size, text }.
  function workerChunk(bundler) {
    const chunks = listFiles(outDir(bundler)).filter((f) => /^assets\/worker-[\w-]+\.js$/.test(f.name));
    expect({ bundler, chunks: chunks.length }).toEqual({ bundler, chunks: 1 });
    return { ...chunks[0], text: fs.readFileSync(path.join(outDir(bundler), chunks[0].name), 'utf8') };
  }
  // A dynamic import of one of the six builds' glue chunks.
  const GLUE_IMPORT = /import\(\s*[`'"]\.\/wasm-attention-(?:simd|relaxed|scalar)(?:-mt)?-[\w-]+\.js[`'"]\s*\)/g;

  test('with worker.format es the worker chunk loads the six glues on demand and stays small; the default (iife) inlines all six', async () => {
    await built('vite');
    await built('vite-es-worker');
    const lean = workerChunk('vite-es-worker');
    const inlined = workerChunk('vite');
    console.log(
      `the app's worker chunk: ${inlined.size} bytes with Vite's default worker.format, ${lean.size} with 'es'`,
    );
    expect(new Set(lean.text.match(GLUE_IMPORT)).size).toBe(6);
    expect(lean.size).toBeLessThan(64 * 1024);
    expect(inlined.text.match(GLUE_IMPORT)).toBeNull();
    expect(inlined.size).toBeGreaterThan(3 * lean.size);
  });
});

describe('without WebAssembly SIMD (V8 flag --no-enable-sse4-1): the scalar build', () => {
  let scalarBrowser;
  afterAll(async () => {
    if (scalarBrowser) await scalarBrowser.close();
  });

  test.each(MODES.slice(0, 2))(
    'Chromium, the Vite build on $what: info.simd is false, same numbers',
    async ({ mode }) => {
      await built('vite');
      if (!scalarBrowser) {
        // The harness's launcher, pointed at a wrapper that adds the V8 flag.
        const wrapper = path.join(tmp, 'chromium-no-simd');
        const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
        fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${chromium} --js-flags=--no-enable-sse4-1 "$@"\n`, { mode: 0o755 });
        const saved = process.env.CHROMIUM_PATH;
        process.env.CHROMIUM_PATH = wrapper;
        let harness;
        jest.isolateModules(() => {
          harness = require('../browser/harness');
        });
        if (saved === undefined) delete process.env.CHROMIUM_PATH;
        else process.env.CHROMIUM_PATH = saved;
        scalarBrowser = await harness.launchBrowser();
      }
      const url = await staticUrl('vite', false);
      const page = await scalarBrowser.context.newPage();
      await page.goto(`${url}?mode=none`);
      const simdValid = await page.evaluate((bytes) => WebAssembly.validate(new Uint8Array(bytes)), SIMD_PROBE);
      await page.close();
      expect({ simdProbeValidates: simdValid }).toEqual({ simdProbeValidates: false });
      checkApp(await openApp(scalarBrowser.context, url, mode), { simd: false }, `vite, scalar Chromium, ${mode}`);
    },
  );

  test.each([
    ['import', 'check.mjs'],
    ['require', 'check.cjs'],
  ])('Node --no-enable-sse4-1, the installed tarball by %s: info.simd is false, same numbers', async (how, script) => {
    const run = await runNode(['--no-enable-sse4-1', script], { cwd: consumer });
    const result = resultOf(run, `node --no-enable-sse4-1 ${script}`);
    checkApp({ result, problems: [] }, { simd: false }, `node --no-enable-sse4-1, ${how}`);
  });

  test.each([
    ['import', 'check.mjs'],
    ['require', 'check.cjs'],
  ])(
    'Node, the installed tarball by %s: createAttention({ simd: false }) runs the scalar build',
    async (how, script) => {
      const result = resultOf(
        await runNode([script, '{"simd":false}'], { cwd: consumer }),
        `node ${script} simd: false`,
      );
      checkApp({ result, problems: [] }, { simd: false }, `node, ${how}, simd: false`);
      const simd = resultOf(await runNode([script], { cwd: consumer }), `node ${script}`);
      checkApp({ result: simd, problems: [] }, { simd: true, relaxedSimd: false }, `node, ${how}, default`);
    },
  );
});
