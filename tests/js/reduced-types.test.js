'use strict';
// Issue 19's declarations as a strict TypeScript consumer meets them: weightDtype, a KV cache's dtype,
// loadModel's dtype and a session's kvDtype, attn.memory(), readSafetensors' options, and Float16Array
// wherever a Float32Array is taken — where the program's lib declares Float16Array; where it does not
// (lib es2020), the declarations still compile and a Float16Array type is simply unknown.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { typeCheck } = require('./type-check');

const ROOT = path.join(__dirname, '..', '..');
let tmp;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-reduced-types-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'reduced-types', private: true }));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const COMMON = `
import { createAttention, loadModel, readSafetensors } from 'wasm-attention';
import type { EngineMemory, KvDtype, WeightDtype, SafetensorsFile } from 'wasm-attention';

declare const w: Float32Array;
declare const bytes: Uint8Array;
export async function run(): Promise<number> {
  const attn = await createAttention();
  const dtypes: WeightDtype[] = ['f32', 'f16', 'bf16', 'int8'];
  const layer = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, inProjWeight: w, outProjWeight: w, weightDtype: dtypes[3] });
  attn.createSelfAttention({ dModel: 8, wq: w, wk: w, wv: w, weightDtype: 'bf16' });
  const cache = layer.createKvCache({ maxLength: 16, dtype: 'f16' });
  const stored: KvDtype = cache.dtype;
  const model = await loadModel(attn, './model/', { dtype: 'int8' });
  const session = model.createSession({ maxLength: 64, kvDtype: 'bf16' });
  const file: SafetensorsFile = readSafetensors(bytes, { widen: false });
  readSafetensors(bytes, {});
  const memory: EngineMemory = attn.memory();
  // @ts-expect-error int4 is not a weight dtype
  attn.createSelfAttention({ dModel: 8, wq: w, wk: w, wv: w, weightDtype: 'int4' });
  // @ts-expect-error a KV cache is not stored as int8
  layer.createKvCache({ maxLength: 16, dtype: 'int8' });
  // @ts-expect-error widen is a boolean
  readSafetensors(bytes, { widen: 'no' });
  // @ts-expect-error memory() has no heapInUse (memoryStats() has)
  memory.heapInUse;
  session.dispose();
  return memory.heapBytes + memory.weightBytes + memory.cacheBytes + stored.length + Object.keys(file.tensors).length;
}
`;

const WITH_FLOAT16 = `
declare const h: Float16Array;
export async function half(): Promise<void> {
  const attn = await createAttention();
  attn.multiHeadAttention({ embedDim: 8, numHeads: 2, query: h, inProjWeight: h, outProjWeight: h, attnMask: h });
  attn.createSelfAttention({ dModel: 8, wq: h, wk: h, wv: { data: h, shape: [8, 8] } });
  const model = await loadModel(attn, './model/');
  model.createSampler()(h);
  const data = readSafetensors(bytes, { widen: false }).tensors.x.data;
  if (data instanceof Float16Array) attn.selfAttention({ dModel: 8, seqLen: 1, x: data, wq: h, wk: h, wv: h });
}
`;

test('lib es2022 + esnext.float16: the options type-check, and Float16Array goes wherever Float32Array does', () => {
  const file = path.join(tmp, 'half.mts');
  fs.writeFileSync(file, COMMON + WITH_FLOAT16);
  const { problems } = typeCheck(file, {
    target: 7 /* ES2022 */,
    lib: ['lib.es2022.d.ts', 'lib.esnext.float16.d.ts', 'lib.dom.d.ts'],
  });
  expect(problems).toEqual([]);
});

test('lib es2020 (no Float16Array): the declarations compile; a Float16Array type is unknown to the program', () => {
  const plain = path.join(tmp, 'plain.mts');
  fs.writeFileSync(plain, COMMON);
  expect(typeCheck(plain).problems).toEqual([]);
  const half = path.join(tmp, 'plain-half.mts');
  fs.writeFileSync(half, COMMON + WITH_FLOAT16);
  expect(typeCheck(half).problems).toEqual(expect.arrayContaining(["Cannot find name 'Float16Array'."]));
});
