'use strict';
// The committed model fixtures hold together, so the runtime that issue 18 still needs can trust them:
// the Hugging Face layout of each folder, the reference arrays' sizes, attention that is a probability
// over exactly the keys each family and window lets a query see, logits consistent with the greedy
// tokens, and small files.
const fs = require('fs');
const path = require('path');
const { modelModules, fixtureNames, loadFixture, FIXTURES } = require('./model-modules');

const { readModelConfig, planCheckpoint, collectTensors, readShardedCheckpoint } = modelModules();

test('at least six checkpoints, under 3 MB together, each a Hugging Face folder', () => {
  const names = fixtureNames();
  expect(names.length).toBeGreaterThanOrEqual(6);
  let total = 0;
  for (const name of names) {
    const files = fs.readdirSync(path.join(FIXTURES, name));
    for (const f of files) total += fs.statSync(path.join(FIXTURES, name, f)).size;
    expect([name, files.includes('config.json'), files.includes('tokenizer.json')]).toEqual([name, true, true]);
    expect([name, files.includes('model.safetensors') || files.includes('model.safetensors.index.json')]).toEqual([
      name,
      true,
    ]);
  }
  expect(total).toBeLessThan(3e6);
});

test('one sharded, one F16 and one BF16 checkpoint among them', () => {
  const dtypes = {};
  for (const name of fixtureNames()) {
    const f = loadFixture(name);
    const tensors = f.index ? readShardedCheckpoint(f.index, f.files) : collectTensors(f.files['model.safetensors']);
    dtypes[name] = [...new Set(Object.values(tensors).map((t) => t.dtype))];
  }
  const having = (dtype) => Object.keys(dtypes).filter((name) => dtypes[name].includes(dtype));
  expect(having('F16').length).toBeGreaterThanOrEqual(1);
  expect(having('BF16').length).toBeGreaterThanOrEqual(1);
  for (const name of Object.keys(dtypes)) expect([name, dtypes[name].length]).toEqual([name, 1]);
  expect(fixtureNames().filter((name) => loadFixture(name).index).length).toBeGreaterThanOrEqual(1);
  expect(Object.keys(loadFixture('llama-gqa-llama3-sharded').files).length).toBe(2);
});

describe.each(fixtureNames())('%s', (name) => {
  const f = loadFixture(name);
  const c = readModelConfig(f.config);
  const T = f.expected.ids.length;

  test('reference arrays: logits [T, vocab], hidden [T, hidden], attention [heads, T, T] per layer, nothing else', () => {
    const shapes = Object.fromEntries(Object.entries(f.reference).map(([k, v]) => [k, v.shape]));
    const want = { logits: [T, c.vocabSize], hidden: [T, c.hiddenSize] };
    for (let l = 0; l < c.numLayers; l++) want[`attention.${l}`] = [c.numHeads, T, T];
    expect(shapes).toEqual(want);
    const count = Object.values(f.reference).reduce((n, v) => n + v.data.length, 0);
    expect(count).toBe(f.floatCount);
    for (const [k, v] of Object.entries(f.reference)) expect([k, v.data.every(Number.isFinite)]).toEqual([k, true]);
  });

  test('attention rows are probabilities over exactly the visible keys (causal, window, or all)', () => {
    for (let l = 0; l < c.numLayers; l++) {
      const { data } = f.reference[`attention.${l}`];
      for (let h = 0; h < c.numHeads; h++) {
        for (let i = 0; i < T; i++) {
          const row = data.subarray((h * T + i) * T, (h * T + i + 1) * T);
          const visible = (j) => (!c.causal || j <= i) && (c.layerWindows[l] === null || i - j < c.layerWindows[l]);
          const wrong = Array.from(row).findIndex((p, j) => (visible(j) ? !(p > 0) : p !== 0));
          expect([l, h, i, wrong]).toEqual([l, h, i, -1]);
          expect([l, h, i, Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6]).toEqual([l, h, i, true]);
        }
      }
    }
  });

  test('ids inside the vocabulary; the prompt is long enough to matter (past the window, several tokens)', () => {
    expect(f.expected.ids.every((id) => id >= 0 && id < c.vocabSize)).toBe(true);
    expect(T).toBeGreaterThanOrEqual(8);
    if (c.slidingWindow !== null) expect(T).toBeGreaterThan(2 * c.slidingWindow);
    if (c.modelType === 'bert') expect(new Set(f.expected.tokenTypeIds)).toEqual(new Set([0, 1]));
  });

  test('greedy tokens: inside the vocabulary, with margins a float32 engine resolves', () => {
    if (c.modelType === 'bert') return expect(f.expected.greedy).toBeNull();
    expect(f.expected.greedy.length).toBe(6);
    expect(f.expected.greedy.every((id) => id >= 0 && id < c.vocabSize)).toBe(true);
    expect(Math.min(...f.expected.greedyMargins)).toBeGreaterThan(1e-3);
  });

  test('the plan reads every tensor shape the reference was built from', () => {
    const tensors = f.index ? readShardedCheckpoint(f.index, f.files) : collectTensors(f.files['model.safetensors']);
    expect(planCheckpoint(c, tensors).layers.length).toBe(c.numLayers);
    expect(Object.fromEntries(Object.entries(tensors).map(([n, t]) => [n, t.shape]))).toEqual(f.expected.tensors);
  });
});
