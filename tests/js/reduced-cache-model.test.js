'use strict';
// Sessions of the fixture decoders with kvDtype 'f16' and 'bf16' (docs/API.md, "Reduced
// precision"): every layer's hidden state within tolerance of that layer in float64 over K (after
// RoPE) and V rounded as the session stores them, the prompt fed whole and then token by token;
// greedy generation keeps the fixtures' picks (their margins are ≥ 0.03, far above what rounding
// moves); 1 and 2 threads give the same bits; half the session bytes; bad kvDtype values are named.
const path = require('path');
const { loadModel } = require('wasm-attention');
const { useEngines } = require('./engines');
const { fixtureNames, loadFixture, modelModules, FIXTURES } = require('./model-modules');
const { offTolerance, rows } = require('./model-api-cases');
const { layerForward, finalNorm } = require('./model-layer-reference');
const { ROUNDERS } = require('./reduced-cache-rounding');

const { readModelConfig, planCheckpoint, readShardedCheckpoint } = modelModules();
const engines = useEngines([1, 2]);

const decoders = fixtureNames().filter((name) => name !== 'bert-mlm');

describe.each(decoders)('%s', (name) => {
  const f = loadFixture(name);
  const plan = planCheckpoint(
    readModelConfig(f.config),
    f.index ? readShardedCheckpoint(f.index, f.files) : f.files['model.safetensors'],
  );
  const { ids } = f.expected;
  const T = ids.length;
  const { numLayers: L, hiddenSize: E } = plan.config;
  const models = {};
  beforeAll(async () => {
    for (const t of [1, 2]) models[t] = await loadModel(engines[t], path.join(FIXTURES, name));
  });
  afterAll(() => {
    for (const m of Object.values(models)) m.dispose();
  });

  // Layer l's output from the engine's input to it, in float64 over the rounded K and V.
  const expectLayers = (hiddenStates, dtype, label) => {
    for (let l = 0; l < L; l++) {
      const out = layerForward(plan, l, hiddenStates[l], T, ROUNDERS[dtype]);
      const want = l === L - 1 ? finalNorm(plan, out, T) : out;
      expect([label, l, offTolerance(hiddenStates[l + 1], want)]).toEqual([label, l, []]);
    }
  };

  test.each(['f16', 'bf16'])('%s: the prompt whole, then token by token, layer by layer vs float64', (dtype) => {
    const model = models[1];
    const whole = model.createSession({ maxLength: T, kvDtype: dtype });
    const all = model.forward(ids, { session: whole, hiddenStates: true });
    expectLayers(all.hiddenStates, dtype, 'whole');
    // Token by token: each step's rows are the whole prompt's rows (the same rounded K and V).
    const steps = model.createSession({ maxLength: T, kvDtype: dtype });
    for (let t = 0; t < T; t++) {
      const { hiddenStates } = model.forward([ids[t]], { session: steps, hiddenStates: true });
      for (let i = 0; i <= L; i++) {
        expect([dtype, t, i, offTolerance(hiddenStates[i], rows(all.hiddenStates[i], E, t, t + 1))]).toEqual([
          dtype,
          t,
          i,
          [],
        ]);
      }
    }
    // The stored rounding moves the result: the f32 session's hidden state differs.
    const f32 = model.forward(ids, { hiddenStates: true });
    expect(f32.hidden).not.toEqual(all.hidden);
    whole.dispose();
    steps.dispose();
  });

  test.each(['f16', 'bf16'])(
    '%s: greedy generation keeps the fixture picks; 1 and 2 threads same bits',
    async (dtype) => {
      const got = {};
      for (const t of [1, 2]) {
        const session = models[t].createSession({ maxLength: T + 7, kvDtype: dtype });
        const out = await models[t].generate(ids, { maxNewTokens: 6, session, stopAtEos: false });
        const logits = models[t].forward([1], { session }).logits;
        got[t] = { ids: Array.from(out.ids), logits: Buffer.from(logits.buffer) };
        session.dispose();
      }
      expect(got[1].ids).toEqual(f.expected.greedy);
      expect(got[2]).toEqual(got[1]);
    },
  );
});

describe('session bytes and kvDtype errors', () => {
  const name = 'llama-gqa-llama3-sharded';
  let model, attn;
  beforeAll(async () => {
    attn = engines[1];
    model = await loadModel(attn, path.join(FIXTURES, name));
  });
  afterAll(() => model.dispose());

  test('an f16 or bf16 session takes half the heap of an f32 one (within 1 %)', () => {
    const grown = (kvDtype) => {
      const before = attn.memoryStats().heapInUse;
      const session = model.createSession({ maxLength: 2048, kvDtype });
      const bytes = attn.memoryStats().heapInUse - before;
      session.dispose();
      return bytes;
    };
    const f32 = grown('f32');
    for (const dtype of ['f16', 'bf16']) expect(Math.abs(grown(dtype) / f32 - 0.5)).toBeLessThan(0.01);
  });

  test.each([
    [16, TypeError, /createSession: kvDtype must be one of 'f32', 'f16', 'bf16', got number 16/],
    [null, TypeError, /createSession: kvDtype must be one of 'f32', 'f16', 'bf16', got null/],
    ['int8', RangeError, /createSession: kvDtype must be one of 'f32', 'f16', 'bf16', got "int8"/],
    ['fp16', RangeError, /createSession: kvDtype must be one of 'f32', 'f16', 'bf16', got "fp16"/],
  ])('kvDtype %j → %p', (kvDtype, kind, message) => {
    let error;
    try {
      model.createSession({ maxLength: 8, kvDtype });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(kind);
    expect(error.message).toMatch(message);
  });
});
