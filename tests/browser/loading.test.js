// createAttention in Chromium, on a cross-origin-isolated page served by the demo server: threads,
// the relaxed-SIMD builds (Chromium has relaxed SIMD, so they are its default), wasmBinary for a
// threaded build, and starts that fail with a clear Error instead of hanging.
const { blankPageSession, runInPage } = require('./harness');

let session;
let page;
let problems;

/** Runs fn(createAttention, arg) in the page with the package's browser entry; returns its JSON result. */
function inPage(fn, arg) {
  return runInPage(page, { entry: '/dist/index.mjs' }, `(m, arg) => (${fn})(m.entry.createAttention, arg)`, arg);
}

beforeAll(async () => {
  session = await blankPageSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

afterEach(() => {
  problems.length = 0;
});

// A tiny self-check: a 2-head causal call whose first query row sees only key 0 (weights [1, 0, …]).
const CHECK = `async (attn) => {
  const E = 8, q = Float32Array.from({ length: 3 * E }, (_, i) => Math.sin(i));
  const r = attn.multiHeadAttention({ query: q, embedDim: E, numHeads: 2, isCausal: true,
    inProjWeight: Float32Array.from({ length: 3 * E * E }, (_, i) => Math.cos(i) / 3),
    outProjWeight: Float32Array.from({ length: E * E }, (_, i) => Math.sin(3 * i) / 3) });
  return { info: attn.info, firstRow: Array.from(r.weights.slice(0, 3)), finite: r.output.every(Number.isFinite) };
}`;

test('threads: 2 and simd: false start on an isolated page, with the right numbers', async () => {
  const got = await inPage(async (createAttention, check) => {
    const run = eval(check); // eslint-disable-line no-eval
    return {
      isolated: crossOriginIsolated,
      mt: await run(await createAttention({ threads: 2 })),
      scalar: await run(await createAttention({ simd: false, threads: 2 })),
    };
  }, CHECK);
  expect(got.isolated).toBe(true);
  expect(got.mt).toEqual({
    info: expect.objectContaining({ simd: true, threads: 2 }),
    firstRow: [1, 0, 0],
    finite: true,
  });
  expect(got.scalar).toEqual({
    info: expect.objectContaining({ simd: false, threads: 2 }),
    firstRow: [1, 0, 0],
    finite: true,
  });
  expect(problems).toEqual([]);
});

test("relaxedSimd: 'auto' (the default) runs the relaxed builds here, false the SIMD builds; both with the right numbers", async () => {
  const got = await inPage(async (createAttention, check) => {
    const run = eval(check); // eslint-disable-line no-eval
    const out = [];
    for (const options of [
      {},
      { relaxedSimd: 'auto', threads: 2 },
      { relaxedSimd: true },
      { relaxedSimd: false, threads: 2 },
    ]) {
      out.push(await run(await createAttention(options)));
    }
    return out;
  }, CHECK);
  const want = (relaxedSimd, threads) => ({
    info: expect.objectContaining({ simd: true, relaxedSimd, threads }),
    firstRow: [1, 0, 0],
    finite: true,
  });
  expect(got).toEqual([want(true, 1), want(true, 2), want(true, 1), want(false, 2)]);
  expect(problems).toEqual([]);
});

test.each([
  ['wasm-attention-simd-mt', false],
  ['wasm-attention-relaxed-mt', true],
])('a threaded build (%s) takes its bytes from wasmBinary (a map of file name → bytes)', async (build, relaxedSimd) => {
  const got = await inPage(
    async (createAttention, [name, relaxed]) => {
      const bytes = new Uint8Array(await (await fetch(`/dist/${name}.wasm`)).arrayBuffer());
      const ok = await createAttention({ threads: 2, relaxedSimd: relaxed, wasmBinary: { [`${name}.wasm`]: bytes } });
      const bad = await createAttention({
        threads: 2,
        relaxedSimd: relaxed,
        wasmBinary: { [`${name}.wasm`]: bytes.slice(0, 100) },
      }).then(
        () => 'started',
        (e) => `${e.constructor.name}: ${e.message}`,
      );
      return { info: ok.info, bad };
    },
    [build, relaxedSimd],
  );
  expect(got.info).toEqual(expect.objectContaining({ threads: 2, relaxedSimd }));
  expect(got.bad).toMatch(
    new RegExp(`^Error: createAttention: could not instantiate the wasmBinary given for ${build}\\.wasm`),
  );
  expect(problems).toEqual([]);
});

test('a worker script that cannot load rejects the start (no hang), and the next start works', async () => {
  const got = await inPage(async (createAttention, check) => {
    const failed = await createAttention({
      threads: 3,
      locateFile: (name) => (name.endsWith('.worker.mjs') ? `/nowhere/${name}` : `/dist/${name}`),
    }).then(
      () => 'started',
      (e) => `${e.constructor.name}: ${e.message}`,
    );
    const again = await eval(check)(await createAttention({ threads: 2 })); // eslint-disable-line no-eval
    return { failed, again };
  }, CHECK);
  expect(got.failed).toMatch(/^Error: createAttention: a worker thread of wasm-attention-relaxed-mt could not start/);
  expect(got.again.info.threads).toBe(2);
  expect(problems.filter((p) => !p.includes('/nowhere/'))).toEqual([]);
});

test('a .wasm that cannot be fetched rejects with the file and the HTTP status', async () => {
  const got = await inPage((createAttention) =>
    createAttention({ locateFile: (name) => `/nowhere/${name}` }).then(
      () => 'started',
      (e) => `${e.constructor.name}: ${e.message}`,
    ),
  );
  expect(got).toMatch(
    /^Error: createAttention: could not instantiate wasm-attention-relaxed\.wasm: fetching \/nowhere\/wasm-attention-relaxed\.wasm gave HTTP 404/,
  );
});
