'use strict';
// createAttention as issue-free loading needs it: the four builds (SIMD and scalar, one thread and
// pthreads), the automatic choice by a feature probe, the options' checks, wasmBinary honoured by
// every build, and starts that fail cleanly (a clear Error, nothing printed, no thread left, Node exits).
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { mhaArgs, mhaDims, checkResult } = require('./cases');

const { runNode, DIST } = require('./node-child');

const BUILDS = ['wasm-attention-simd', 'wasm-attention-simd-mt', 'wasm-attention-scalar', 'wasm-attention-scalar-mt'];
const MHA = mhaArgs({
  seed: 77,
  batch: 2,
  tgtLen: 5,
  srcLen: 7,
  embedDim: 16,
  numHeads: 4,
  bias: true,
  outBias: true,
  attnMask: 'float2d',
  isCausal: true,
});

function count(text, op) {
  return (text.match(new RegExp(`\\b${op.replace('.', '\\.')}\\b`, 'g')) || []).length;
}

describe('the builds', () => {
  const wats = {};
  beforeAll(() => {
    for (const build of BUILDS) {
      wats[build] = execFileSync('wasm2wat', ['--enable-all', path.join(DIST, `${build}.wasm`)], {
        maxBuffer: 512 << 20,
        encoding: 'utf8',
      });
    }
  });

  test.each(['wasm-attention-simd', 'wasm-attention-simd-mt'])('%s.wasm is a SIMD128 build', (build) => {
    for (const [op, min] of [
      ['f32x4.mul', 20],
      ['f32x4.add', 20],
      ['v128.load', 20],
      ['v128.store', 5],
    ]) {
      expect([op, count(wats[build], op) >= min]).toEqual([op, true]);
    }
  });

  test.each(['wasm-attention-scalar', 'wasm-attention-scalar-mt'])(
    '%s.wasm has no SIMD instruction at all',
    (build) => {
      expect(count(wats[build], 'v128')).toBe(0);
      expect(wats[build]).not.toMatch(/\b[if](8x16|16x8|32x4|64x2)\./);
    },
  );
});

describe('choosing a build', () => {
  test.each([
    [{ threads: 1 }, true, 1],
    [{ threads: 2 }, true, 2],
    [{ simd: false }, false, 1],
    [{ simd: false, threads: 2 }, false, 2],
    [{ simd: true }, true, 1],
  ])('createAttention(%j) runs simd: %s, threads: %s, with the reference numbers', async (options, simd, threads) => {
    const attn = await createAttention(options);
    // This Node (20) has no relaxed SIMD without its flag: relaxed.test.js covers the relaxed builds.
    expect(attn.info).toEqual({
      version: require('../../package.json').version,
      simd,
      relaxedSimd: false,
      threads,
      threadsReason: null,
    });
    checkResult(attn.multiHeadAttention(MHA), ref.multiHeadAttention(MHA), mhaDims(MHA), JSON.stringify(options));
    attn.dispose?.();
  });

  test("the scalar build gives the SIMD build's numbers within the tolerance", async () => {
    const [simd, scalar] = await Promise.all([createAttention(), createAttention({ simd: false })]);
    const a = simd.multiHeadAttention(MHA),
      b = scalar.multiHeadAttention(MHA);
    ref.expectClose(b.output, Float64Array.from(a.output), 'scalar vs simd output');
    ref.expectClose(b.weights, Float64Array.from(a.weights), 'scalar vs simd weights');
  });

  test('an engine without WebAssembly SIMD gets the scalar build, from require and import, with threads too', () => {
    const code = `
      const want = ${JSON.stringify(Array.from(ref.multiHeadAttention(MHA).output))};
      (async () => {
        const results = [];
        for (const options of [{}, { threads: 2 }]) {
          const attn = await createAttention(options);
          results.push(attn.info);
        }
        const esm = await import(${JSON.stringify('file://' + path.join(DIST, 'node.mjs'))});
        results.push((await esm.createAttention()).info);
        console.log(JSON.stringify(results));
      })();`;
    const r = runNode(code, { flags: ['--no-enable-sse4-1'] });
    if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
    const infos = JSON.parse(r.stdout);
    expect(infos.map((i) => [i.simd, i.threads])).toEqual([
      [false, 1],
      [false, 2],
      [false, 1],
    ]);
  });

  test('simd: true where SIMD is missing rejects with an Error that says so', () => {
    const r = runNode(
      `createAttention({ simd: true }).then(() => console.log('started'), (e) => console.log(e.constructor.name + ': ' + e.message));`,
      { flags: ['--no-enable-sse4-1'] },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Error: .*lacks WebAssembly SIMD/);
  });
});

describe('options', () => {
  test.each([0, 65, 1.5, -1, NaN, Infinity, '2', 'max', null, true, 2 ** 31 - 1])(
    'threads: %p is a RangeError naming threads',
    async (threads) => {
      await expect(createAttention({ threads })).rejects.toThrow(RangeError);
      await expect(createAttention({ threads })).rejects.toThrow(/threads must be an integer from 1 to 64 or 'auto'/);
    },
  );

  test.each([
    [{ simd: 'yes' }, /simd must be/],
    [{ wasmBinary: 'bytes' }, /wasmBinary must be/],
    [{ wasmBinary: { 'other.wasm': new Uint8Array(1) } }, /wasmBinary has no use for "other.wasm"/],
    [{ wasmBinary: { 'wasm-attention-simd.wasm': [1, 2] } }, /wasmBinary\["wasm-attention-simd.wasm"\] must be/],
    [{ locateFile: 'dist/' }, /locateFile must be a function/],
    [{ thread: 2 }, /unknown option thread/],
  ])('%j is a TypeError', async (options, message) => {
    await expect(createAttention(options)).rejects.toThrow(TypeError);
    await expect(createAttention(options)).rejects.toThrow(message);
  });
});

describe('wasmBinary is honoured by every build', () => {
  test.each(BUILDS)('%s: its own bytes start it; garbage bytes reject naming the file', async (build) => {
    const options = { threads: build.endsWith('-mt') ? 2 : 1, simd: build.includes('-simd') };
    const bytes = fs.readFileSync(path.join(DIST, `${build}.wasm`));
    const attn = await createAttention({ ...options, wasmBinary: { [`${build}.wasm`]: new Uint8Array(bytes) } });
    checkResult(attn.multiHeadAttention(MHA), ref.multiHeadAttention(MHA), mhaDims(MHA), build);
    attn.dispose?.();
    const garbage = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 7, 7, 7]);
    await expect(createAttention({ ...options, wasmBinary: garbage })).rejects.toThrow(
      new RegExp(`could not instantiate the wasmBinary given for ${build}\\.wasm`),
    );
  });
});

describe('failed starts', () => {
  test.each([1, 2])(
    'threads: %i with a corrupt wasmBinary: an Error, nothing printed, and Node exits by itself',
    (threads) => {
      const r = runNode(`createAttention({ threads: ${threads}, wasmBinary: new Uint8Array([1, 2, 3]) })
      .then(() => console.log('started'), (e) => console.log(e.constructor.name + ': ' + e.message));`);
      expect(r.signal).toBeNull(); // not killed by the timeout: nothing kept the process alive
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(
        /^Error: createAttention: could not instantiate the wasmBinary given for wasm-attention-simd(-mt)?\.wasm/,
      );
      expect(r.stderr).toBe('');
    },
  );

  test('a pthread worker that cannot start: an Error, its siblings terminated, and Node exits by itself', () => {
    // A copy of the package whose Node worker script is missing.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-noworker-'));
    try {
      fs.cpSync(DIST, copy, { recursive: true });
      fs.rmSync(path.join(copy, 'node', 'wasm-attention-simd-mt.worker.js'));
      const script = `require(${JSON.stringify(path.join(copy, 'index.cjs'))}).createAttention({ threads: 3 })
        .then(() => console.log('started'), (e) => console.log(e.constructor.name + ': ' + e.message));`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000 });
      expect(r.signal).toBeNull();
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^Error: createAttention: a worker thread of wasm-attention-simd-mt could not start/);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  test('a threaded engine lets Node exit once started and idle', () => {
    const r = runNode(`createAttention({ threads: 2 }).then((a) => console.log(a.info.threads));`);
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe('2');
  });
});
