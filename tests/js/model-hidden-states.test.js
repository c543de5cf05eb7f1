'use strict';
// model.forward's hiddenStates (an extension, as transformers' output_hidden_states) on the six
// fixture checkpoints: entry 0 is the embedding rows computed here from the checkpoint's tensors,
// each entry l + 1 is layer l of entry l evaluated in float64 (the last one through the final norm)
// and is the final `hidden` itself; a chunk fed through a session gives the rows of the whole;
// asking changes no logit bit; entries can be picked; bad values are named errors that change nothing.
const path = require('path');
const { loadModel } = require('wasm-attention');
const { useEngines } = require('./engines');
const { fixtureNames, loadFixture, modelModules, FIXTURES } = require('./model-modules');
const { offTolerance, rows } = require('./model-api-cases');
const { layerForward, finalNorm, embeddingRows, erf } = require('./model-layer-reference');

const { readModelConfig, planCheckpoint, readShardedCheckpoint } = modelModules();
const engines = useEngines([1, 2]);

test('the reference erf (for exact gelu) agrees with known values', () => {
  // erf at points on both sides of where it switches method, to 16 digits
  const known = [
    [0.5, 0.5204998778130465],
    [1, 0.8427007929497149],
    [2, 0.9953222650189527],
    [2.4, 0.999311486103355],
    [-3, -0.9999779095030014],
    [5, 0.9999999999984626],
  ];
  for (const [x, want] of known) expect([x, Math.abs(erf(x) - want) < 1e-15]).toEqual([x, true]);
});

describe.each(fixtureNames())('%s', (name) => {
  const f = loadFixture(name);
  const plan = planCheckpoint(
    readModelConfig(f.config),
    f.index ? readShardedCheckpoint(f.index, f.files) : f.files['model.safetensors'],
  );
  const { ids, tokenTypeIds = null } = f.expected;
  const T = ids.length;
  const { numLayers: L, hiddenSize: E } = plan.config;
  const types = tokenTypeIds ? { tokenTypeIds } : {};
  let model;
  let all; // forward with every hidden state
  beforeAll(async () => {
    model = await loadModel(engines[2], path.join(FIXTURES, name));
    all = model.forward(ids, { hiddenStates: true, ...types });
  });
  afterAll(() => model.dispose());

  test('numLayers + 1 entries of [T, hiddenSize]; without the option, hiddenStates is null', () => {
    expect(all.hiddenStates.length).toBe(L + 1);
    for (const h of all.hiddenStates) expect([h.constructor.name, h.length]).toEqual(['Float32Array', T * E]);
    expect(model.forward(ids, types).hiddenStates).toBeNull();
    expect(model.forward(ids, { hiddenStates: false, ...types }).hiddenStates).toBeNull();
  });

  test("entry 0 is the embedding rows of the checkpoint's tensors (bert: through its LayerNorm)", () => {
    const { sum, normed } = embeddingRows(plan, ids, tokenTypeIds);
    if (normed === null)
      expect(all.hiddenStates[0]).toEqual(sum); // no norm: the same float32 sums, bit for bit
    else expect(offTolerance(all.hiddenStates[0], normed)).toEqual([]);
  });

  test('entry l + 1 is layer l of entry l in float64; the last one through the final norm', () => {
    for (let l = 0; l < L; l++) {
      const out = layerForward(plan, l, all.hiddenStates[l], T);
      const want = l === L - 1 ? finalNorm(plan, out, T) : out;
      expect([l, offTolerance(all.hiddenStates[l + 1], want)]).toEqual([l, []]);
    }
  });

  test('the last entry is `hidden`, bit for bit; asking changes no logit or hidden bit', () => {
    expect(all.hiddenStates[L]).toEqual(all.hidden);
    const plain = model.forward(ids, types);
    expect(plain.logits).toEqual(all.logits);
    expect(plain.hidden).toEqual(all.hidden);
    const withAttention = model.forward(ids, { attention: true, hiddenStates: true, ...types });
    expect(withAttention.logits).toEqual(all.logits);
    expect(withAttention.hiddenStates).toEqual(all.hiddenStates);
  });

  test('1 and 2 threads give the same bits', async () => {
    const one = await loadModel(engines[1], path.join(FIXTURES, name));
    expect(one.forward(ids, { hiddenStates: true, ...types }).hiddenStates).toEqual(all.hiddenStates);
    one.dispose();
  });

  test('{ layers } picks entries: the others are null', () => {
    const { hiddenStates } = model.forward(ids, { hiddenStates: { layers: [L, 0] }, logits: 'none', ...types });
    expect(hiddenStates.map((h) => h !== null)).toEqual(Array.from({ length: L + 1 }, (_, i) => i === 0 || i === L));
    expect([hiddenStates[0], hiddenStates[L]]).toEqual([all.hiddenStates[0], all.hiddenStates[L]]);
    expect(model.forward(ids, { hiddenStates: {}, ...types }).hiddenStates).toEqual(all.hiddenStates);
  });

  if (plan.config.causal) {
    test("a chunk fed through a session gives the whole prompt's rows", () => {
      const session = model.createSession({ maxLength: T });
      model.forward(ids.slice(0, 4), { session, logits: 'none' });
      const { hiddenStates } = model.forward(ids.slice(4), { session, hiddenStates: true });
      for (let i = 0; i <= L; i++) {
        expect([i, offTolerance(hiddenStates[i], rows(all.hiddenStates[i], E, 4, T))]).toEqual([i, []]);
      }
      session.dispose();
    });
  }
});

describe('bad hiddenStates values are named errors that change nothing', () => {
  const name = 'llama-gqa-llama3-sharded';
  let model;
  beforeAll(async () => {
    model = await loadModel(engines[1], path.join(FIXTURES, name));
  });
  afterAll(() => model.dispose());

  test.each([
    ['yes', TypeError, /forward: hiddenStates must be true, false or \{ layers: number\[\] \}, got/],
    [[0, 1], TypeError, /forward: hiddenStates must be true, false or \{ layers/],
    [{ layer: [0] }, TypeError, /forward: hiddenStates has an unknown key layer \(known: layers\)/],
    [{ layers: 1 }, TypeError, /forward: hiddenStates\.layers must be an array of hidden state indices, got/],
    [{ layers: [] }, RangeError, /forward: hiddenStates\.layers must be a non-empty array/],
    [{ layers: ['0'] }, TypeError, /forward: hiddenStates\.layers\[0\] must be a hidden state index/],
    [{ layers: [3] }, RangeError, /forward: hiddenStates\.layers\[0\] must be an integer from 0 to 2 .*got 3/],
    [{ layers: [-1] }, RangeError, /hiddenStates\.layers\[0\] must be an integer from 0 to 2/],
    [{ layers: [1.5] }, RangeError, /hiddenStates\.layers\[0\] must be an integer from 0 to 2/],
    [
      { layers: [1, 1] },
      RangeError,
      /forward: hiddenStates\.layers must be hidden state indices each listed once, got 1 twice/,
    ],
  ])('%j → %p', (value, kind, message) => {
    const session = model.createSession({ maxLength: 8 });
    model.forward([1, 2], { session });
    let error;
    try {
      model.forward([3], { session, hiddenStates: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(kind);
    expect(error.message).toMatch(message);
    expect(session.length).toBe(2);
    session.dispose();
  });
});
