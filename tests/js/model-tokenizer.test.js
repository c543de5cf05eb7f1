'use strict';
// lib/model/tokenizer.mjs over @huggingface/tokenizers, against the ids and texts that
// scripts/model_tokenizers.py (a separate Python implementation of the same tokenizer.json pipelines)
// computed for each fixture: byte-level BPE, SentencePiece BPE with byte fallback, WordPiece, and
// their post-processor templates; the contract's options, padded ids, and its errors.
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');

const { createTokenizer } = modelModules();
const fixtures = Object.fromEntries(fixtureNames().map((n) => [n, loadFixture(n)]));

describe.each(fixtureNames())('%s', (name) => {
  const f = fixtures[name];
  const tokenizer = createTokenizer(f.tokenizer);

  test.each(f.expected.tokenizerCases.map((c) => [JSON.stringify(c.text), c]))('encode and decode %s', (_, c) => {
    const ids = tokenizer.encode(c.text);
    expect(ids).toBeInstanceOf(Int32Array);
    expect(Array.from(ids)).toEqual(c.ids);
    expect(Array.from(tokenizer.encode(c.text, { addSpecialTokens: false }))).toEqual(c.idsWithoutSpecialTokens);
    expect(tokenizer.decode(ids)).toBe(c.decoded);
    expect(tokenizer.decode(Array.from(ids), { skipSpecialTokens: false })).toBe(c.decodedWithSpecialTokens);
  });

  test("the tokenizer's size is the reference's", () => {
    expect(tokenizer.size).toBe(f.expected.tokenizerVocabSize);
  });

  test('the fixture prompt encodes to the ids the reference model was run on', () => {
    if (f.expected.prompt === null) return expect(f.config.model_type).toBe('bert'); // a pair with a mask: ids given
    expect(Array.from(tokenizer.encode(f.expected.prompt))).toEqual(f.expected.ids);
  });
});

test('the kinds and templates differ as intended (the fixtures are not all one tokenizer)', () => {
  const firstIds = (n) => Array.from(createTokenizer(fixtures[n].tokenizer).encode('hello world'));
  expect(firstIds('bert-mlm')).toEqual([2, 59, 60, 3]); // [CLS] hello world [SEP]
  expect(firstIds('llama-gqa-llama3-sharded')[0]).toBe(1); // <s> first
  expect(firstIds('qwen2-bias-tied-bf16').at(-1)).toBe(316); // <|endoftext|> appended
  expect(firstIds('gpt2')).toEqual(firstIds('qwen2-bias-tied-bf16').slice(0, -1));
});

test('ids past the tokenizer (a vocabulary padded beyond it) and negative ids decode to nothing', () => {
  const f = fixtures['qwen2-bias-tied-bf16'];
  const tokenizer = createTokenizer(f.tokenizer);
  expect(f.config.vocab_size).toBeGreaterThan(tokenizer.size);
  const hello = Array.from(tokenizer.encode('Hello world', { addSpecialTokens: false }));
  expect(tokenizer.decode([tokenizer.size, ...hello, f.config.vocab_size - 1, -1])).toBe('Hello world');
  expect(tokenizer.decode([tokenizer.size])).toBe('');
  expect(tokenizer.decode(new Int32Array(0))).toBe('');
  expect(tokenizer.decode(Int32Array.from(hello))).toBe('Hello world');
});

test('it loads from the parsed object alone: no network, no file', () => {
  const fetch = globalThis.fetch;
  globalThis.fetch = () => {
    throw new Error('the tokenizer tried to fetch');
  };
  try {
    expect(
      createTokenizer(fixtures.gpt2.tokenizer).decode(createTokenizer(fixtures.gpt2.tokenizer).encode('cat')),
    ).toBe('cat');
  } finally {
    globalThis.fetch = fetch;
  }
});

describe('errors', () => {
  const tokenizer = createTokenizer(fixtures.gpt2.tokenizer);
  test('without a tokenizer, encode and decode throw a TypeError saying so', () => {
    for (const none of [undefined, null]) {
      const t = createTokenizer(none);
      expect(() => t.encode('hi')).toThrow(TypeError);
      expect(() => t.encode('hi')).toThrow(/no tokenizer/);
      expect(() => t.decode([1])).toThrow(/no tokenizer/);
    }
  });
  test('a tokenizer.json that is not a parsed object is a TypeError', () => {
    expect(() => createTokenizer(JSON.stringify(fixtures.gpt2.tokenizer))).toThrow(TypeError);
    expect(() => createTokenizer({ version: '1.0' })).toThrow(/an object with a model/);
  });
  test('wrong arguments', () => {
    expect(() => tokenizer.encode(42)).toThrow(TypeError);
    expect(() => tokenizer.encode('a', { addSpecialTokens: 'no' })).toThrow(TypeError);
    expect(() => tokenizer.decode('1 2')).toThrow(TypeError);
    expect(() => tokenizer.decode(new Float32Array([1]))).toThrow(TypeError);
    expect(() => tokenizer.decode([1.5])).toThrow(
      new RangeError('tokenizer: decode: ids[0] must be an integer, got number 1.5'),
    );
    expect(() => tokenizer.decode([1], { skipSpecialTokens: 1 })).toThrow(TypeError);
  });
});

test('only the model loader reaches the tokenizer, by a dynamic import; @huggingface/tokenizers stays a devDependency (dist/ vendors it)', () => {
  const fs = require('fs');
  const path = require('path');
  const root = path.join(__dirname, '..', '..');
  const sources = ['bindings', 'lib', 'lib/readers', 'lib/model', 'lib/model/families'].flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir))
      .filter((f) => /\.(mjs|cjs|js)$/.test(f))
      .map((f) => path.join(dir, f)),
  );
  expect(sources.length).toBeGreaterThan(10);
  const text = (f) => fs.readFileSync(path.join(root, f), 'utf8');
  // A static import (or require) of the tokenizer module or the library, anywhere but in the module itself.
  const staticImport =
    /from\s+'[^']*(\/tokenizer\.mjs|@huggingface\/tokenizers)'|require\('[^']*(tokenizer|@huggingface)/;
  expect(sources.filter((f) => f !== path.join('lib', 'model', 'tokenizer.mjs') && staticImport.test(text(f)))).toEqual(
    [],
  );
  const dynamic = sources.filter((f) => /import\(\s*'[^']*\/tokenizer\.mjs'\s*\)/.test(text(f)));
  expect(dynamic).toEqual([path.join('lib', 'model', 'load-model.mjs')]);
  const pkg = require('../../package.json');
  expect([pkg.devDependencies['@huggingface/tokenizers'], pkg.dependencies?.['@huggingface/tokenizers']]).toEqual([
    '^0.2.0',
    undefined,
  ]);
});
