// `wasm-attention/viz` as a consumer resolves it: Node's ESM resolution through package.json's
// exports (a folder whose node_modules/wasm-attention is this repository), and TypeScript with
// NodeNext resolution finding viz/index.d.mts. The modules import no engine: loading them in Node
// evaluates no DOM code and reaches nothing in dist/.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('./harness');
const { typeCheck } = require('../js/type-check');

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-viz-exports-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'viz-consumer', private: true }));
});
afterAll(() => tmp && fs.rmSync(tmp, { recursive: true, force: true }));

test("Node: import('wasm-attention/viz') gives its four functions (Node's resolution through exports)", () => {
  const script = path.join(tmp, 'use.mjs');
  fs.writeFileSync(
    script,
    `import * as viz from 'wasm-attention/viz';
console.log(JSON.stringify({ names: Object.keys(viz).sort(), types: Object.values(viz).map((f) => typeof f) }));
`,
  );
  const out = JSON.parse(execFileSync(process.execPath, [script], { cwd: tmp, encoding: 'utf8' }));
  expect(out).toEqual({
    names: ['createHeadView', 'createHeatmap', 'createModelView', 'weightRGB'],
    types: ['function', 'function', 'function', 'function'],
  });
});

test("Node: require('wasm-attention/viz') gives the same four functions (dist/viz.cjs)", () => {
  const script = path.join(tmp, 'use.cjs');
  fs.writeFileSync(script, "console.log(JSON.stringify(Object.keys(require('wasm-attention/viz')).sort()));\n");
  expect(JSON.parse(execFileSync(process.execPath, [script], { cwd: tmp, encoding: 'utf8' }))).toEqual([
    'createHeadView',
    'createHeatmap',
    'createModelView',
    'weightRGB',
  ]);
});

test('no viz module imports anything outside viz/ (no engine, no demo code)', () => {
  const dir = path.join(ROOT, 'viz');
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.mjs'))) {
    const src = fs.readFileSync(path.join(dir, file), 'utf8');
    const specifiers = Array.from(src.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g), (m) => m[1] ?? m[2]);
    for (const s of specifiers) expect([file, s]).toEqual([file, expect.stringMatching(/^\.\/[\w-]+\.mjs$/)]);
  }
});

test('TypeScript (NodeNext) resolves wasm-attention/viz to its declarations and checks the options', () => {
  const file = path.join(tmp, 'use.mts');
  fs.writeFileSync(
    file,
    `import { createHeatmap, createHeadView, createModelView, weightRGB } from 'wasm-attention/viz';
declare const element: HTMLElement;
const tokens = ['a', 'b'];
const attention = [new Float32Array(2 * 2 * 2)];
const map = createHeatmap(element, { weights: new Float32Array(4), queryTokens: tokens, causal: true, title: 't' });
map.update({ causal: false });
createHeadView(element, { attention, tokens, layer: 0 }).dispose();
createModelView(element, { attention, tokens, numKvHeads: 1, onSelect: ({ layer, head }: { layer: number; head: number }) => layer + head });
// @ts-expect-error: weights must be a Float32Array
createHeatmap(element, { weights: [0.5], queryTokens: tokens });
const [r, g, b]: [number, number, number] = weightRGB(0.25);
// @ts-expect-error: a colour has three bytes
const [, , , alpha] = weightRGB(r + g + b);
`,
  );
  const { problems, read } = typeCheck(file);
  expect(problems).toEqual([]);
  expect(read.some((f) => f.endsWith('viz/index.d.mts'))).toBe(true);
});
