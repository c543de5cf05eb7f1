'use strict';
// The loader's side of hosting, in Node: info.threadsReason where threads run and where they cannot
// (no SharedArrayBuffer), the one warning per realm, and errors thrown by the platform (a
// DOMException, a frozen error) that reach the caller wrapped, never masked by a failed assignment to
// their message. The same in Chromium, across origins: tests/browser/hosting.test.js.
const path = require('path');
const { createAttention } = require('wasm-attention');
const { createAttentionWith } = require('../../dist/create.cjs');
const { runNode, DIST } = require('./node-child');

describe('info.threadsReason', () => {
  test.each([
    [{}, 1],
    [{ threads: 1 }, 1],
    [{ threads: 2 }, 2],
    [{ threads: 'auto' }, null],
  ])('createAttention(%j) in Node: the threads asked for, threadsReason null', async (options, threads) => {
    const attn = await createAttention(options);
    expect(attn.info.threadsReason).toBeNull();
    if (threads !== null) expect(attn.info.threads).toBe(threads);
    else expect(attn.info.threads).toBeGreaterThanOrEqual(1);
    attn.dispose();
  });

  test("without SharedArrayBuffer: threads 2 and 'auto' run on 1 thread, say why, and warn once per realm; threads 1 says nothing", () => {
    const r = runNode(`delete globalThis.SharedArrayBuffer;
      (async () => {
        const out = [];
        for (const threads of [2, 'auto', 1, 3]) {
          const attn = await createAttention({ threads });
          out.push(attn.info);
          attn.dispose();
        }
        console.log(JSON.stringify(out));
      })();`);
    expect(r.status).toBe(0);
    const infos = JSON.parse(r.stdout);
    const reason = 'this JavaScript engine has no SharedArrayBuffer, which threads need';
    expect(infos.map((i) => [i.threads, i.threadsReason])).toEqual([
      [1, reason],
      [1, reason],
      [1, null],
      [1, reason],
    ]);
    expect(r.stderr).toBe(`wasm-attention: threads: 2 was asked for, but the engine runs on 1 thread: ${reason}\n`);
  });
});

describe('errors from the platform are wrapped, never masked', () => {
  // The Node entry's loader, with one part replaced by one that fails as a browser does.
  const nodeLoader = (overrides) => ({
    isNode: true,
    glue: async (build) => require(path.join(DIST, 'node', `${build}.js`)),
    glueFile: (build) => `node/${build}.js`,
    wasmSource: (file) => require('fs').promises.readFile(path.join(DIST, file)),
    locateFile: (file) => (file.endsWith('.wasm') ? path.join(DIST, file) : path.join(DIST, 'node', file)),
    mainScript: (build) => path.join(DIST, 'node', `${build}.js`),
    workerScript: () => 'https://cdn.example/wasm-attention-simd-mt.worker.mjs',
    hardwareThreads: () => 2,
    ...overrides,
  });
  const refused = () =>
    new DOMException(
      "Failed to construct 'Worker': Script at 'https://cdn.example/wasm-attention-simd-mt.worker.mjs' " +
        "cannot be accessed from origin 'https://app.example'.",
      'SecurityError',
    );

  test("a SecurityError DOMException from a worker's creation (a browser refusing another origin's script)", async () => {
    const thrown = refused();
    const loader = nodeLoader({
      pthreadWorker: () => {
        throw thrown;
      },
    });
    const error = await createAttentionWith(loader, { threads: 2, relaxedSimd: false }).then(
      () => null,
      (e) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error.constructor).toBe(Error);
    expect(error.message).toBe(
      'createAttention: a worker thread of wasm-attention-simd-mt could not start (its script ' +
        `https://cdn.example/wasm-attention-simd-mt.worker.mjs): SecurityError: ${thrown.message}`,
    );
    expect(error.cause).toBe(thrown);
    expect(thrown.message).toMatch(/^Failed to construct/); // untouched
  });

  test.each([
    [
      'a DOMException',
      () =>
        new DOMException(
          'Failed to fetch dynamically imported module: https://cdn.example/wasm-attention-simd.mjs',
          'NetworkError',
        ),
      'NetworkError: Failed to fetch dynamically imported module: https://cdn.example/wasm-attention-simd.mjs',
    ],
    [
      'a frozen TypeError',
      () => Object.freeze(new TypeError('Failed to fetch dynamically imported module')),
      'TypeError: Failed to fetch dynamically imported module',
    ],
    ['a string', () => 'no module', 'no module'],
  ])('%s from loading the glue: an Error that names the file and the build', async (_, make, text) => {
    const thrown = make();
    const loader = nodeLoader({
      glue: async () => {
        throw thrown;
      },
    });
    const error = await createAttentionWith(loader, { relaxedSimd: false }).then(
      () => null,
      (e) => e,
    );
    expect(error.constructor).toBe(Error);
    expect(error.message).toBe(
      `createAttention: could not load node/wasm-attention-simd.js (the JavaScript of wasm-attention-simd): ${text}`,
    );
    expect(error.cause).toBe(thrown);
  });

  test('a frozen error thrown while the module starts: wrapped with the build', async () => {
    const thrown = Object.freeze(new RangeError('out of something'));
    const loader = nodeLoader({ glue: async () => () => Promise.reject(thrown) });
    const error = await createAttentionWith(loader, { relaxedSimd: false }).then(
      () => null,
      (e) => e,
    );
    expect(error.constructor).toBe(Error);
    expect(error.message).toBe('createAttention: wasm-attention-simd failed to start: RangeError: out of something');
    expect(error.cause).toBe(thrown);
  });
});
