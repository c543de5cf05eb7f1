'use strict';
// The package as a page on another origin uses it (a CDN, a static file host), and threads where a
// page cannot have them. Four static servers on 127.0.0.1, each port its own origin:
//   app       the repository, cross-origin isolated (COOP same-origin + COEP require-corp): the page
//   cdn       dist/ only, as a CDN serves it: CORS (Access-Control-Allow-Origin: *) and
//             Cross-Origin-Resource-Policy: cross-origin, no isolation headers of its own
//   plain     the repository without isolation headers: a page that cannot have threads
//   locked    the repository, isolated, with a Content-Security-Policy that forbids workers
//   strict    the repository, isolated, with a Content-Security-Policy whose worker-src allows
//             blob: and the cdn (what docs/building.md tells a page with a CSP)
// Threads across origins need the pthread workers started from a same-origin bootstrap (a browser
// refuses a worker script of another origin); an error the browser raises (a DOMException, whose
// message cannot be assigned) must reach the caller unmasked; threads that cannot be honoured are
// said in info.threadsReason and by one console warning.
const path = require('node:path');
const { ROOT, launchBrowser, watchProblems } = require('./harness');
const { serveStatic } = require('../bundlers/static-server');

let browser;
const servers = {};

beforeAll(async () => {
  servers.app = await serveStatic(ROOT, { isolated: true });
  servers.cdn = await serveStatic(path.join(ROOT, 'dist'), { cors: true });
  servers.plain = await serveStatic(ROOT);
  servers.locked = await serveStatic(ROOT, {
    isolated: true,
    headers: { 'Content-Security-Policy': "worker-src 'none'" },
  });
  servers.strict = await serveStatic(ROOT, {
    isolated: true,
    headers: { 'Content-Security-Policy': `worker-src blob: ${servers.cdn.url}` },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  if (browser) await browser.close();
  for (const server of Object.values(servers)) await server.close();
});

/** A fresh page (a fresh realm) of server `name` on the blank test page, watched for problems. */
async function openPage(name) {
  const page = await browser.context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${servers[name].url}tests/browser/blank.html`);
  return { page, problems };
}

// Runs in the page or in a worker (as source): a prepared layer big enough that two threads share
// the work, on an engine made with `options`; its info and results as plain arrays, or the error.
const COMPUTE = `async function compute(createAttention, options) {
  let attn;
  try {
    attn = await createAttention(options);
  } catch (e) {
    return { error: e.constructor.name + ': ' + e.message, name: e.name, cause: e.cause ? e.cause.name + ': ' + e.cause.message : null };
  }
  const E = 64, L = 40, B = 2;
  const f = (n, k) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * k + 1) / 4);
  const layer = attn.createMultiHeadAttention({ embedDim: E, numHeads: 4, inProjWeight: f(3 * E * E, 0.37), outProjWeight: f(E * E, 0.53) });
  const r = layer.forward({ query: f(B * L * E, 0.11), batch: B, isCausal: true, averageAttnWeights: false });
  const info = { ...attn.info };
  attn.dispose();
  return { info, output: Array.from(r.output), weights: Array.from(r.weights) };
}`;

/**
 * compute() in the page for each of `runs` ({ options, locate }), with the package imported from
 * `entry`; `locate` is the source of a locateFile function, evaluated in the page.
 */
function computeInPage(page, entry, runs) {
  return page.evaluate(
    async ([source, url, list]) => {
      const compute = (0, eval)(`(${source})`); // eslint-disable-line no-eval
      const { createAttention } = await import(url);
      const out = [];
      for (const { options, locate } of list) {
        const located = locate ? { locateFile: (0, eval)(locate) } : {}; // eslint-disable-line no-eval
        out.push(await compute(createAttention, { ...options, ...located }));
      }
      return { isolated: crossOriginIsolated, out };
    },
    [COMPUTE, entry, runs],
  );
}

/** compute() in a module Web Worker of the page (a same-origin blob worker) that imports `entry`. */
function computeInWorker(page, entry, runs) {
  return page.evaluate(
    ([source, url, list]) => {
      const body =
        `import { createAttention } from ${JSON.stringify(url)};\nconst compute = ${source};\n` +
        `self.onmessage = async (e) => { const out = []; for (const options of e.data) out.push(await compute(createAttention, options));` +
        ' self.postMessage({ isolated: crossOriginIsolated, out }); };';
      const worker = new Worker(URL.createObjectURL(new Blob([body], { type: 'text/javascript' })), { type: 'module' });
      return new Promise((resolve) => {
        worker.onmessage = (e) => {
          resolve(e.data);
          worker.terminate();
        };
        worker.onerror = (e) => resolve({ out: [{ error: `the test's worker failed: ${e.message}` }] });
        worker.postMessage(list.map((r) => r.options));
      });
    },
    [COMPUTE, entry, runs],
  );
}

/** Expects results[i] to have started with threads[i] and all to hold the same bits as the first. */
function expectSameBits(results, threads, label) {
  for (const [i, r] of results.entries()) {
    expect({ label, i, error: r.error ?? null }).toEqual({ label, i, error: null });
    expect({ label, i, threads: r.info.threads, threadsReason: r.info.threadsReason }).toEqual({
      label,
      i,
      threads: threads[i],
      threadsReason: null,
    });
    expect({
      label,
      i,
      same:
        r.output.every((v, k) => Object.is(v, results[0].output[k])) &&
        r.weights.every((v, k) => Object.is(v, results[0].weights[k])),
    }).toEqual({ label, i, same: true });
  }
  expect(results[0].output.every(Number.isFinite)).toBe(true);
}

/** The paths the CDN was asked for since `from` (an index into its request log). */
const cdnRequests = (from) => servers.cdn.requests.slice(from);

describe('the package imported from another origin (a CDN) by a cross-origin-isolated page', () => {
  const RUNS = [
    { options: { threads: 1 } },
    { options: { threads: 2 } },
    { options: { threads: 2, relaxedSimd: false } },
    { options: { threads: 'auto' } },
  ];

  test("threads: 2 and 'auto' start their workers and compute the one-thread bits, without a page problem", async () => {
    const { page, problems } = await openPage('app');
    const from = servers.cdn.requests.length;
    const got = await computeInPage(page, `${servers.cdn.url}index.mjs`, RUNS);
    await page.close();
    expect(got.isolated).toBe(true);
    expectSameBits(got.out.slice(0, 2), [1, 2], 'page, relaxed');
    expect(got.out[2].info).toEqual(expect.objectContaining({ relaxedSimd: false, threads: 2, threadsReason: null }));
    expect(got.out[3].info.threads).toBeGreaterThanOrEqual(2); // 'auto' on this 2-core machine
    // The workers' scripts came from the CDN (through the bootstrap), as did the glue and the .wasm.
    expect(cdnRequests(from)).toEqual(
      expect.arrayContaining([
        '/wasm-attention-relaxed-mt.worker.mjs',
        '/wasm-attention-simd-mt.worker.mjs',
        '/pthread-worker.mjs',
        '/wasm-attention-relaxed-mt.mjs',
        '/wasm-attention-relaxed-mt.wasm',
      ]),
    );
    expect(problems).toEqual([]);
  });

  test("the same in a module Web Worker of that page (the worker's own location is the origin compared)", async () => {
    const { page, problems } = await openPage('app');
    const got = await computeInWorker(page, `${servers.cdn.url}index.mjs`, RUNS.slice(0, 3));
    await page.close();
    expect(got.isolated).toBe(true);
    expectSameBits(got.out.slice(0, 2), [1, 2], 'worker, relaxed');
    expect(got.out[2].info).toEqual(expect.objectContaining({ relaxedSimd: false, threads: 2, threadsReason: null }));
    expect(problems).toEqual([]);
  });

  test('the scalar threaded build too', async () => {
    const { page, problems } = await openPage('app');
    const got = await computeInPage(page, `${servers.cdn.url}index.mjs`, [
      { options: { simd: false } },
      { options: { simd: false, threads: 2 } },
    ]);
    await page.close();
    expectSameBits(got.out, [1, 2], 'page, scalar');
    expect(got.out[1].info.simd).toBe(false);
    expect(problems).toEqual([]);
  });

  test("a locateFile that returns another origin's URLs (the package itself from the page's origin)", async () => {
    const { page, problems } = await openPage('app');
    const from = servers.cdn.requests.length;
    const locate = `(name) => ${JSON.stringify(servers.cdn.url)} + name`;
    const got = await computeInPage(page, '/dist/index.mjs', [
      { options: { threads: 1 }, locate },
      { options: { threads: 2 }, locate },
    ]);
    await page.close();
    expectSameBits(got.out, [1, 2], 'locateFile');
    expect(cdnRequests(from)).toEqual(
      expect.arrayContaining([
        '/wasm-attention-relaxed.wasm',
        '/wasm-attention-relaxed-mt.wasm',
        '/wasm-attention-relaxed-mt.worker.mjs',
      ]),
    );
    expect(problems).toEqual([]);
  });

  test('a page whose Content-Security-Policy allows blob: and the CDN in worker-src', async () => {
    const { page, problems } = await openPage('strict');
    const got = await computeInPage(page, `${servers.cdn.url}index.mjs`, [
      { options: { threads: 1 } },
      { options: { threads: 2 } },
    ]);
    await page.close();
    expectSameBits(got.out, [1, 2], 'strict CSP');
    expect(problems).toEqual([]);
  });
});

describe('an error the browser raises reaches the caller whole, saying what was being loaded', () => {
  test('a DOMException thrown by the Worker constructor (a locateFile giving an invalid worker URL)', async () => {
    const { page, problems } = await openPage('app');
    const locate = "(name) => (name.endsWith('.worker.mjs') ? 'http://[invalid/' + name : '/dist/' + name)";
    const got = await computeInPage(page, '/dist/index.mjs', [
      { options: { threads: 2 }, locate },
      { options: { threads: 2 } },
    ]);
    await page.close();
    const [failed, again] = got.out;
    // A new Error of the loader's that names the build and the script, keeps the browser's error
    // name and message (and the DOMException itself as its cause), instead of the TypeError that
    // assigning to a DOMException's message throws.
    expect(failed.error).toMatch(
      /^Error: createAttention: a worker thread of wasm-attention-relaxed-mt could not start \(its script http:\/\/\[invalid\/wasm-attention-relaxed-mt\.worker\.mjs\): SyntaxError: Failed to construct 'Worker'/,
    );
    expect(failed.cause).toMatch(/^SyntaxError: Failed to construct 'Worker'/);
    expect(failed.error).toContain(failed.cause.slice('SyntaxError: '.length));
    expect(again.info.threads).toBe(2); // nothing left behind: the next start works
    expect(problems).toEqual([]);
  });

  test("a worker the page's Content-Security-Policy forbids: the Error names the script", async () => {
    const { page, problems } = await openPage('locked');
    const got = await computeInPage(page, '/dist/index.mjs', [
      { options: { threads: 2 } },
      { options: { threads: 1 } },
    ]);
    await page.close();
    expect(got.isolated).toBe(true);
    const [failed, single] = got.out;
    expect(failed.error).toMatch(
      /^Error: createAttention: a worker thread of wasm-attention-relaxed-mt could not start \(its script wasm-attention-relaxed-mt\.worker\.mjs\): its script failed to load$/,
    );
    expect(single.info.threads).toBe(1); // one thread needs no worker
    expect(problems.filter((p) => !/Content Security Policy/.test(p))).toEqual([]);
  });
});

describe('threads that cannot be honoured are said, not silent', () => {
  test("a page that is not cross-origin isolated: threads: 2 and 'auto' run on 1 thread, say why, and warn once", async () => {
    const { page, problems } = await openPage('plain');
    const got = await computeInPage(page, '/dist/index.mjs', [
      { options: { threads: 2 } },
      { options: { threads: 'auto' } },
      { options: { threads: 1 } },
    ]);
    await page.close();
    expect(got.isolated).toBe(false);
    const [two, auto, one] = got.out;
    for (const r of [two, auto]) {
      expect(r.info.threads).toBe(1);
      expect(r.info.threadsReason).toMatch(
        /^this page is not cross-origin isolated\b.*: serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp/,
      );
    }
    expect(one.info).toEqual(expect.objectContaining({ threads: 1, threadsReason: null }));
    const warnings = problems.filter((p) => p.startsWith('console.warn'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^console\.warn: wasm-attention: threads: 2 was asked for, but the engine runs on 1 thread: this page is not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/,
    );
    expect(problems.filter((p) => !p.startsWith('console.warn'))).toEqual([]);
  });

  test("the same in a module Web Worker of such a page (one warning for the worker's realm)", async () => {
    const { page, problems } = await openPage('plain');
    const got = await computeInWorker(page, `${servers.plain.url}dist/index.mjs`, [
      { options: { threads: 'auto' } },
      { options: { threads: 4 } },
    ]);
    await page.close();
    expect(got.isolated).toBe(false);
    for (const r of got.out)
      expect(r.info).toEqual(
        expect.objectContaining({
          threads: 1,
          threadsReason: expect.stringMatching(/^this page is not cross-origin isolated/),
        }),
      );
    expect(problems.filter((p) => p.startsWith('console.warn'))).toEqual([
      expect.stringMatching(
        /^console\.warn: wasm-attention: threads: 'auto' was asked for, but the engine runs on 1 thread/,
      ),
    ]);
  });
});
