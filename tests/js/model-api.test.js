'use strict';
// loadModel on the six fixture checkpoints (tests/fixtures/models/README.md), through the package's
// CommonJS entry: the contract's "Models" section, number by number against the float64 references —
// logits, hidden states and attention within 1e-4 + 1e-4·|ref|, attention by layer and head, a prompt
// fed whole, in chunks or token by token, greedy tokens, end of sequence, onToken, seeded sampling,
// sessions, the three kinds of source, dispose and the heap.
const path = require('path');
const { loadModel, readSafetensors } = require('wasm-attention');
const { useEngines } = require('./engines');
const { fixtureNames, loadFixture, modelModules, FIXTURES } = require('./model-modules');
const { offTolerance, rows, attentionSlice } = require('./model-api-cases');

const engines = useEngines([1, 2]);
const { CONFIG_KEYS } = modelModules(); // the contract's keys in order (model-config.test.js checks the list)

const eosIds = (config) => [config.eos_token_id ?? []].flat();
/** expected.greedy up to and including its first end-of-sequence token: what generate returns by default. */
function untilEos(greedy, config) {
  const stop = greedy.findIndex((id) => eosIds(config).includes(id));
  return stop < 0 ? greedy : greedy.slice(0, stop + 1);
}

test('each fixture says what model.config its config.json gives (expected.json, from the fixture script)', () => {
  expect(fixtureNames().length).toBeGreaterThanOrEqual(6);
  for (const name of fixtureNames())
    expect([name, Object.keys(loadFixture(name).expected.modelConfig)]).toEqual([name, CONFIG_KEYS]);
});

describe.each(fixtureNames())('%s', (name) => {
  const f = loadFixture(name);
  const dir = path.join(FIXTURES, name);
  const { ids, tokenTypeIds } = f.expected;
  const T = ids.length;
  const { causal, numLayers, hiddenSize, numHeads, vocabSize, maxPositions } = f.expected.modelConfig;
  const types = tokenTypeIds ? { tokenTypeIds } : {};
  const models = {};
  beforeAll(async () => {
    for (const threads of [1, 2]) models[threads] = await loadModel(engines[threads], dir);
  });
  afterAll(() => Object.values(models).forEach((m) => m.dispose()));

  test('config: the contract’s nine keys, normalised from config.json', () => {
    expect(models[1].config).toEqual(f.expected.modelConfig);
    expect(Object.keys(models[1].config)).toEqual(CONFIG_KEYS);
  });

  describe.each([1, 2])('threads: %i', (threads) => {
    test('forward: logits, hidden and every layer’s attention within the tolerance of the float64 reference', () => {
      const out = models[threads].forward(ids, { attention: true, ...types });
      expect(out.logits.length).toBe(T * vocabSize);
      expect(offTolerance(out.logits, f.reference.logits.data)).toEqual([]);
      expect(offTolerance(out.hidden, f.reference.hidden.data)).toEqual([]);
      expect(out.attention.length).toBe(numLayers);
      for (let l = 0; l < numLayers; l++) {
        expect([l, offTolerance(out.attention[l], f.reference[`attention.${l}`].data)]).toEqual([l, []]);
      }
    });

    test('attention { layers, heads }: unlisted layers null, listed heads in the order given; no logit changes', () => {
      const plain = models[threads].forward(ids, types);
      expect(plain.attention).toBeNull();
      const heads = [numHeads - 1, 0];
      const out = models[threads].forward(Int32Array.from(ids), {
        attention: { layers: [numLayers - 1], heads },
        ...types,
      });
      expect(out.attention.slice(0, -1)).toEqual(Array(numLayers - 1).fill(null));
      const want = attentionSlice(f.reference[`attention.${numLayers - 1}`].data, T, heads, 0, T);
      expect(offTolerance(out.attention[numLayers - 1], want)).toEqual([]);
      expect(Buffer.from(out.logits.buffer).equals(Buffer.from(plain.logits.buffer))).toBe(true);
      expect(Buffer.from(out.hidden.buffer).equals(Buffer.from(plain.hidden.buffer))).toBe(true);
      // Either list left out means all of them.
      const allHeads = models[threads].forward(ids, { attention: { layers: [0] }, ...types }).attention;
      expect(offTolerance(allHeads[0], f.reference['attention.0'].data)).toEqual([]);
    });

    test("logits: 'last' is the last row of 'all'", () => {
      const { logits, hidden } = models[threads].forward(ids, { logits: 'last', ...types });
      expect(logits.length).toBe(vocabSize);
      expect(offTolerance(logits, rows(f.reference.logits.data, vocabSize, T - 1, T))).toEqual([]);
      expect(hidden.length).toBe(T * hiddenSize);
    });

    test('the same logits on 1 and 2 threads, bit for bit', () => {
      const a = models[1].forward(ids, { attention: true, ...types });
      const b = models[threads].forward(ids, { attention: true, ...types });
      expect(Buffer.from(b.logits.buffer).equals(Buffer.from(a.logits.buffer))).toBe(true);
      for (let l = 0; l < numLayers; l++) {
        expect(Buffer.from(b.attention[l].buffer).equals(Buffer.from(a.attention[l].buffer))).toBe(true);
      }
    });
  });

  if (!causal) {
    test('bert: no sessions, no generate; the masked-LM logits of a sentence pair with token types', async () => {
      const model = models[1];
      expect(() => model.createSession()).toThrow(TypeError);
      await expect(model.generate(ids)).rejects.toThrow(TypeError);
      // Token types matter: all zeros gives other logits than the pair's 0/1.
      const zeros = model.forward(ids).logits;
      expect(offTolerance(zeros, f.reference.logits.data)).not.toEqual([]);
      expect(tokenTypeIds).toContain(1);
    });
    return;
  }

  const greedy = f.expected.greedy;
  const model = () => models[1];

  describe('sessions', () => {
    test.each([
      ['whole', [T]],
      ['in chunks', [3, T - 7, 4]],
      ['token by token', Array(T).fill(1)],
    ])('a prompt fed %s gives the whole forward’s logits and attention', (_, sizes) => {
      const session = model().createSession({ maxLength: T + 2 });
      expect([session.length, session.maxLength]).toEqual([0, T + 2]);
      let at = 0;
      for (const n of sizes) {
        const out = model().forward(ids.slice(at, at + n), { session, attention: true });
        expect(session.length).toBe(at + n);
        expect([at, offTolerance(out.logits, rows(f.reference.logits.data, vocabSize, at, at + n))]).toEqual([at, []]);
        expect([at, offTolerance(out.hidden, rows(f.reference.hidden.data, hiddenSize, at, at + n))]).toEqual([at, []]);
        for (let l = 0; l < numLayers; l++) {
          const heads = Array.from({ length: numHeads }, (_, h) => h);
          const want = attentionSlice(f.reference[`attention.${l}`].data, T, heads, at, at + n);
          expect([at, l, offTolerance(out.attention[l], want)]).toEqual([at, l, []]);
        }
        at += n;
      }
      session.dispose();
    });

    test('truncate(n) rewinds: the tokens after n are fed again with the same logits', () => {
      const session = model().createSession();
      expect(session.maxLength).toBe(maxPositions); // default: config.maxPositions
      model().forward(ids, { session, logits: 'none' });
      session.truncate(5);
      expect(session.length).toBe(5);
      const { logits } = model().forward(ids.slice(5), { session });
      expect(offTolerance(logits, rows(f.reference.logits.data, vocabSize, 5, T))).toEqual([]);
      session.truncate(0);
      expect(session.length).toBe(0);
      session.dispose();
      expect(session.disposed).toBe(true);
      expect(() => session.length).toThrow(/disposed/);
      session.dispose(); // a second dispose does nothing
    });
  });

  describe('generate', () => {
    test('greedy: the reference’s greedy tokens (stopAtEos false), text as decode gives it', async () => {
      const { ids: got, text } = await model().generate(ids, { maxNewTokens: greedy.length, stopAtEos: false });
      expect(Array.from(got)).toEqual(greedy);
      expect(got).toBeInstanceOf(Int32Array);
      expect(text).toBe(model().decode(greedy));
    });

    test('text prompt: encoded with special tokens; stops at end of sequence, keeping it', async () => {
      const { ids: got } = await model().generate(f.expected.prompt, { maxNewTokens: greedy.length });
      expect(Array.from(model().encode(f.expected.prompt))).toEqual(ids);
      expect(Array.from(got)).toEqual(untilEos(greedy, f.config));
    });

    test('onToken: each token with its piece of text and its logits; false stops after that token', async () => {
      const seen = [];
      const r = await model().generate(ids, {
        maxNewTokens: greedy.length,
        stopAtEos: false,
        onToken: (t) => {
          seen.push(t);
        },
      });
      expect(seen.map((t) => t.id)).toEqual(greedy);
      expect(seen.map((t) => t.text).join('')).toBe(r.text);
      expect(seen[0].logits.length).toBe(vocabSize);
      expect(offTolerance(seen[0].logits, rows(f.reference.logits.data, vocabSize, T - 1, T))).toEqual([]);
      const stopped = await model().generate(ids, {
        maxNewTokens: greedy.length,
        onToken: ({ id }) => id !== greedy[1],
        stopAtEos: false,
      });
      expect(Array.from(stopped.ids)).toEqual(greedy.slice(0, 2));
      const asynchronous = await model().generate(ids, { maxNewTokens: greedy.length, onToken: async () => false });
      expect(Array.from(asynchronous.ids)).toEqual(greedy.slice(0, 1));
    });

    test('attention (extension): onToken gets, per listed layer, the rows [heads, keys] of the position that chose the token', async () => {
      const attention = [];
      await model().generate(ids, {
        maxNewTokens: 2,
        stopAtEos: false,
        attention: { layers: [0], heads: [1, 0] },
        onToken: (t) => {
          attention.push(t.attention);
        },
      });
      expect(attention.map((a) => a.length)).toEqual([numLayers, numLayers]);
      // The first token: the prompt's last row, over its T keys.
      expect(
        offTolerance(attention[0][0], attentionSlice(f.reference['attention.0'].data, T, [1, 0], T - 1, T)),
      ).toEqual([]);
      expect(attention[1][0].length).toBe(2 * (T + 1)); // then one query over T + 1 keys
      expect(attention[1][1]).toBeNull();
    });

    test('maxNewTokens: at most that many; 0 gives none', async () => {
      const three = await model().generate(ids, { maxNewTokens: 3, stopAtEos: false });
      expect(Array.from(three.ids)).toEqual(greedy.slice(0, 3));
      const none = await model().generate(ids, { maxNewTokens: 0 });
      expect([none.ids.length, none.text]).toEqual([0, '']);
    });

    test('seeded sampling is reproducible, and another seed draws other tokens', async () => {
      const sample = (seed) =>
        model()
          .generate(ids, { maxNewTokens: 8, temperature: 1.5, seed, stopAtEos: false })
          .then((r) => Array.from(r.ids));
      const [a, again, b] = [await sample(7), await sample(7), await sample(8)];
      expect(again).toEqual(a);
      expect(b).not.toEqual(a);
      // top-k 1 and a tiny top-p leave only the best token: greedy.
      const k1 = await model().generate(ids, { maxNewTokens: 4, temperature: 2, topK: 1, stopAtEos: false });
      const p0 = await model().generate(ids, { maxNewTokens: 4, temperature: 2, topP: 1e-9, stopAtEos: false });
      expect([Array.from(k1.ids), Array.from(p0.ids)]).toEqual([greedy.slice(0, 4), greedy.slice(0, 4)]);
    });

    test("createSampler (extension) draws generate's tokens from generate's logits, with the same options", async () => {
      const options = { temperature: 1.3, topK: 5, topP: 0.9, seed: 11 };
      const rows = [];
      const made = await model().generate(ids, {
        ...options,
        maxNewTokens: 8,
        stopAtEos: false,
        onToken: ({ logits }) => void rows.push(logits),
      });
      const next = model().createSampler(options);
      expect(rows.map((row) => next(row))).toEqual(Array.from(made.ids));
    });

    test('with a session: it ends holding the prompt and every new token; continuing from it', async () => {
      const session = model().createSession({ maxLength: T + greedy.length });
      const first = await model().generate(ids, { session, maxNewTokens: 3, stopAtEos: false });
      expect(Array.from(first.ids)).toEqual(greedy.slice(0, 3));
      expect(session.length).toBe(T + 3);
      // The same sequence again, from the prompt's end: the next three greedy tokens.
      session.truncate(T);
      const next = await model().generate(first.ids, { session, maxNewTokens: 3, stopAtEos: false });
      expect(Array.from(next.ids)).toEqual(greedy.slice(3, 6));
      expect(session.length).toBe(T + 6);
      session.dispose();
    });

    test('between tokens it yields to the event loop (a macrotask, not only microtasks)', async () => {
      let turns = 0;
      const seen = [];
      await model().generate(ids, {
        maxNewTokens: 4,
        stopAtEos: false,
        onToken: () => {
          seen.push(turns);
          setImmediate(() => turns++);
        },
      });
      expect(seen).toEqual([0, 1, 2, 3]);
    });
  });

  if (name === 'mistral-window') {
    test('end of sequence: the greedy continuation meets </s> (id 2) and stops there, keeping it', async () => {
      expect(greedy).toContain(2);
      const r = await model().generate(ids, { maxNewTokens: greedy.length });
      expect(Array.from(r.ids)).toEqual(greedy.slice(0, greedy.indexOf(2) + 1));
      expect(r.text).toBe(model().decode(r.ids)); // </s> skipped in the text
    });
  }
});

describe('sources', () => {
  const name = 'llama-gqa-llama3-sharded';
  const f = loadFixture(name);
  const shards = Object.keys(f.files).sort();

  async function logitsOf(source) {
    const model = await loadModel(engines[1], source);
    try {
      return model.forward(f.expected.ids).logits;
    } finally {
      model.dispose();
    }
  }

  test('{ config, weights, tokenizer }: shard bytes, readSafetensors results; the folder’s numbers exactly', async () => {
    const fromFolder = await logitsOf(path.join(FIXTURES, name));
    const variants = [
      shards.map((s) => f.files[s]),
      shards.map((s) => readSafetensors(f.files[s])),
      shards.map((s) => new Uint8Array(f.files[s]).buffer), // ArrayBuffers
    ];
    for (const weights of variants) {
      const got = await logitsOf({ config: f.config, weights, tokenizer: f.tokenizer });
      expect(Buffer.from(got.buffer).equals(Buffer.from(fromFolder.buffer))).toBe(true);
    }
    expect(offTolerance(fromFolder, f.reference.logits.data)).toEqual([]);
  });

  test('one file: its bytes or its readSafetensors result', async () => {
    const g = loadFixture('gpt2');
    for (const weights of [g.files['model.safetensors'], readSafetensors(g.files['model.safetensors'])]) {
      const model = await loadModel(engines[1], { config: g.config, weights });
      expect(offTolerance(model.forward(g.expected.ids).logits, g.reference.logits.data)).toEqual([]);
      model.dispose();
    }
  });

  test('without a tokenizer: encode/decode throw a TypeError, generate takes ids and its text is null', async () => {
    const g = loadFixture('gpt2');
    const model = await loadModel(engines[1], { config: g.config, weights: g.files['model.safetensors'] });
    expect(() => model.encode('hello')).toThrow(TypeError);
    expect(() => model.decode([1])).toThrow(/no tokenizer/);
    await expect(model.generate('hello')).rejects.toThrow(TypeError);
    const texts = [];
    const r = await model.generate(g.expected.ids, {
      maxNewTokens: 2,
      stopAtEos: false,
      onToken: (t) => texts.push(t.text),
    });
    expect([Array.from(r.ids), r.text, texts]).toEqual([g.expected.greedy.slice(0, 2), null, [null, null]]);
    model.dispose();
  });

  test('a folder as a file: URL', async () => {
    const { pathToFileURL } = require('url');
    const got = await logitsOf(pathToFileURL(path.join(FIXTURES, name)));
    expect(offTolerance(got, f.reference.logits.data)).toEqual([]);
  });

  test('onProgress (extension): each file, its bytes as they are read', async () => {
    const seen = [];
    const model = await loadModel(engines[1], path.join(FIXTURES, name), { onProgress: (p) => seen.push(p) });
    model.dispose();
    const files = seen.map((p) => p.file);
    expect(files).toEqual(['config.json', 'tokenizer.json', 'model.safetensors.index.json', ...shards]);
    for (const p of seen) expect(p.loaded).toBe(p.total);
  });
});

describe('dispose and the heap', () => {
  test('loading, running and disposing a model leaves the heap where it was', async () => {
    const attn = engines[1];
    const before = attn.memoryStats().heapInUse;
    for (const name of fixtureNames()) {
      const f = loadFixture(name);
      const model = await loadModel(attn, path.join(FIXTURES, name));
      if (model.config.causal) {
        const session = model.createSession({ maxLength: 30 });
        model.forward(f.expected.ids, { session, attention: true });
        await model.generate(f.expected.ids, { maxNewTokens: 3 });
        // A session left undisposed is freed with its model.
      } else {
        model.forward(f.expected.ids, { attention: true, tokenTypeIds: f.expected.tokenTypeIds });
      }
      model.dispose();
      expect([name, attn.memoryStats().heapInUse]).toEqual([name, before]);
    }
  });

  test('after dispose every call throws an Error saying so; a second dispose does nothing', async () => {
    const model = await loadModel(engines[1], path.join(FIXTURES, 'gpt2'));
    const session = model.createSession();
    model.dispose();
    expect(model.disposed).toBe(true);
    for (const call of [
      () => model.forward([1]),
      () => model.createSession(),
      () => model.encode('a'),
      () => model.decode([1]),
      () => session.length,
      () => session.truncate(0),
    ]) {
      expect(call).toThrow(/this model was disposed/);
    }
    await expect(model.generate([1])).rejects.toThrow(/this model was disposed/);
    expect(() => model.createSampler()).toThrow(/^createSampler: this model was disposed/);
    expect(session.disposed).toBe(true);
    model.dispose();
  });
});
