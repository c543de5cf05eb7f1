'use strict';
// lib/model/checkpoint.mjs: each fixture's tensors found by their Hugging Face names and planned per
// layer, from every kind of weights the contract accepts (bytes, shards, readSafetensors results, a
// sharded index), and a missing or misshapen tensor refused with a TypeError that names it.
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');

const {
  planCheckpoint,
  collectTensors,
  readShardedCheckpoint,
  shardFiles,
  readModelConfig,
  readSafetensors,
  familyOf,
} = modelModules();
const fixtures = Object.fromEntries(fixtureNames().map((n) => [n, loadFixture(n)]));
const tensorsOf = (f) =>
  f.index ? readShardedCheckpoint(f.index, f.files) : collectTensors(f.files['model.safetensors']);

/** Every tensor a plan holds, as [path in the plan, tensor]. */
function planned(plan) {
  const out = [];
  const walk = (value, at) => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value.shape) && value.data) return void out.push([at, value]);
    for (const [k, v] of Object.entries(value)) if (k !== 'config' && k !== 'unused') walk(v, `${at}.${k}`);
  };
  walk(plan, 'plan');
  return out;
}

// The roles each family's layer has, and the tensors they read (layer 0).
const LAYER_ROLES = {
  llama: ['down', 'gate', 'inputNorm', 'k', 'o', 'postAttentionNorm', 'q', 'up', 'v'],
  gpt2: ['down', 'inputNorm', 'o', 'postAttentionNorm', 'qkv', 'up'],
  bert: ['attentionNorm', 'down', 'k', 'o', 'outputNorm', 'q', 'up', 'v'],
};

describe.each(fixtureNames())('%s', (name) => {
  const f = fixtures[name];
  const config = readModelConfig(f.config);
  // a family by its first model type: llama for every llama-shaped decoder
  const family = familyOf(config.modelType).modelTypes[0];
  const tensors = tensorsOf(f);
  const plan = planCheckpoint(config, tensors);

  test('every tensor of the checkpoint is planned or listed unused, with the shapes the reference used', () => {
    const shapes = f.expected.tensors;
    const seen = new Set(plan.unused);
    for (const [, t] of planned(plan)) {
      const entry = Object.entries(tensors).find(([, v]) => v === t);
      expect(entry).toBeDefined();
      expect([entry[0], t.shape]).toEqual([entry[0], shapes[entry[0]]]);
      seen.add(entry[0]);
    }
    expect([...seen].sort()).toEqual(Object.keys(shapes).sort());
    expect(plan.layers.length).toBe(config.numLayers);
    for (const layer of plan.layers) expect(Object.keys(layer).sort()).toEqual(LAYER_ROLES[family]);
  });

  test('biases where the family and config say, none elsewhere', () => {
    const l = plan.layers[1];
    const bias = (role) => l[role].bias !== null;
    if (family === 'llama') {
      expect([bias('q'), bias('k'), bias('v'), bias('o'), bias('gate'), bias('up'), bias('down')]).toEqual([
        config.biases.qkv,
        config.biases.qkv,
        config.biases.qkv,
        config.biases.output,
        config.biases.mlp,
        config.biases.mlp,
        config.biases.mlp,
      ]);
      expect([l.inputNorm.bias, plan.finalNorm.bias]).toEqual([null, null]);
    } else {
      for (const role of Object.keys(l)) expect([role, bias(role)]).toEqual([role, true]);
    }
  });

  test('the head: tied to the token embeddings exactly when the config says', () => {
    expect(plan.lmHead.tied).toBe(config.tieWordEmbeddings);
    expect(plan.lmHead.weight === plan.embeddings.tokens).toBe(config.tieWordEmbeddings);
    expect(plan.lmHead.weight.shape).toEqual([config.vocabSize, config.hiddenSize]);
  });

  test('the same plan from every form of the weights', () => {
    const forms = f.index
      ? [
          Object.values(f.files),
          Object.values(f.files).map((b) => readSafetensors(b)),
          collectTensors(Object.values(f.files)),
        ]
      : [
          f.files['model.safetensors'],
          [f.files['model.safetensors']],
          readSafetensors(f.files['model.safetensors']),
          new Uint8Array(f.files['model.safetensors']).buffer.slice(0),
        ];
    const summary = (p) => planned(p).map(([at, t]) => [at, t.dtype, t.shape, Array.from(t.data.subarray(0, 3))]);
    for (const form of forms) expect(summary(planCheckpoint(f.config, form))).toEqual(summary(plan));
  });
});

test('GPT-2 and BERT checkpoints load with or without their model prefix; llama without model.', () => {
  const strip = (tensors, prefix) =>
    Object.fromEntries(Object.entries(tensors).map(([n, t]) => [n.startsWith(prefix) ? n.slice(prefix.length) : n, t]));
  for (const [name, prefix] of [
    ['gpt2', 'transformer.'],
    ['bert-mlm', 'bert.'],
    ['mistral-window', 'model.'],
  ]) {
    const tensors = tensorsOf(fixtures[name]);
    const a = planCheckpoint(fixtures[name].config, tensors);
    const b = planCheckpoint(fixtures[name].config, strip(tensors, prefix));
    expect(planned(b).map(([at, t]) => [at, t.data])).toEqual(planned(a).map(([at, t]) => [at, t.data]));
  }
});

test('GPT-2 keeps Conv1D weights as stored ([in, out]) with c_attn fused; buffers are unused', () => {
  const tensors = tensorsOf(fixtures.gpt2);
  const extra = {
    ...tensors,
    'transformer.h.0.attn.bias': { dtype: 'U8', shape: [1, 1, 32, 32], data: new Uint8Array(1024) },
  };
  const plan = planCheckpoint(fixtures.gpt2.config, extra);
  expect([plan.layers[0].qkv.layout, plan.layers[0].qkv.weight.shape, plan.layers[0].up.weight.shape]).toEqual([
    'in,out',
    [32, 96],
    [32, 128],
  ]);
  expect(plan.unused).toEqual(['transformer.h.0.attn.bias']);
});

test('BERT: the MLM head with its transform, the pooler unused; without cls.predictions.* no head; gamma/beta names', () => {
  const tensors = tensorsOf(fixtures['bert-mlm']);
  const plan = planCheckpoint(fixtures['bert-mlm'].config, tensors);
  expect(plan.unused).toEqual(['bert.pooler.dense.bias', 'bert.pooler.dense.weight']);
  expect([
    plan.lmHead.bias.shape,
    plan.lmHead.transform.dense.weight.shape,
    plan.lmHead.transform.norm.bias.shape,
  ]).toEqual([[96], [32, 32], [32]]);
  expect(plan.finalNorm).toBeNull();
  expect(plan.embeddings.tokenTypes.shape).toEqual([2, 32]);
  const headless = Object.fromEntries(Object.entries(tensors).filter(([n]) => !n.startsWith('cls.')));
  expect(planCheckpoint(fixtures['bert-mlm'].config, headless).lmHead).toBeNull();
  const old = Object.fromEntries(
    Object.entries(tensors).map(([n, t]) => [
      n.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta'),
      t,
    ]),
  );
  expect(planCheckpoint(fixtures['bert-mlm'].config, old).layers[1].outputNorm.weight).toBe(
    plan.layers[1].outputNorm.weight,
  );
  const decoderBias = Object.fromEntries(
    Object.entries(tensors).map(([n, t]) => [n === 'cls.predictions.bias' ? 'cls.predictions.decoder.bias' : n, t]),
  );
  expect(planCheckpoint(fixtures['bert-mlm'].config, decoderBias).lmHead.bias).toBe(plan.lmHead.bias);
});

test('a sharded index: its files in order, each tensor in the file it names', () => {
  const f = fixtures['llama-gqa-llama3-sharded'];
  expect(shardFiles(f.index)).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
  const moved = {
    ...f.index,
    weight_map: { ...f.index.weight_map, 'model.norm.weight': 'model-00002-of-00002.safetensors' },
  };
  const where = f.index.weight_map['model.norm.weight'];
  expect(where).toBe('model-00001-of-00002.safetensors');
  expect(() => readShardedCheckpoint(moved, f.files)).toThrow(
    new TypeError(
      'checkpoint: tensor "model.norm.weight" is missing from model-00002-of-00002.safetensors, where the index puts it',
    ),
  );
  expect(() => readShardedCheckpoint(f.index, { [where]: f.files[where] })).toThrow(
    /shard "model-00002-of-00002.safetensors", named by the index, was not given/,
  );
  for (const bad of ['../secret.safetensors', '/etc/x.safetensors', 'a/../../b', '', 7]) {
    expect(() => shardFiles({ weight_map: { 'model.norm.weight': bad } })).toThrow(TypeError);
  }
  expect(() => shardFiles({ weight_map: {} })).toThrow(/empty/);
  expect(() => shardFiles([])).toThrow(TypeError);
  expect(() => collectTensors([f.files[where], f.files[where]])).toThrow(/in more than one shard/);
  expect(() => collectTensors([])).toThrow(TypeError);
});

describe('errors name the tensor', () => {
  const f = fixtures['qwen2-bias-tied-bf16'];
  const tensors = tensorsOf(f);
  const without = (name) => Object.fromEntries(Object.entries(tensors).filter(([n]) => n !== name));

  test('a missing tensor is a TypeError naming it and its expected shape', () => {
    expect(() => planCheckpoint(f.config, without('model.layers.1.self_attn.k_proj.bias'))).toThrow(
      new TypeError('checkpoint: tensor "model.layers.1.self_attn.k_proj.bias" is missing (expected shape [16])'),
    );
    expect(() => planCheckpoint(f.config, without('model.embed_tokens.weight'))).toThrow(
      /"model.embed_tokens.weight" is missing/,
    );
    const untied = { ...f.config, tie_word_embeddings: false };
    expect(() => planCheckpoint(untied, tensors)).toThrow(
      new TypeError('checkpoint: tensor "lm_head.weight" is missing (expected shape [320, 32])'),
    );
    const headless = tensorsOf(fixtures['bert-mlm']);
    delete headless['cls.predictions.transform.dense.bias'];
    expect(() => planCheckpoint(fixtures['bert-mlm'].config, headless)).toThrow(
      /"cls.predictions.transform.dense.bias" is missing/,
    );
  });

  test('a misshapen tensor is a TypeError naming it, its shape and the expected one', () => {
    const t = tensors['model.layers.0.mlp.up_proj.weight'];
    const bad = { ...tensors, 'model.layers.0.mlp.up_proj.weight': { ...t, shape: [32, 64] } };
    expect(() => planCheckpoint(f.config, bad)).toThrow(
      new TypeError('checkpoint: tensor "model.layers.0.mlp.up_proj.weight" has shape [32, 64], expected [64, 32]'),
    );
    const wider = { ...f.config, intermediate_size: 65 };
    expect(() => planCheckpoint(wider, tensors)).toThrow(
      /"model.layers.0.mlp.gate_proj.weight" has shape \[64, 32\], expected \[65, 32\]/,
    );
    const ints = { ...tensors, 'model.norm.weight': { dtype: 'I64', shape: [32], data: new BigInt64Array(32) } };
    expect(() => planCheckpoint(f.config, ints)).toThrow(
      /"model.norm.weight" must be a floating-point tensor.*got I64/,
    );
  });

  test('weights that are not a checkpoint are a TypeError; a corrupt file is readSafetensors’ RangeError', () => {
    expect(() => planCheckpoint(f.config, 'model.safetensors')).toThrow(TypeError);
    expect(() => planCheckpoint(f.config, [new Uint8Array(4)])).toThrow(RangeError);
    expect(() => planCheckpoint({ model_type: 'opt' }, tensors)).toThrow(RangeError);
  });
});
