'use strict';
// loadModel through every entry and every kind of location: a URL (fetch, with a local HTTP server)
// from the CommonJS entry, the Node ES module entry and the browser entry (dist/index.mjs, run in
// Node with its .wasm given as bytes); and the tokenizer kept off the attention-only path — neither
// dist/index.mjs's static imports nor a run that only uses attention reach it, in either module system.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { loadModel } = require('wasm-attention');
const { useEngines } = require('./engines');
const { loadFixture, FIXTURES } = require('./model-modules');
const { offTolerance, serveFixtures } = require('./model-api-cases');

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const engines = useEngines([1]);
const gpt2 = loadFixture('gpt2');
const sharded = loadFixture('llama-gqa-llama3-sharded');
const same = (a, b) => Buffer.from(a.buffer).equals(Buffer.from(b.buffer));

let server;
let tmp;
beforeAll(async () => {
  server = await serveFixtures();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-entries-'));
});
afterAll(async () => {
  await server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const GPT2_FOLDER = JSON.stringify(path.join(FIXTURES, 'gpt2'));

/**
 * Runs an ES module in a child Node process (optionally logging every module it loads); its last line
 * of output as JSON. Asynchronous: the test's HTTP server must answer the child meanwhile.
 */
async function runModule(code, { logModules = false } = {}) {
  const file = path.join(tmp, `run-${Math.random().toString(36).slice(2)}.mjs`);
  fs.writeFileSync(file, code);
  const args = [file];
  const env = { ...process.env };
  if (logModules) {
    // A loader hook (it runs on its own thread) appends each module's URL to a file.
    env.MODULE_LOG = path.join(tmp, `modules-${Math.random().toString(36).slice(2)}.txt`);
    fs.writeFileSync(
      path.join(tmp, 'log-hooks.mjs'),
      "import fs from 'node:fs';\nexport async function load(url, context, next) {\n" +
        '  fs.appendFileSync(process.env.MODULE_LOG, url + "\\n");\n  return next(url, context);\n}\n',
    );
    fs.writeFileSync(
      path.join(tmp, 'log-register.mjs'),
      "import { register } from 'node:module';\nregister('./log-hooks.mjs', import.meta.url);\n",
    );
    args.unshift('--import', path.join(tmp, 'log-register.mjs'));
  }
  const child = spawn(process.execPath, args, { cwd: tmp, env, timeout: 60000 });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const status = await new Promise((resolve) => child.on('close', resolve));
  if (status !== 0) throw new Error(`child exited ${status}:\n${stderr}\n--- code ---\n${code}`);
  return JSON.parse(stdout.trim().split('\n').pop());
}

describe('a URL source (fetch), from the CommonJS entry', () => {
  test('a folder URL, with or without its trailing slash: the folder’s numbers exactly', async () => {
    const fromFolder = await loadModel(engines[1], path.join(FIXTURES, 'gpt2'));
    const want = fromFolder.forward(gpt2.expected.ids).logits;
    fromFolder.dispose();
    for (const url of [server.url('gpt2/'), server.url('gpt2'), new URL(server.url('gpt2/'))]) {
      const model = await loadModel(engines[1], url);
      expect(same(model.forward(gpt2.expected.ids).logits, want)).toBe(true);
      expect(Array.from(model.encode(gpt2.expected.prompt))).toEqual(gpt2.expected.ids);
      model.dispose();
    }
  });

  test('sharded: model.safetensors is not there (404), so the index, then each shard it lists', async () => {
    const start = server.requests.length;
    const model = await loadModel(engines[1], server.url('llama-gqa-llama3-sharded/'));
    expect(offTolerance(model.forward(sharded.expected.ids).logits, sharded.reference.logits.data)).toEqual([]);
    model.dispose();
    expect(server.requests.slice(start).map((r) => r.url.split('/').pop())).toEqual([
      'config.json',
      'tokenizer.json',
      'model.safetensors',
      'model.safetensors.index.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
  });

  test('a 404 for tokenizer.json means no tokenizer; for config.json, an Error naming the URL', async () => {
    const model = await loadModel(engines[1], server.url('no-tokenizer/gpt2/'));
    expect(() => model.encode('a')).toThrow(TypeError);
    const r = await model.generate(gpt2.expected.ids, { maxNewTokens: 2, stopAtEos: false });
    expect([Array.from(r.ids), r.text]).toEqual([gpt2.expected.greedy.slice(0, 2), null]);
    model.dispose();
    const missing = server.url('nowhere/');
    await expect(loadModel(engines[1], missing)).rejects.toThrow(
      new Error(
        `loadModel: no config.json at ${missing}config.json: the source must be the folder of a Hugging Face checkpoint`,
      ),
    );
  });

  test('onProgress as bytes arrive (total null without Content-Length); fetchOptions and fetch (extensions)', async () => {
    const seen = [];
    const start = server.requests.length;
    let fetched = 0;
    const model = await loadModel(engines[1], server.url('chunked/gpt2/'), {
      onProgress: (p) => seen.push(p),
      fetchOptions: { headers: { 'X-Model-Test': 'yes' } },
      fetch: (url, init) => {
        fetched++;
        return fetch(url, init);
      },
    });
    model.dispose();
    const weights = seen.filter((p) => p.file === 'model.safetensors');
    expect(weights.length).toBeGreaterThan(2);
    expect(weights.every((p) => p.total === null)).toBe(true);
    expect(weights.at(-1).loaded).toBe(fs.statSync(path.join(FIXTURES, 'gpt2', 'model.safetensors')).size);
    expect(weights.map((p) => p.loaded)).toEqual([...weights.map((p) => p.loaded)].sort((a, b) => a - b));
    const requests = server.requests.slice(start);
    expect(requests.every((r) => r.headers['x-model-test'] === 'yes')).toBe(true);
    expect(fetched).toBe(requests.length);
  });

  test('an abort while loading: rejects with the signal’s AbortError, nothing kept', async () => {
    const heap = engines[1].memoryStats().heapInUse;
    const controller = new AbortController();
    const pending = loadModel(engines[1], server.url('gpt2/'), {
      signal: controller.signal,
      onProgress: (p) => p.file === 'tokenizer.json' && controller.abort(),
    });
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(engines[1].memoryStats().heapInUse).toBe(heap);
  });
});

describe('the ES module entries', () => {
  test('node.mjs: loadModel from a folder, generate greedy', async () => {
    const out = await runModule(`
      import { createAttention, loadModel } from ${JSON.stringify(path.join(DIST, 'node.mjs'))};
      const attn = await createAttention();
      const model = await loadModel(attn, ${GPT2_FOLDER});
      const { ids, text } = await model.generate(${JSON.stringify(gpt2.expected.prompt)}, { maxNewTokens: 4 });
      console.log(JSON.stringify({ ids: Array.from(ids), text, config: model.config }));
      attn.dispose();
    `);
    expect(out.ids).toEqual(gpt2.expected.greedy.slice(0, 4));
    expect(out.config.modelType).toBe('gpt2');
  });

  test('index.mjs (browsers, workers, bundlers): a URL source; a relative one needs a page address', async () => {
    const out = await runModule(`
      import fs from 'node:fs';
      import { createAttention, loadModel } from ${JSON.stringify(path.join(DIST, 'index.mjs'))};
      const attn = await createAttention({ relaxedSimd: false, wasmBinary: fs.readFileSync(${JSON.stringify(path.join(DIST, 'wasm-attention-simd.wasm'))}) });
      const model = await loadModel(attn, ${JSON.stringify(server.url('gpt2/'))});
      const { ids } = await model.generate(${JSON.stringify(gpt2.expected.ids)}, { maxNewTokens: 3, stopAtEos: false });
      const relative = await loadModel(attn, 'models/gpt2/').catch((e) => e.constructor.name + ': ' + e.message);
      console.log(JSON.stringify({ ids: Array.from(ids), relative }));
      attn.dispose();
    `);
    expect(out.ids).toEqual(gpt2.expected.greedy.slice(0, 3));
    expect(out.relative).toMatch(
      /^TypeError: loadModel: source "models\/gpt2\/" is a relative URL, and there is no page address/,
    );
  });
});

describe('the tokenizer stays off the attention-only path', () => {
  // The modules a file reaches by static imports and re-exports (import() is left out: it loads on demand).
  function staticGraph(entry) {
    const seen = new Set();
    const visit = (file) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = fs.readFileSync(file, 'utf8');
      for (const [, spec] of text.matchAll(
        /^\s*(?:import|export)\s[^'"()]*?from\s*'([^']+)'|^\s*import\s*'([^']+)'/gm,
      )) {
        if (spec?.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
      }
    };
    visit(entry);
    return [...seen].map((f) => path.relative(DIST, f));
  }

  test("dist/index.mjs's static imports reach no model code; load-model.mjs's reach no tokenizer", () => {
    const graph = staticGraph(path.join(DIST, 'index.mjs'));
    expect(graph).toEqual(expect.arrayContaining(['index.mjs', 'create.mjs', 'api.mjs']));
    expect(graph.filter((f) => /model|tokenizer|config|checkpoint|sampling/.test(f))).toEqual([]);
    const model = staticGraph(path.join(DIST, 'load-model.mjs'));
    expect(model).toEqual(expect.arrayContaining(['model.mjs', 'model-generate.mjs', 'checkpoint.mjs']));
    expect(model.filter((f) => /tokenizer/.test(f))).toEqual([]);
    // …and the tokenizer module does reach the vendored library, by a relative path.
    expect(staticGraph(path.join(DIST, 'tokenizer.mjs'))).toEqual(expect.arrayContaining(['vendor/tokenizers.mjs']));
  });

  test('ES modules: a run of attention loads no model code; loading a model with a tokenizer loads it all', async () => {
    const out = await runModule(
      `
      import fs from 'node:fs';
      import { createAttention, loadModel } from ${JSON.stringify(path.join(DIST, 'index.mjs'))};
      const loaded = () => fs.readFileSync(process.env.MODULE_LOG, 'utf8').split('\\n').map((u) => u.split('/dist/')[1] ?? '').filter((f) => /model|tokenizer/.test(f));
      const attn = await createAttention({ relaxedSimd: false, wasmBinary: fs.readFileSync(${JSON.stringify(path.join(DIST, 'wasm-attention-simd.wasm'))}) });
      attn.selfAttention({ x: new Float32Array(8), seqLen: 2, dModel: 4, wq: new Float32Array(16), wk: new Float32Array(16), wv: new Float32Array(16) });
      const before = loaded();
      const model = await loadModel(attn, ${JSON.stringify(server.url('gpt2/'))});
      console.log(JSON.stringify({ before, after: loaded() }));
      attn.dispose();
    `,
      { logModules: true },
    );
    expect(out.before).toEqual([]);
    expect(out.after).toEqual(expect.arrayContaining(['load-model.mjs', 'tokenizer.mjs', 'vendor/tokenizers.mjs']));
  });

  test('CommonJS: the same, and the vendored CommonJS build is what loads', async () => {
    const out = await runModule(`
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const { createAttention, loadModel } = require(${JSON.stringify(path.join(DIST, 'index.cjs'))});
      const loaded = () => Object.keys(require.cache).map((f) => f.split('/dist/')[1] ?? '').filter((f) => /tokenizer/.test(f));
      const attn = await createAttention();
      attn.selfAttention({ x: new Float32Array(8), seqLen: 2, dModel: 4, wq: new Float32Array(16), wk: new Float32Array(16), wv: new Float32Array(16) });
      const before = loaded();
      const model = await loadModel(attn, ${GPT2_FOLDER});
      console.log(JSON.stringify({ before, after: loaded(), tokens: Array.from(model.encode('the cat')) }));
      attn.dispose();
    `);
    expect(out.before).toEqual([]);
    expect(out.after).toEqual(['vendor/tokenizers.cjs']);
    expect(out.tokens.length).toBeGreaterThan(0);
  });

  test('dist/vendor carries the library’s licence; package.json keeps it a build input (devDependency)', () => {
    expect(fs.readFileSync(path.join(DIST, 'vendor', 'tokenizers.LICENSE'), 'utf8')).toMatch(/Apache License/);
    const pkg = require('../../package.json');
    expect(pkg.dependencies?.['@huggingface/tokenizers']).toBeUndefined();
    expect(pkg.files).toContain('dist/');
  });
});

describe('types', () => {
  const CONSUMER = `
import { createAttention, loadModel, readSafetensors } from 'wasm-attention';
import type { Model, ModelConfig, ModelSession, ForwardResult, GenerateResult, GeneratedToken, LoadProgress } from 'wasm-attention';

declare const bytes: Uint8Array;
export async function run(): Promise<void> {
  const attn = await createAttention();
  const progress: LoadProgress[] = [];
  const model: Model = await loadModel(attn, 'https://example.com/model/', {
    dtype: 'f32',
    onProgress: (p) => progress.push(p),
    signal: new AbortController().signal,
    fetchOptions: { headers: { Authorization: 'Bearer x' } },
  });
  await loadModel(attn, new URL('file:///models/x/'));
  await loadModel(attn, { config: { model_type: 'gpt2' }, weights: [bytes, readSafetensors(bytes)], tokenizer: null });
  const config: ModelConfig = model.config;
  const causal: boolean = config.causal;
  const ids: Int32Array = model.encode('hi', { addSpecialTokens: false });
  const text: string = model.decode(ids, { skipSpecialTokens: false });
  const session: ModelSession = model.createSession({ maxLength: 64 });
  const all: ForwardResult = model.forward([1, 2], { session, logits: 'last' });
  const logits: Float32Array | null = all.logits;
  const hidden: Float32Array = all.hidden;
  const layer0: Float32Array | null = model.forward(ids, { attention: { layers: [0], heads: [1, 0] } }).attention[0];
  session.truncate(0);
  const seen: GeneratedToken[] = [];
  const result: GenerateResult = await model.generate('hi', {
    maxNewTokens: 4, temperature: 0.7, topK: 40, topP: 0.9, seed: 1, stopAtEos: false, session,
    onToken: (t) => { seen.push(t); return t.id !== 2; },
  });
  const out: [Int32Array, string | null] = [result.ids, result.text];
  session.dispose();
  model.dispose();
  const disposed: boolean = model.disposed;
  await loadModel(attn, './m/', { dtype: 'f16' });
  // @ts-expect-error weights are stored as f32, f16, bf16 or int8 (no 4-bit)
  await loadModel(attn, './m/', { dtype: 'int4' });
  // @ts-expect-error logits is 'all', 'last' or 'none'
  model.forward([1], { logits: 'first' });
  // @ts-expect-error ids are numbers
  model.forward(['1']);
  // @ts-expect-error a prompt is text or ids
  await model.generate({ text: 'hi' });
  // @ts-expect-error the engine comes first
  await loadModel('./m/');
  console.log(causal, text, logits, hidden, layer0, out, disposed, progress);
}
`;

  test.each(['consumer.mts', 'consumer.cts'])(
    '%s compiles against the Models declarations; misuse does not',
    (name) => {
      const { typeCheck } = require('./type-check');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-model-types-'));
      try {
        fs.mkdirSync(path.join(dir, 'node_modules'));
        fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'wasm-attention'), 'dir');
        fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'model-types', private: true }));
        fs.writeFileSync(path.join(dir, name), CONSUMER);
        expect(typeCheck(path.join(dir, name)).problems).toEqual([]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
