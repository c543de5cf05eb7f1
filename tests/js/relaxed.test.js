'use strict';
// The relaxed-SIMD builds (wasm-attention-relaxed[-mt]): what they hold, the relaxedSimd option,
// the choice by a feature probe, and their numbers. Node 20 runs relaxed SIMD only with
// --experimental-wasm-relaxed-simd, so everything that runs them happens in a child Node with that
// flag, and the fallback in one without it (the --no- form, so a newer Node that ships relaxed SIMD
// is still an engine without it there).
const { execFileSync, spawnSync } = require('child_process');
const path = require('path');
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { mhaArgs, mhaDims, checkResult } = require('./cases');
const { runNode, DIST } = require('./node-child');

const ROOT = path.join(__dirname, '..', '..');
const WITH_RELAXED = ['--experimental-wasm-relaxed-simd'];
const WITHOUT_RELAXED = ['--no-experimental-wasm-relaxed-simd'];
const MHA_OPTIONS = {
  seed: 78,
  batch: 2,
  tgtLen: 9,
  srcLen: 7,
  embedDim: 40,
  numHeads: 5,
  bias: true,
  outBias: true,
  attnMask: 'float2d',
  isCausal: true,
};
const MHA = mhaArgs(MHA_OPTIONS);

/** The JSON a child printed last; throws with its stderr when it failed. */
function lastJson(r) {
  if (r.status !== 0) throw new Error(`child exited ${r.status} (${r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// In the child: the info and MHA result of each option set, or the error it rejected with.
const RUN_EACH = `
const args = require(${JSON.stringify(path.join(__dirname, 'cases.js'))}).mhaArgs(${JSON.stringify(MHA_OPTIONS)});
async function runEach(optionSets) {
  const out = [];
  for (const options of optionSets) {
    try {
      const attn = await createAttention(options);
      const r = attn.multiHeadAttention(args);
      out.push({ info: attn.info, output: Array.from(r.output), weights: Array.from(r.weights) });
      attn.dispose();
    } catch (e) {
      out.push({ error: e.constructor.name + ': ' + e.message });
    }
  }
  return out;
}`;

function runEach(optionSets, flags) {
  const code = `${RUN_EACH}\nrunEach(${JSON.stringify(optionSets)}).then((r) => console.log(JSON.stringify(r)));`;
  return lastJson(runNode(code, { flags }));
}

function checkNumbers(got, label) {
  const f32 = { output: Float32Array.from(got.output), weights: Float32Array.from(got.weights) };
  checkResult(f32, ref.multiHeadAttention(MHA), mhaDims(MHA), label);
}

describe('the builds', () => {
  const count = (build, op) => {
    const wat = execFileSync('wasm2wat', ['--enable-all', path.join(DIST, `${build}.wasm`)], {
      maxBuffer: 512 << 20,
      encoding: 'utf8',
    });
    return (wat.match(new RegExp(`\\b${op.replace('.', '\\.')}\\b`, 'g')) || []).length;
  };

  test.each(['wasm-attention-relaxed', 'wasm-attention-relaxed-mt'])(
    '%s.wasm multiplies and adds with f32x4.relaxed_madd',
    (build) => {
      expect(count(build, 'f32x4.relaxed_madd')).toBeGreaterThanOrEqual(8); // one 2×16 tile's accumulators
    },
  );

  test.each(['wasm-attention-simd', 'wasm-attention-simd-mt', 'wasm-attention-scalar'])(
    '%s.wasm has no relaxed SIMD instruction',
    (build) => {
      expect(count(build, 'f32x4.relaxed_madd')).toBe(0);
    },
  );
});

describe('the relaxedSimd option', () => {
  test.each(['yes', 1, null, {}])('relaxedSimd: %p is a TypeError naming the option', async (relaxedSimd) => {
    await expect(createAttention({ relaxedSimd })).rejects.toThrow(TypeError);
    await expect(createAttention({ relaxedSimd })).rejects.toThrow(/relaxedSimd must be true, false or 'auto', got/);
  });

  test('simd: false with relaxedSimd: true is a RangeError (relaxed SIMD extends SIMD)', async () => {
    await expect(createAttention({ simd: false, relaxedSimd: true })).rejects.toThrow(RangeError);
    await expect(createAttention({ simd: false, relaxedSimd: true })).rejects.toThrow(
      /relaxedSimd: true needs SIMD, but simd is false/,
    );
  });

  test("simd: false with relaxedSimd unset or 'auto' runs the scalar build", async () => {
    for (const options of [{ simd: false }, { simd: false, relaxedSimd: 'auto' }]) {
      const attn = await createAttention(options);
      expect([options, attn.info.simd, attn.info.relaxedSimd]).toEqual([options, false, false]);
      attn.dispose();
    }
  });
});

describe('an engine with relaxed SIMD', () => {
  const SETS = [
    {},
    { relaxedSimd: 'auto' },
    { relaxedSimd: true },
    { threads: 2 },
    { relaxedSimd: true, threads: 2 },
    { relaxedSimd: false },
    { relaxedSimd: false, threads: 2 },
    { simd: false },
  ];
  let results;
  beforeAll(() => {
    results = runEach(SETS, WITH_RELAXED);
  });

  test.each(SETS.map((options, i) => [options, i]))(
    "createAttention(%j): the probe's choice, the reference numbers",
    (options, i) => {
      const got = results[i];
      if (got.error) throw new Error(`${JSON.stringify(options)} rejected: ${got.error}`);
      const relaxed = options.relaxedSimd !== false && options.simd !== false;
      expect(got.info).toEqual(
        expect.objectContaining({ simd: options.simd !== false, relaxedSimd: relaxed, threads: options.threads ?? 1 }),
      );
      checkNumbers(got, JSON.stringify(options));
    },
  );

  test.each(['wasm-attention-relaxed', 'wasm-attention-relaxed-mt'])(
    '%s: wasmBinary bytes start it; garbage rejects naming the file',
    (build) => {
      const threads = build.endsWith('-mt') ? 2 : 1;
      const code = `      const bytes = new Uint8Array(fs.readFileSync(${JSON.stringify(path.join(DIST, `${build}.wasm`))}));
      (async () => {
        const attn = await createAttention({ threads: ${threads}, wasmBinary: { '${build}.wasm': bytes } });
        const bad = await createAttention({ threads: ${threads}, wasmBinary: bytes.slice(0, 64) }).then(() => 'started', (e) => e.message);
        console.log(JSON.stringify({ info: attn.info, bad }));
        attn.dispose();
      })();`;
      const got = lastJson(runNode(code, { flags: WITH_RELAXED }));
      expect(got.info).toEqual(expect.objectContaining({ relaxedSimd: true, threads }));
      expect(got.bad).toMatch(new RegExp(`could not instantiate the wasmBinary given for ${build}\\.wasm`));
    },
  );

  // The engine suites again, on relaxed builds: 1,200 fuzz cases against the float64 reference,
  // bit-identical results over 1, 2 and 3 threads, decoder features, KV caches, NaN propagation,
  // prepared layers (with one-shot calls of a few tokens, whose row kernel must fuse as the packed one),
  // f16/bf16 KV caches.
  test('the fuzz, threads, decoder, KV cache, NaN, prepared-layer and reduced-cache suites pass on the relaxed builds', () => {
    const suites = ['fuzz', 'threads', 'decoder', 'kvcache', 'nan', 'prepared', 'reduced-cache'].map(
      (name) => `tests/js/${name}.test.js`,
    );
    const r = spawnSync(
      process.execPath,
      [...WITH_RELAXED, path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--runInBand', '--json', ...suites],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, WA_TEST_RELAXED: '1' },
        timeout: 240000,
        maxBuffer: 64 << 20,
      },
    );
    const report = JSON.parse(r.stdout);
    const failures = report.testResults
      .filter((t) => t.status !== 'passed')
      .map((t) => `${path.basename(t.name)}: ${t.message.slice(0, 2000)}`);
    expect(failures).toEqual([]);
    expect(report.numTotalTestSuites).toBe(suites.length);
    expect(report.numPassedTests).toBeGreaterThan(100);
  }, 300000);
});

describe('an engine without relaxed SIMD', () => {
  test("relaxedSimd unset, 'auto' or false runs the SIMD build; true rejects with an Error that says so", () => {
    const sets = [
      {},
      { relaxedSimd: 'auto' },
      { threads: 2 },
      { relaxedSimd: false },
      { relaxedSimd: true },
      { relaxedSimd: true, threads: 2 },
    ];
    const got = runEach(sets, WITHOUT_RELAXED);
    for (const [i, options] of sets.slice(0, 4).entries()) {
      if (got[i].error) throw new Error(`${JSON.stringify(options)} rejected: ${got[i].error}`);
      expect([options, got[i].info]).toEqual([
        options,
        expect.objectContaining({ simd: true, relaxedSimd: false, threads: options.threads ?? 1 }),
      ]);
      checkNumbers(got[i], JSON.stringify(options));
    }
    for (const r of got.slice(4))
      expect(r.error).toMatch(
        /^Error: createAttention: relaxedSimd: true was asked for, but this engine lacks WebAssembly relaxed SIMD/,
      );
  });

  test("without SIMD at all, relaxedSimd: 'auto' runs the scalar build", () => {
    const [got] = runEach([{ relaxedSimd: 'auto' }], [...WITH_RELAXED, '--no-enable-sse4-1']);
    if (got.error) throw new Error(got.error);
    expect(got.info).toEqual(expect.objectContaining({ simd: false, relaxedSimd: false }));
    checkNumbers(got, 'no SIMD');
  });
});
