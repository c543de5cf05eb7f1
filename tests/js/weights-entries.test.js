'use strict';
// readSafetensors and attentionArgsFromStateDict as users reach them: from every entry (the browser
// ESM entry, Node's import and CommonJS require), without creating an engine, and typed — a consumer
// written in TypeScript compiles against the package's declarations, and misuse does not.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { typeCheck } = require('./type-check');
const { SAFETENSORS_DIR } = require('./safetensors-file');

const ROOT = path.join(__dirname, '..', '..');
const FILE = path.join(SAFETENSORS_DIR, 'llama-gqa-f16.safetensors');
let tmp;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-weights-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'weights-check', private: true }));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Reads the LLaMA fixture and prints what it found; no createAttention anywhere.
const USE = `
const file = readSafetensors(readFileSync(${JSON.stringify(FILE)}));
const args = attentionArgsFromStateDict(file.tensors, 'model.layers.0.self_attn.');
console.log(JSON.stringify(Object.entries(args).map(([k, v]) => [k, v.constructor.name, v.length])));
`;
const WANT = [
  ['qProjWeight', 'Float32Array', 1024],
  ['kProjWeight', 'Float32Array', 512],
  ['vProjWeight', 'Float32Array', 512],
  ['outProjWeight', 'Float32Array', 1024],
];

test.each([
  // Not among the package's exports under Node's conditions: reached by its path.
  [
    'the browser ES module entry (dist/index.mjs)',
    'use.mjs',
    `import { readSafetensors, attentionArgsFromStateDict } from ${JSON.stringify(path.join(ROOT, 'dist', 'index.mjs'))};`,
  ],
  [
    'import in Node (dist/node.mjs)',
    'use.mjs',
    `import { readSafetensors, attentionArgsFromStateDict } from 'wasm-attention';`,
  ],
  [
    'require (dist/index.cjs)',
    'use.cjs',
    `const { readSafetensors, attentionArgsFromStateDict } = require('wasm-attention');`,
  ],
])('%s exports both and they work without an engine', (_, file, importLine) => {
  const head = file.endsWith('.mjs')
    ? `import { readFileSync } from 'node:fs';`
    : `const { readFileSync } = require('node:fs');`;
  const text = `${head}\n${importLine}\n${USE}`;
  fs.writeFileSync(path.join(tmp, file), text);
  const r = spawnSync(process.execPath, [file], { cwd: tmp, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`node ${file} exited ${r.status}:\n${r.stderr}\n--- code ---\n${text}`);
  expect(JSON.parse(r.stdout.trim())).toEqual(WANT);
});

const CONSUMER = `
import { createAttention, readSafetensors, attentionArgsFromStateDict } from 'wasm-attention';
import type { SafetensorsFile, SafetensorsTensor, StateDictAttentionArgs } from 'wasm-attention';

declare const bytes: Uint8Array;
const file: SafetensorsFile = readSafetensors(bytes);
readSafetensors(new ArrayBuffer(8));
readSafetensors(new DataView(new ArrayBuffer(8)));
const tensor: SafetensorsTensor | undefined = file.tensors['model.norm.weight'];
const dims: number[] | undefined = tensor?.shape;
const format: string | undefined = file.metadata.format;
const args: StateDictAttentionArgs = attentionArgsFromStateDict(file.tensors, 'model.layers.0.self_attn.');
const out: Float32Array = args.outProjWeight;
const q: Float32Array | undefined = args.qProjWeight;
attentionArgsFromStateDict({ a: new Float32Array(1), b: [1, 2], c: { data: new Float64Array(1), shape: [1] } });

export async function load(): Promise<void> {
  const attn = await createAttention();
  const layer = attn.createMultiHeadAttention({ ...args, embedDim: 32, numHeads: 4, numKvHeads: 2, rope: true });
  layer.dispose();
}
// @ts-expect-error a file name is not the file's bytes
readSafetensors('model.safetensors');
// @ts-expect-error the prefix is a string
attentionArgsFromStateDict(file.tensors, 0);
// @ts-expect-error the tensors are read-only data of known types, not strings
const wrong: string = file.tensors.x.data;
export { dims, format, out, q, wrong };
`;

test.each(['consumer.mts', 'consumer.cts'])(
  '%s compiles against the declarations (strict, NodeNext), misuse does not',
  (name) => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, CONSUMER);
    const { problems, read } = typeCheck(file);
    expect(problems).toEqual([]);
    const resolved = read.map((f) => path.basename(f)).filter((f) => f.startsWith('index.d.'));
    expect(resolved).toEqual([name.endsWith('.mts') ? 'index.d.mts' : 'index.d.cts']);
  },
);
