'use strict';
// lib/model/config.mjs: every fixture's config.json normalised as transformers reads it (defaults
// included), RoPE's inverse frequencies against the float64 reference, and the contract's errors.
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');

const { readModelConfig, ropeInverseFrequencies, SUPPORTED_MODEL_TYPES, CONFIG_KEYS } = modelModules();
const fixtures = Object.fromEntries(fixtureNames().map((n) => [n, loadFixture(n)]));
const configOf = (name, changes = {}) => ({ ...fixtures[name].config, ...changes });
const pick = (c) => Object.fromEntries(CONFIG_KEYS.map((k) => [k, c[k]]));

test('there is a fixture of every family', () => {
  expect([...new Set(Object.values(fixtures).map((f) => f.config.model_type))].sort()).toEqual(
    [...SUPPORTED_MODEL_TYPES].sort(),
  );
});

test("the contract's fields of each fixture, in the contract's order (CONFIG_KEYS)", () => {
  // each fixture's expected.json holds them as the fixture script computed them from config.json
  const got = Object.fromEntries(Object.entries(fixtures).map(([n, f]) => [n, pick(readModelConfig(f.config))]));
  const expected = Object.fromEntries(Object.entries(fixtures).map(([n, f]) => [n, f.expected.modelConfig]));
  expect(Object.keys(got).length).toBeGreaterThanOrEqual(6);
  expect(got).toEqual(expected);
  for (const fields of Object.values(got)) expect(Object.keys(fields)).toEqual(CONFIG_KEYS);
});

test('family details: norms, activations, MLPs, positions, biases, tied heads, windows, token types', () => {
  const detail = (n) => {
    const c = readModelConfig(fixtures[n].config);
    return [
      c.norm,
      c.activation,
      c.mlp,
      c.positions,
      c.biases,
      c.tieWordEmbeddings,
      c.slidingWindow,
      c.layerWindows,
      c.typeVocabSize,
      c.eosTokenIds,
    ];
  };
  const none = [null, null];
  // One row per checkpoint: norm, activation, MLP, positions, biases, tied, window, layer windows,
  // token types, end-of-sequence ids.
  // prettier-ignore
  const expected = {
    'llama-gqa-llama3-sharded': [{ kind: 'rms', placement: 'pre', eps: 1e-5 }, 'silu', 'gated', 'rope', { qkv: false, output: false, mlp: false }, false, null, none, 0, [2]],
    'llama-bias-partial-linear-f16': [{ kind: 'rms', placement: 'pre', eps: 1e-6 }, 'silu', 'gated', 'rope', { qkv: true, output: true, mlp: true }, true, null, none, 0, [2]],
    'mistral-window': [{ kind: 'rms', placement: 'pre', eps: 1e-5 }, 'silu', 'gated', 'rope', { qkv: false, output: false, mlp: false }, false, 4, [4, 4], 0, [2]],
    'qwen2-bias-tied-bf16': [{ kind: 'rms', placement: 'pre', eps: 1e-6 }, 'silu', 'gated', 'rope', { qkv: true, output: false, mlp: false }, true, null, none, 0, [316]],
    gpt2: [{ kind: 'layer', placement: 'pre', eps: 1e-5 }, 'gelu_tanh', 'plain', 'learned', { qkv: true, output: true, mlp: true }, true, null, none, 0, [316]],
    'bert-mlm': [{ kind: 'layer', placement: 'post', eps: 1e-12 }, 'gelu_erf', 'plain', 'learned', { qkv: true, output: true, mlp: true }, true, null, none, 2, []],
  };
  for (const [name, row] of Object.entries(expected)) expect([name, detail(name)]).toEqual([name, row]);
  expect(readModelConfig(fixtures.gpt2.config).intermediateSize).toBe(128); // n_inner null → 4·n_embd
});

test('RoPE: dims, scalings, and inverse frequencies equal to the float64 reference', () => {
  const rope = (n) => readModelConfig(fixtures[n].config).rope;
  expect(rope('llama-gqa-llama3-sharded')).toEqual({
    base: 500000,
    dim: 16,
    scaling: { kind: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 48 },
  });
  expect(rope('llama-bias-partial-linear-f16')).toEqual({
    base: 10000,
    dim: 4,
    scaling: { kind: 'linear', factor: 2 },
  });
  expect(rope('mistral-window')).toEqual({ base: 10000, dim: 8, scaling: null }); // rope_type 'default'
  expect(rope('gpt2')).toBeNull();
  for (const [name, f] of Object.entries(fixtures)) {
    if (!f.expected.ropeInverseFrequencies) continue;
    const got = ropeInverseFrequencies(rope(name));
    const want = f.expected.ropeInverseFrequencies;
    expect([name, got.length]).toEqual([name, want.length]);
    want.forEach((w, i) => expect([name, i, Math.abs(got[i] - w) <= 1e-14 * Math.abs(w)]).toEqual([name, i, true]));
  }
  // llama3 leaves short wavelengths, slows long ones by `factor`, blends between: all three happen here.
  const c = rope('llama-gqa-llama3-sharded');
  const plain = ropeInverseFrequencies({ ...c, scaling: null });
  const scaled = ropeInverseFrequencies(c);
  const ratios = Array.from(scaled, (s, i) => plain[i] / s);
  expect(
    ratios.some((r) => r === 1) &&
      ratios.some((r) => Math.abs(r - 8) < 1e-12) &&
      ratios.some((r) => r > 1.01 && r < 7.99),
  ).toBe(true);
});

test('defaults: no num_key_value_heads is multi-head, no head_dim is hidden/heads, tie defaults per family', () => {
  const base = configOf('mistral-window');
  delete base.num_key_value_heads;
  delete base.head_dim;
  delete base.tie_word_embeddings;
  const c = readModelConfig(base);
  expect([c.numKvHeads, c.headDim, c.tieWordEmbeddings, c.rope.dim]).toEqual([4, 8, false, 8]);
  const g = configOf('gpt2');
  delete g.tie_word_embeddings;
  expect(readModelConfig(g).tieWordEmbeddings).toBe(true);
  expect(readModelConfig(configOf('mistral-window', { sliding_window: null })).layerWindows).toEqual([null, null]);
  const unwindowed = configOf('mistral-window');
  delete unwindowed.sliding_window;
  delete unwindowed.max_position_embeddings;
  expect([readModelConfig(unwindowed).slidingWindow, readModelConfig(unwindowed).maxPositions]).toEqual([4096, 131072]);
  expect(readModelConfig(configOf('gpt2', { scale_attn_weights: false })).attentionScale).toBe(1);
  expect(readModelConfig(configOf('mistral-window')).attentionScale).toBe(1 / Math.sqrt(8));
});

test("Qwen2's use_sliding_window windows the layers from max_window_layers on", () => {
  const c = readModelConfig(
    configOf('qwen2-bias-tied-bf16', { use_sliding_window: true, sliding_window: 5, max_window_layers: 1 }),
  );
  expect([c.slidingWindow, c.layerWindows]).toEqual([5, [null, 5]]);
});

test('eos_token_id may be a list', () => {
  expect(readModelConfig(configOf('mistral-window', { eos_token_id: [2, 7] })).eosTokenIds).toEqual([2, 7]);
});

describe('errors', () => {
  test('an unsupported model_type is a RangeError naming it and the supported ones', () => {
    expect(() => readModelConfig(configOf('gpt2', { model_type: 'falcon' }))).toThrow(RangeError);
    expect(() => readModelConfig(configOf('gpt2', { model_type: 'falcon' }))).toThrow(
      new RegExp(`model_type "falcon".*${SUPPORTED_MODEL_TYPES.join(', ')}`),
    );
    expect(() => readModelConfig({})).toThrow(/model_type undefined is not supported/);
  });

  test('an unknown rope_scaling kind is a RangeError naming it, under either key', () => {
    expect(() =>
      readModelConfig(configOf('mistral-window', { rope_scaling: { rope_type: 'yarn', factor: 4 } })),
    ).toThrow(RangeError);
    expect(() =>
      readModelConfig(configOf('mistral-window', { rope_scaling: { rope_type: 'yarn', factor: 4 } })),
    ).toThrow(/"yarn".*default, linear, llama3/);
    expect(() => readModelConfig(configOf('mistral-window', { rope_scaling: { type: 'dynamic', factor: 4 } }))).toThrow(
      /"dynamic"/,
    );
    expect(() => readModelConfig(configOf('mistral-window', { rope_scaling: { type: 'linear' } }))).toThrow(
      /rope_scaling\.factor must be a number/,
    );
  });

  test('not an object, missing or wrong sizes', () => {
    expect(() => readModelConfig('{"model_type":"gpt2"}')).toThrow(TypeError);
    expect(() => readModelConfig(null)).toThrow(TypeError);
    const noHidden = configOf('mistral-window');
    delete noHidden.hidden_size;
    expect(() => readModelConfig(noHidden)).toThrow(new TypeError('readModelConfig: config.json has no hidden_size'));
    expect(() => readModelConfig(configOf('mistral-window', { num_attention_heads: '4' }))).toThrow(TypeError);
    expect(() => readModelConfig(configOf('mistral-window', { num_hidden_layers: 0 }))).toThrow(RangeError);
    expect(() => readModelConfig(configOf('mistral-window', { num_key_value_heads: 3 }))).toThrow(
      /multiple of num_key_value_heads/,
    );
    expect(() =>
      readModelConfig(configOf('mistral-window', { head_dim: null, num_attention_heads: 5, num_key_value_heads: 5 })),
    ).toThrow(/multiple of num_attention_heads/);
    expect(() => readModelConfig(configOf('gpt2', { n_head: 5 }))).toThrow(RangeError);
    expect(() => readModelConfig(configOf('mistral-window', { partial_rotary_factor: 0.1 }))).toThrow(
      /partial_rotary_factor/,
    );
    expect(() => readModelConfig(configOf('mistral-window', { rope_theta: -1 }))).toThrow(RangeError);
    expect(() => readModelConfig(configOf('mistral-window', { tie_word_embeddings: 'yes' }))).toThrow(TypeError);
    expect(() => readModelConfig(configOf('mistral-window', { eos_token_id: -1 }))).toThrow(RangeError);
  });

  test('an activation, position embedding or attention scaling the runtime lacks is a RangeError naming it', () => {
    expect(() => readModelConfig(configOf('mistral-window', { hidden_act: 'relu2' }))).toThrow(
      /hidden_act "relu2" is not supported/,
    );
    expect(() => readModelConfig(configOf('bert-mlm', { position_embedding_type: 'relative_key' }))).toThrow(
      /relative_key/,
    );
    expect(() => readModelConfig(configOf('gpt2', { scale_attn_by_inverse_layer_idx: true }))).toThrow(RangeError);
  });
});
