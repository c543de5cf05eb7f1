'use strict';
// The published package as a user gets it: `npm pack`, install the tarball into an empty project,
// then use it from an ES module (import) and from CommonJS (require); both give the reference's numbers.
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ref = require('./reference');
const { mhaArgs, saArgs, mhaDims, saDims, checkResult } = require('./cases');

const ROOT = path.join(__dirname, '..', '..');
jest.setTimeout(300000);

let tmp, proj, tarball, files, unpacked;

// Tensors go to the child scripts as JSON: plain arrays plus a note of which typed array each was.
function encode(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    if (ArrayBuffer.isView(v))
      out[k] = { type: v.constructor.name, data: Array.from(v, (x) => (Number.isFinite(x) ? x : String(x))) };
    else out[k] = v;
  }
  return out;
}

const MHA = mhaArgs({
  seed: 900,
  batch: 2,
  tgtLen: 5,
  srcLen: 6,
  embedDim: 16,
  numHeads: 4,
  kdim: 9,
  vdim: 7,
  bias: true,
  outBias: true,
  attnMask: 'float2d',
  keyPaddingMask: 'bool',
  isCausal: true,
});
const SA = saArgs({ seed: 901, batch: 2, seqLen: 6, dModel: 8, dK: 4, dV: 5, bias: true, mask: 'bool' });

const DECODE = `
function decode(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = v && typeof v === 'object' && 'type' in v ? globalThis[v.type].from(v.data, Number) : v;
  }
  return out;
}
function run(createAttention, fs) {
  const cases = JSON.parse(fs.readFileSync('cases.json', 'utf8'));
  return createAttention({ threads: 1 }).then((attn) => {
    const m = attn.multiHeadAttention(decode(cases.mha));
    const s = attn.selfAttention(decode(cases.sa));
    console.log(JSON.stringify({
      info: attn.info,
      mhaType: m.output.constructor.name,
      mha: { output: Array.from(m.output), weights: Array.from(m.weights) },
      sa: { output: Array.from(s.output), weights: Array.from(s.weights) },
    }));
  });
}
`;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-pack-'));
  // npm pack runs prepack (the build: quick when dist/ is fresh)
  execFileSync('npm', ['pack', '--pack-destination', tmp], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const tgz = fs.readdirSync(tmp).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new Error(`npm pack produced ${tgz.join(', ') || 'no tarball'} in ${tmp}`);
  tarball = path.join(tmp, tgz[0]);
  files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
  unpacked = path.join(tmp, 'unpacked');
  fs.mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', tarball, '-C', unpacked]);

  proj = path.join(tmp, 'consumer');
  fs.mkdirSync(proj);
  fs.writeFileSync(
    path.join(proj, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }),
  );
  execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund'], {
    cwd: proj,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  fs.writeFileSync(path.join(proj, 'cases.json'), JSON.stringify({ mha: encode(MHA), sa: encode(SA) }));
  fs.writeFileSync(
    path.join(proj, 'use.mjs'),
    `import { createAttention } from 'wasm-attention';\nimport fs from 'node:fs';\n${DECODE}\nawait run(createAttention, fs);\n`,
  );
  fs.writeFileSync(
    path.join(proj, 'use.cjs'),
    `const { createAttention } = require('wasm-attention');\nconst fs = require('fs');\n${DECODE}\n` +
      `run(createAttention, fs).catch((e) => { console.error(e); process.exit(1); });\n`,
  );
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// loadModel from the installed package: a fixture checkpoint's folder, its reference's greedy tokens.
const MODEL = path.join(ROOT, 'tests', 'fixtures', 'models', 'gpt2');
const MODEL_EXPECTED = JSON.parse(fs.readFileSync(path.join(MODEL, 'expected.json'), 'utf8'));
const USE_MODEL = `
const attn = await createAttention();
const model = await loadModel(attn, ${JSON.stringify(MODEL)});
const { ids, text } = await model.generate(${JSON.stringify(MODEL_EXPECTED.prompt)}, { maxNewTokens: 3, stopAtEos: false });
console.log(JSON.stringify({ ids: Array.from(ids), decoded: text === model.decode(ids) }));
attn.dispose();
`;

test('the tarball holds the entries, types, the six builds and their workers, and no sources or tests', () => {
  const want = [
    'package.json',
    'LICENSE',
    'README.md',
    'docs/API.md',
    'dist/index.cjs',
    'dist/index.mjs',
    'dist/node.mjs',
    'dist/index.d.ts',
    'dist/index.d.mts',
    'dist/index.d.cts',
    'docs/models.md',
    'dist/load-model.mjs',
    'dist/tokenizer.mjs',
    'dist/vendor/tokenizers.mjs',
    'dist/vendor/tokenizers.cjs',
    'dist/vendor/tokenizers.LICENSE',
    'viz/index.mjs',
    'viz/index.d.mts',
    'dist/viz.cjs',
    'dist/viz.d.cts',
    'docs/viz.md',
    'docs/attention.md',
    'docs/building.md',
    'docs/performance.md',
    'docs/testing.md',
    'scripts/serve.mjs',
    'models/tang-poems/config.json',
    'models/tang-poems/tokenizer.json',
    'models/tang-poems/model.safetensors',
  ];
  for (const build of ['wasm-attention-simd', 'wasm-attention-relaxed', 'wasm-attention-scalar']) {
    want.push(
      `dist/${build}.wasm`,
      `dist/${build}.mjs`,
      `dist/node/${build}.js`,
      `dist/${build}-mt.wasm`,
      `dist/${build}-mt.mjs`,
      `dist/${build}-mt.worker.mjs`,
      `dist/node/${build}-mt.js`,
      `dist/node/${build}-mt.worker.js`,
    );
  }
  for (const f of want) expect([f, files.includes(`package/${f}`)]).toEqual([f, true]);
  const stray = files.filter(
    (f) =>
      /^package\/(src|tests|bindings|build|node_modules|bench)\//.test(f) ||
      /\.py$/.test(f) ||
      (/\.cjs$/.test(f) && !/dist\/(index|create|viz|vendor\/tokenizers)\.cjs$/.test(f)),
  );
  expect(stray).toEqual([]);
});

test('no file in the tarball cites a document the tarball lacks', () => {
  const texts = files.filter((f) => /\.(md|mjs|cjs|js|ts|mts|cts|html|css|json)$/.test(f));
  const cited = [];
  for (const f of texts) {
    const text = fs.readFileSync(path.join(unpacked, f), 'utf8');
    for (const m of text.matchAll(/\b([\w./-]*\b(?:API|TOOLCHAIN|DESIGN|CONTRIBUTING|CHANGELOG)\.md)\b/g)) {
      const target = m[1].includes('/') ? m[1].replace(/^(\.\.?\/)+/, '') : m[1];
      if (!files.some((g) => g.endsWith(`/${target}`))) cited.push(`${f}: ${m[1]}`);
    }
    // A folder named shared/ outside the package (the page's own web/shared/ is inside it); a document
    // in such a folder is caught above, by name.
    for (const [relative] of text.matchAll(/(?<![\w.-])(?:\.\.\/)+shared\//g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), relative));
      if (target.startsWith('..') || !target.startsWith('package/')) cited.push(`${f}: ${relative}`);
    }
  }
  expect(cited).toEqual([]);
});

test('types and exports pass @arethetypeswrong/cli (node10, node16 CJS and ESM, bundler) and publint', () => {
  const attw = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js'), tarball, '--format', 'json'],
    { encoding: 'utf8' },
  );
  const report = JSON.parse(attw.stdout);
  const resolutions = report.analysis.entrypoints['.'].resolutions;
  expect(Object.keys(resolutions).sort()).toEqual(['bundler', 'node10', 'node16-cjs', 'node16-esm']);
  expect(report.problems).toEqual({});
  const lint = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'publint', 'src', 'cli.js'), 'run', '--strict', path.join(unpacked, 'package')],
    { encoding: 'utf8' },
  );
  if (lint.status !== 0 || !/All good/.test(lint.stdout)) throw new Error(`publint:\n${lint.stdout}\n${lint.stderr}`);
});

test.each([
  ['use-model.mjs', `import { createAttention, loadModel } from 'wasm-attention';\n${USE_MODEL}`],
  [
    'use-model.cjs',
    `const { createAttention, loadModel } = require('wasm-attention');\n(async () => {${USE_MODEL}})().catch((e) => { console.error(e); process.exit(1); });`,
  ],
])('installed package loads a model from %s', (script, code) => {
  fs.writeFileSync(path.join(proj, script), code);
  const r = spawnSync(process.execPath, [script], { cwd: proj, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`node ${script} exited ${r.status}:\n${r.stderr}\n${r.stdout}`);
  const got = JSON.parse(r.stdout.trim().split('\n').pop());
  expect(got).toEqual({ ids: MODEL_EXPECTED.greedy.slice(0, 3), decoded: true });
});

test.each(['use.mjs', 'use.cjs'])('installed package works from %s', (script) => {
  const r = spawnSync(process.execPath, [script], { cwd: proj, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`node ${script} exited ${r.status}:\n${r.stderr}\n${r.stdout}`);
  const got = JSON.parse(r.stdout.trim().split('\n').pop());
  expect(got.mhaType).toBe('Float32Array');
  expect(got.info.simd).toBe(true);
  const wantMha = ref.multiHeadAttention(MHA);
  const wantSa = ref.selfAttention(SA);
  const f32 = (res) => ({ output: Float32Array.from(res.output), weights: Float32Array.from(res.weights) });
  checkResult(f32(got.mha), wantMha, mhaDims(MHA), `${script} multiHeadAttention`);
  checkResult(f32(got.sa), wantSa, saDims(SA), `${script} selfAttention`);
});
