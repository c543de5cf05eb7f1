'use strict';
// Every error the contract's "Models" section names, and the argument checks around them: the error's
// class and message (the argument, what was expected, what was given), a session's length unchanged,
// the heap back where it was, and the model still working afterwards.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createAttention, loadModel, readSafetensors, SUPPORTED_MODEL_TYPES } = require('wasm-attention');
const { useEngines } = require('./engines');
const { loadFixture, FIXTURES } = require('./model-modules');

const engines = useEngines([1]);
const attn = () => engines[1];
const heap = () => attn().memoryStats().heapInUse;
const gpt2 = loadFixture('gpt2');
const mistral = loadFixture('mistral-window');
const bert = loadFixture('bert-mlm');
const folder = (name) => path.join(FIXTURES, name);

/** Runs call, expects it to throw `Class` matching `message`, and the heap to be where it was. */
function expectError(call, Class, message) {
  const before = heap();
  let error;
  try {
    call();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(Class);
  expect(error.constructor).toBe(Class);
  expect(error.message).toMatch(message);
  expect(heap()).toBe(before);
}

async function expectRejection(promise, Class, message) {
  const before = heap();
  const error = await promise.then(
    () => undefined,
    (e) => e,
  );
  expect(error).toBeInstanceOf(Class);
  expect(error.constructor).toBe(Class);
  expect(error.message).toMatch(message);
  expect(heap()).toBe(before);
}

describe('loadModel', () => {
  const gpt2Object = () => ({
    config: gpt2.config,
    weights: gpt2.files['model.safetensors'],
    tokenizer: gpt2.tokenizer,
  });

  test('not an engine: a TypeError', async () => {
    for (const value of [undefined, null, {}, { info: {} }, 'attn']) {
      await expectRejection(
        loadModel(value, folder('gpt2')),
        TypeError,
        /^loadModel: attn must be an engine made by createAttention, got /,
      );
    }
  });

  test('a disposed engine: an Error saying so', async () => {
    const other = await createAttention();
    other.dispose();
    await expect(loadModel(other, folder('gpt2'))).rejects.toThrow(/loadModel: this engine was disposed/);
  });

  test('an unsupported model_type: a RangeError naming it and the supported ones', async () => {
    const config = { ...gpt2.config, model_type: 'falcon' };
    await expectRejection(
      loadModel(attn(), { ...gpt2Object(), config }),
      RangeError,
      new RegExp(`model_type "falcon" is not supported: one of ${SUPPORTED_MODEL_TYPES.join(', ')}$`),
    );
  });

  test('a missing or misshapen tensor: a TypeError naming it', async () => {
    const { tensors } = readSafetensors(gpt2.files['model.safetensors']);
    const without = { ...tensors };
    delete without['transformer.h.1.mlp.c_fc.weight'];
    await expectRejection(
      loadModel(attn(), { config: gpt2.config, weights: { tensors: without } }),
      TypeError,
      /tensor "transformer\.h\.1\.mlp\.c_fc\.weight" is missing/,
    );
    const bent = { ...tensors, 'transformer.ln_f.weight': { ...tensors['transformer.ln_f.weight'], shape: [16, 2] } };
    await expectRejection(
      loadModel(attn(), { config: gpt2.config, weights: { tensors: bent } }),
      TypeError,
      /tensor "transformer\.ln_f\.weight" has shape \[16, 2\], expected \[32\]/,
    );
  });

  test('a folder without config.json: an Error naming the path; without weights: an Error naming the folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-model-'));
    try {
      await expectRejection(
        loadModel(attn(), dir),
        Error,
        new RegExp(`no config\\.json at ${path.join(dir, 'config.json')}`),
      );
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(gpt2.config));
      await expectRejection(
        loadModel(attn(), dir),
        Error,
        /has neither model\.safetensors nor model\.safetensors\.index\.json/,
      );
      fs.writeFileSync(path.join(dir, 'config.json'), '{ "model_type": ');
      await expectRejection(loadModel(attn(), dir), Error, /config\.json is not valid JSON/);
      await expectRejection(loadModel(attn(), path.join(dir, 'nowhere')), Error, /no config\.json/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a sharded folder missing a shard: an Error naming it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-model-'));
    try {
      const from = folder('llama-gqa-llama3-sharded');
      for (const f of ['config.json', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors']) {
        fs.copyFileSync(path.join(from, f), path.join(dir, f));
      }
      await expectRejection(loadModel(attn(), dir), Error, /no model-00002-of-00002\.safetensors in /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("dtype: a string other than 'f32', 'f16', 'bf16' or 'int8' is a RangeError, another value a TypeError", async () => {
    await expectRejection(
      loadModel(attn(), gpt2Object(), { dtype: 'float32' }),
      RangeError,
      /dtype must be 'f32', 'f16', 'bf16' or 'int8', got "float32"/,
    );
    await expectRejection(
      loadModel(attn(), gpt2Object(), { dtype: 32 }),
      TypeError,
      /dtype must be 'f32', 'f16', 'bf16' or 'int8', got number 32/,
    );
    const model = await loadModel(attn(), gpt2Object(), { dtype: 'f32' });
    model.dispose();
  });

  test('wrong sources and options: a TypeError naming them', async () => {
    const cases = [
      [42, {}, /source must be a folder path, a URL, or \{ config, weights, tokenizer \}, got number 42/],
      ['', {}, /source must be a folder path.*got ''/],
      [{ ...gpt2Object(), weight: 1 }, {}, /source has an unknown key weight/],
      [{ ...gpt2Object(), config: '{}' }, {}, /source\.config must be the parsed config\.json/],
      [{ ...gpt2Object(), weights: undefined }, {}, /source\.weights must be/],
      [{ ...gpt2Object(), weights: 'model.safetensors' }, {}, /weights must be the bytes of a \.safetensors file/],
      [{ ...gpt2Object(), tokenizer: 'tokenizer.json' }, {}, /source\.tokenizer must be the parsed tokenizer\.json/],
      [gpt2Object(), { threads: 2 }, /unknown argument threads/],
      [gpt2Object(), { onProgress: 'yes' }, /onProgress must be a function/],
      [gpt2Object(), { signal: {} }, /signal must be an AbortSignal/],
      [gpt2Object(), { fetchOptions: 'no-cache' }, /fetchOptions must be an object/],
      [gpt2Object(), 'f32', /expected one object of named arguments/],
    ];
    for (const [source, options, message] of cases) {
      await expectRejection(loadModel(attn(), source, options), TypeError, message);
    }
  });

  test('an aborted signal: the promise rejects with its reason', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expectRejection(loadModel(attn(), folder('gpt2'), { signal: controller.signal }), Error, /^stop$/);
  });
});

describe('a model', () => {
  let g; // gpt2: learned positions, 32 of them
  let m; // mistral: a decoder with sessions
  let b; // bert: an encoder
  beforeAll(async () => {
    g = await loadModel(attn(), folder('gpt2'));
    m = await loadModel(attn(), folder('mistral-window'));
    b = await loadModel(attn(), folder('bert-mlm'));
  });
  afterAll(() => [g, m, b].forEach((x) => x?.dispose()));

  describe('forward', () => {
    test('an id outside the vocabulary: a RangeError naming it, and a session keeps its length', () => {
      const session = m.createSession({ maxLength: 20 });
      m.forward([1, 2, 3], { session, logits: 'none' });
      for (const ids of [[5, 328], [-1], Int32Array.of(1, 2, 400), [1.5]]) {
        expectError(
          () => m.forward(ids, { session }),
          RangeError,
          /^forward: ids\[\d\] = [-\d.]+ is not in the vocabulary: ids must hold integers from 0 to vocabSize − 1 = 327$/,
        );
        expect(session.length).toBe(3);
      }
      expectError(() => m.forward([], { session }), RangeError, /ids must hold at least one token id/);
      expect(session.length).toBe(3);
      // Still working, and where it was.
      const { logits } = m.forward(mistral.expected.ids.slice(3), { session });
      expect(logits.length).toBe((mistral.expected.ids.length - 3) * 328);
      session.dispose();
    });

    test('ids of the wrong type: a TypeError', () => {
      for (const ids of [new Float32Array([1]), '1 2', 7, null, [1, '2'], [BigInt(1)]]) {
        expectError(() => g.forward(ids), TypeError, /^forward: ids(\[\d\])? must be /);
      }
    });

    test('attention: true, false or { layers, heads } in range, each index once', () => {
      const ids = [1, 2];
      expectError(() => g.forward(ids, { attention: 'all' }), TypeError, /attention must be true, false or \{ layers/);
      expectError(() => g.forward(ids, { attention: [0] }), TypeError, /attention must be/);
      expectError(() => g.forward(ids, { attention: { layer: [0] } }), TypeError, /attention has an unknown key layer/);
      expectError(() => g.forward(ids, { attention: { layers: 0 } }), TypeError, /attention\.layers must be an array/);
      expectError(
        () => g.forward(ids, { attention: { layers: [2] } }),
        RangeError,
        /attention\.layers\[0\] must be an integer from 0 to 1 .*got 2/,
      );
      expectError(
        () => g.forward(ids, { attention: { heads: [0, 4] } }),
        RangeError,
        /attention\.heads\[1\] must be an integer from 0 to 3/,
      );
      expectError(
        () => g.forward(ids, { attention: { heads: [1, 1] } }),
        RangeError,
        /attention\.heads must be head indices each listed once, got 1 twice/,
      );
      expectError(
        () => g.forward(ids, { attention: { heads: [] } }),
        RangeError,
        /attention\.heads must be a non-empty array/,
      );
      expectError(
        () => g.forward(ids, { attention: { layers: ['0'] } }),
        TypeError,
        /attention\.layers\[0\] must be a layer index/,
      );
    });

    test("logits: 'all', 'last' or (extension) 'none'", () => {
      expectError(
        () => g.forward([1], { logits: 'first' }),
        RangeError,
        /logits must be 'all', 'last' or 'none', got "first"/,
      );
      expectError(() => g.forward([1], { logits: true }), TypeError, /logits must be 'all', 'last' or 'none'/);
      const none = g.forward([1, 2], { logits: 'none' });
      expect([none.logits, none.hidden.length]).toEqual([null, 64]);
    });

    test('tokenTypeIds: bert only, one per id, each a token type', () => {
      expectError(() => g.forward([1], { tokenTypeIds: [0] }), TypeError, /tokenTypeIds is for bert models/);
      expectError(
        () => b.forward([2, 3], { tokenTypeIds: [0] }),
        RangeError,
        /tokenTypeIds must have one entry per id \(2\), got length 1/,
      );
      expectError(
        () => b.forward([2, 3], { tokenTypeIds: [0, 2] }),
        RangeError,
        /tokenTypeIds\[1\] = 2 is not a token type: .* type_vocab_size − 1 = 1/,
      );
      expectError(() => b.forward([2, 3], { tokenTypeIds: 'ab' }), TypeError, /tokenTypeIds must be an Int32Array/);
    });

    test('session: one of this model, not disposed', () => {
      const other = g.createSession({ maxLength: 8 });
      expectError(
        () => m.forward([1], { session: {} }),
        TypeError,
        /session must be a session made by model\.createSession\(\), got an object/,
      );
      expectError(
        () => m.forward([1], { session: other }),
        RangeError,
        /session must be a session of this model, got a session made by another model/,
      );
      expectError(() => b.forward([1], { session: other }), RangeError, /session of this model/);
      other.dispose();
      expectError(() => g.forward([1], { session: other }), Error, /the session was disposed/);
    });

    test('appending past maxLength: a RangeError that changes nothing', () => {
      const session = m.createSession({ maxLength: 8 });
      m.forward([1, 2, 3, 4, 5, 6], { session, logits: 'none' });
      expectError(
        () => m.forward([7, 8, 9], { session }),
        RangeError,
        /ids \(3 tokens\) must fit in the session, which holds 6 of its maxLength 8 tokens \(room for 2\)/,
      );
      expect(session.length).toBe(6);
      m.forward([7, 8], { session, logits: 'none' });
      expect(session.length).toBe(8);
      session.dispose();
    });

    test('positions past maxPositions of a learned-position model: a RangeError', () => {
      const ids = Array.from({ length: 33 }, (_, i) => i);
      expectError(
        () => g.forward(ids),
        RangeError,
        /ids must be at most maxPositions = 32 tokens \(a gpt2 model learns one embedding per position\), got 33 tokens/,
      );
      expectError(() => b.forward(ids), RangeError, /maxPositions = 32/);
      expect(g.forward(ids.slice(1)).logits.length).toBe(32 * 317);
    });

    test('unknown options: a TypeError', () => {
      expectError(() => g.forward([1], { attentions: true }), TypeError, /forward: unknown argument attentions/);
      expectError(() => g.forward([1], 'last'), TypeError, /forward: expected one object of named arguments/);
    });
  });

  describe('sessions', () => {
    test('createSession: decoders only; maxLength a positive integer (gpt2: at most maxPositions); kvDtype f32, f16, bf16', () => {
      expectError(() => b.createSession(), TypeError, /createSession: a bert model is an encoder: it has no sessions/);
      expectError(() => m.createSession({ maxLength: 0 }), RangeError, /maxLength must be a positive integer, got 0/);
      expectError(() => m.createSession({ maxLength: '8' }), TypeError, /maxLength must be a positive integer/);
      expectError(() => g.createSession({ maxLength: 33 }), RangeError, /maxLength must be at most maxPositions = 32/);
      expectError(
        () => m.createSession({ kvDtype: 'int8' }),
        RangeError,
        /kvDtype must be one of 'f32', 'f16', 'bf16', got "int8"/,
      );
      expectError(() => m.createSession({ max: 8 }), TypeError, /unknown argument max/);
      for (const kvDtype of ['f32', 'f16', 'bf16']) m.createSession({ maxLength: 4, kvDtype }).dispose();
    });

    test('truncate(n): an integer from 0 to the length, else an error that changes nothing', () => {
      const session = m.createSession({ maxLength: 8 });
      m.forward([1, 2, 3], { session, logits: 'none' });
      expectError(
        () => session.truncate(4),
        RangeError,
        /session\.truncate: n must be an integer from 0 to the session's length 3, got 4/,
      );
      expectError(() => session.truncate(-1), RangeError, /got -1/);
      expectError(() => session.truncate(1.5), RangeError, /got 1\.5/);
      expectError(() => session.truncate('1'), TypeError, /got the string "1"/);
      expect(session.length).toBe(3);
      session.dispose();
      expectError(() => session.truncate(0), Error, /this session was disposed/);
    });
  });

  describe('generate', () => {
    test('bert does not generate: a TypeError', async () => {
      await expectRejection(
        b.generate([2, 3]),
        TypeError,
        /generate: a bert model is an encoder: it does not generate/,
      );
    });

    test('options checked before anything runs', async () => {
      const cases = [
        [{ maxNewTokens: -1 }, RangeError, /maxNewTokens must be an integer ≥ 0, got -1/],
        [{ maxNewTokens: '4' }, TypeError, /maxNewTokens must be an integer ≥ 0/],
        [{ temperature: -0.5 }, RangeError, /temperature must be a finite number ≥ 0, got -0\.5/],
        [{ temperature: Infinity }, RangeError, /temperature/],
        [{ topK: 2.5 }, RangeError, /topK must be an integer ≥ 0/],
        [{ topP: 0 }, RangeError, /topP must be a number in \(0, 1\], got 0/],
        [{ topP: 1.5 }, RangeError, /topP/],
        [{ seed: 0.5 }, RangeError, /seed must be an integer, got 0\.5/],
        [{ stopAtEos: 'yes' }, TypeError, /stopAtEos must be a boolean/],
        [{ onToken: true }, TypeError, /onToken must be a function/],
        [{ session: {} }, TypeError, /session must be a session made by model\.createSession/],
        [{ attention: { layers: [5] } }, RangeError, /attention\.layers\[0\]/],
        [{ maxTokens: 4 }, TypeError, /generate: unknown argument maxTokens/],
      ];
      for (const [options, Class, message] of cases) {
        await expectRejection(m.generate([1, 2], options), Class, message);
      }
      await expectRejection(m.generate([1, 400]), RangeError, /prompt\[1\] = 400 is not in the vocabulary/);
      await expectRejection(m.generate([]), RangeError, /prompt must hold at least one token/);
      await expectRejection(m.generate(5), TypeError, /prompt must be an Int32Array/);
    });

    test("createSampler (extension): generate's sampling options, checked alike, named for the call", () => {
      const cases = [
        [{ temperature: -0.5 }, RangeError, /^createSampler: temperature must be a finite number ≥ 0, got -0\.5$/],
        [{ temperature: '1' }, TypeError, /^createSampler: temperature must be a finite number ≥ 0, got /],
        [{ topK: 2.5 }, RangeError, /^createSampler: topK must be an integer ≥ 0, got 2\.5$/],
        [{ topP: 0 }, RangeError, /^createSampler: topP must be a number in \(0, 1\], got 0$/],
        [{ seed: 0.5 }, RangeError, /^createSampler: seed must be an integer, got 0\.5$/],
        [
          { maxNewTokens: 4 },
          TypeError,
          /^createSampler: unknown argument maxNewTokens \(known: temperature, topK, topP, seed\)$/,
        ],
        ['greedy', TypeError, /^createSampler: expected one object of named arguments, got /],
      ];
      for (const [options, Class, message] of cases) expectError(() => m.createSampler(options), Class, message);
      const next = m.createSampler();
      expectError(
        () => next('logits'),
        TypeError,
        /logits must be a Float32Array, a Float16Array, a Float64Array or an array of numbers/,
      );
      expect(next(Float32Array.of(0, 2, 1))).toBe(1); // temperature 0: greedy
    });

    test('a session without room for the prompt and maxNewTokens: a RangeError that changes nothing', async () => {
      const session = m.createSession({ maxLength: 10 });
      m.forward([1, 2], { session, logits: 'none' });
      await expectRejection(
        m.generate([3, 4, 5], { session, maxNewTokens: 6 }),
        RangeError,
        /the prompt \(3 tokens\) and maxNewTokens \(6\) must fit in the session, which holds 2 of its maxLength 10 tokens \(room for 8\)/,
      );
      expect(session.length).toBe(2);
      const r = await m.generate([3, 4, 5], { session, maxNewTokens: 5, stopAtEos: false });
      expect([r.ids.length, session.length]).toEqual([5, 10]);
      session.dispose();
    });

    test('gpt2: the prompt and maxNewTokens past maxPositions is a RangeError', async () => {
      const prompt = Array.from({ length: 30 }, (_, i) => i);
      await expectRejection(
        g.generate(prompt, { maxNewTokens: 4 }),
        RangeError,
        /need 33 positions, past maxPositions = 32/,
      );
      const r = await g.generate(prompt, { maxNewTokens: 3, stopAtEos: false });
      expect(r.ids.length).toBe(3);
    });

    test('an onToken that throws rejects generate with its error; the temporary session is freed', async () => {
      const boom = new TypeError('boom');
      await expectRejection(
        m.generate([1, 2, 3], {
          onToken: () => {
            throw boom;
          },
        }),
        TypeError,
        /^boom$/,
      );
    });

    test('a session changed while generate runs: an Error', async () => {
      const session = m.createSession({ maxLength: 20 });
      const pending = m.generate([1, 2, 3], {
        session,
        maxNewTokens: 4,
        onToken: () => {
          setImmediate(() => session.truncate(1));
        },
      });
      await expect(pending).rejects.toThrow(/generate: the session changed while generate was running/);
      session.dispose();
    });

    test('a model disposed while generate runs: it rejects with an Error saying so', async () => {
      const model = await loadModel(attn(), folder('mistral-window'));
      const pending = model.generate([1, 2, 3], { onToken: () => model.dispose() });
      await expect(pending).rejects.toThrow(/generate: this model was disposed/);
    });
  });

  test('encode/decode: the tokenizer’s own argument errors', () => {
    expectError(() => m.encode(42), TypeError, /encode takes a string/);
    expectError(() => m.decode('1 2'), TypeError, /decode takes token ids/);
  });
});

describe('the engine disposed', () => {
  test('disposes its models: every later call throws an Error saying the engine was disposed', async () => {
    const own = await createAttention();
    const model = await loadModel(own, folder('gpt2'));
    const session = model.createSession({ maxLength: 8 });
    own.dispose();
    expect(model.disposed).toBe(true);
    expect(() => model.forward([1])).toThrow(/this model's engine was disposed/);
    expect(() => model.createSession()).toThrow(/engine was disposed/);
    expect(() => session.length).toThrow(/engine was disposed/);
    await expect(model.generate([1])).rejects.toThrow(/engine was disposed/);
    model.dispose(); // nothing left to free: does nothing
  });
});
