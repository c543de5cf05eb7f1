'use strict';
// models/tang-poems/ as a Hugging Face checkpoint: config.json is a `llama` config of model.py's
// shape, model.safetensors plans cleanly with transformers' tensor names (fp16, tied head), and
// tokenizer.json, through @huggingface/tokenizers, gives every text of the fixture exactly the ids
// the model's character vocabulary gave it (tests/fixtures/models/tang-poems.json, written by
// make_fixture.py: the prompts PyTorch ran, whole lines, and every character of the vocabulary).
const fs = require('fs');
const path = require('path');
const { modelModules } = require('./model-modules');

const ROOT = path.join(__dirname, '..', '..');
const FOLDER = path.join(ROOT, 'models', 'tang-poems');
const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'models', 'tang-poems.json'), 'utf8'));
const json = (name) => JSON.parse(fs.readFileSync(path.join(FOLDER, name), 'utf8'));
const weightBytes = fs.readFileSync(path.join(FOLDER, 'model.safetensors'));

const { readModelConfig, planCheckpoint, createTokenizer, readSafetensors } = modelModules();
const tokenizer = createTokenizer(json('tokenizer.json'));

test('the fixture names this folder', () => {
  expect(fixture.model).toBe('models/tang-poems/');
});

test("config.json: family llama, model.py's shape, <s> (id 0) begins and ends a poem", () => {
  const config = readModelConfig(json('config.json'));
  expect(config).toMatchObject({
    modelType: 'llama',
    numLayers: 4,
    hiddenSize: 128,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 32,
    intermediateSize: 384,
    vocabSize: fixture.cases[0].logits[0].length,
    maxPositions: 256,
    causal: true,
    norm: { kind: 'rms', placement: 'pre', eps: 1e-5 },
    activation: 'silu',
    mlp: 'gated',
    positions: 'rope',
    rope: { base: 10000, dim: 32, scaling: null },
    biases: { qkv: false, output: false, mlp: false },
    tieWordEmbeddings: true,
    eosTokenIds: [0],
    bosTokenId: 0,
  });
});

test('model.safetensors: every tensor by its transformers name, fp16, planned with nothing left over', () => {
  const config = readModelConfig(json('config.json'));
  const plan = planCheckpoint(config, weightBytes);
  expect(plan.unused).toEqual([]);
  expect(plan.layers).toHaveLength(4);
  expect(plan.lmHead.tied).toBe(true);
  const names = ['model.embed_tokens.weight', 'model.norm.weight'];
  for (let l = 0; l < 4; l++) {
    const p = `model.layers.${l}.`;
    names.push(`${p}input_layernorm.weight`, `${p}post_attention_layernorm.weight`);
    for (const x of ['q', 'k', 'v', 'o']) names.push(`${p}self_attn.${x}_proj.weight`);
    for (const x of ['gate', 'up', 'down']) names.push(`${p}mlp.${x}_proj.weight`);
  }
  const { tensors, metadata } = readSafetensors(weightBytes);
  expect(Object.keys(tensors).sort()).toEqual(names.sort());
  expect(Object.values(tensors).map((t) => t.dtype)).toEqual(names.map(() => 'F16'));
  expect(tensors['model.layers.0.self_attn.k_proj.weight'].shape).toEqual([64, 128]);
  expect(metadata.format).toBe('pt');
});

describe('tokenizer.json reproduces the character vocabulary', () => {
  test.each(
    fixture.texts.map((t) => [
      t.text.length > 40 ? `every character (${t.ids.length - 1})` : JSON.stringify(t.text),
      t,
    ]),
  )('encode and decode %s', (_, { text, ids }) => {
    expect(Array.from(tokenizer.encode(text))).toEqual(ids);
    expect(Array.from(tokenizer.encode(text, { addSpecialTokens: false }))).toEqual(ids.slice(1));
    expect(tokenizer.decode(ids)).toBe(text); // the poem start is special: skipped
    expect(tokenizer.decode(ids, { skipSpecialTokens: false })).toBe(`<s>${text}`);
  });

  test('the prompts PyTorch ran encode to its ids, and its greedy tokens decode to their text', () => {
    for (const c of fixture.cases) {
      expect([c.prompt, Array.from(tokenizer.encode(c.prompt))]).toEqual([c.prompt, c.ids]);
      // the fixture writes the poem start as '<s>', as decode does when it keeps special tokens
      expect(tokenizer.decode(c.greedy, { skipSpecialTokens: false })).toBe(c.greedyText);
    }
  });

  test('one token per character: the vocabulary, the ids and their count agree', () => {
    const every = fixture.texts.at(-1);
    expect(every.ids).toEqual(Array.from({ length: tokenizer.size }, (_, i) => i));
    expect(tokenizer.size).toBe(readModelConfig(json('config.json')).vocabSize);
    expect(Array.from(tokenizer.encode('\n\n', { addSpecialTokens: false }))).toEqual([1, 1]);
  });

  test('a character outside the vocabulary gives no token (the page names such characters first)', () => {
    const ids = Array.from(tokenizer.encode('月x😀光', { addSpecialTokens: false }));
    expect(ids).toEqual(Array.from(tokenizer.encode('月光', { addSpecialTokens: false })));
    expect(ids).toHaveLength(2);
  });
});
