// Runs the poem model (web/model, ES modules) under Node for tests/js/poem-model.test.js, which runs
// under Jest's CommonJS: `node tests/js/poem-model-run.mjs` prints one JSON object of what the
// model computed, section by section ({ error } in a section that threw), for the test to assert on.
import fs from 'node:fs';
import { createAttention, readSafetensors } from '../../dist/node.mjs';
import { createPoemModel, generate, sampleToken, topTokens } from '../../web/model/index.js';

const ROOT = new URL('../../', import.meta.url);
const fixture = JSON.parse(fs.readFileSync(new URL('tests/fixtures/models/tang-poems.json', ROOT), 'utf8'));
const folder = new URL(fixture.model, ROOT);
const json = (name) => JSON.parse(fs.readFileSync(new URL(name, folder), 'utf8'));
const file = {
  tensors: readSafetensors(fs.readFileSync(new URL('model.safetensors', folder))).tensors,
  config: json('config.json'),
  tokenizer: json('tokenizer.json'),
};

const attn = await createAttention({ threads: 1 });
const baseline = attn.memoryStats().heapInUse;
const model = createPoemModel(attn, file);
const report = {};

function section(name, fn) {
  try {
    report[name] = fn();
  } catch (e) {
    report[name] = { error: `${e.name}: ${e.message}\n${e.stack}` };
  }
}

/** { name, message } of what fn throws, or null. */
function thrown(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    return { name: e.constructor.name, message: e.message };
  }
}

const rows = (flat, width) =>
  Array.from({ length: flat.length / width }, (_, i) => Array.from(flat.subarray(i * width, (i + 1) * width)));

section('config', () => ({ config: model.config, vocab: model.vocab.slice(0, 4), vocabLength: model.vocab.length }));

// Logits of each fixture case fed whole (every position) and one token at a time.
section('forward', () =>
  fixture.cases.map((c) => {
    const whole = model.createSession();
    const all = whole.feed(c.ids, { allLogits: true });
    const wholeRows = rows(all.allLogits, model.config.vocabSize).slice(c.logitsFrom);
    const lastEqualsAll = Array.from(all.logits).every(
      (v, i) => v === all.allLogits[(c.ids.length - 1) * model.config.vocabSize + i],
    );
    whole.dispose();
    const stepped = model.createSession();
    const stepRows = [];
    c.ids.forEach((id, i) => {
      const { logits } = stepped.feed([id]);
      if (i >= c.logitsFrom) stepRows.push(Array.from(logits));
    });
    stepped.dispose();
    return { whole: wholeRows, steps: stepRows, lastEqualsAll };
  }),
);

// Greedy continuations as PyTorch made them (through poem starts), and the default stop.
section('greedy', () =>
  fixture.cases.map((c) => {
    const session = model.createSession();
    session.feed(c.ids);
    const made = [...generate(session, { maxNew: c.greedy.length, temperature: 0, stopAtPoemStart: false })];
    const ids = made.map((s) => s.id);
    const text = made.map((s) => s.text).join('');
    const positions = made.map((s) => s.position);
    const rowShapes = made[0].attention.map((w) => w.length);
    session.truncate(c.ids.length);
    const gen = generate(session, { temperature: 0 });
    const untilStart = [];
    let step = gen.next();
    while (!step.done) {
      untilStart.push(step.value.id);
      step = gen.next();
    }
    const stopped = { ...step.value, length: session.length };
    session.dispose();
    return { ids, text, positions, rowShapes, untilStart, stopped };
  }),
);

// The maps of a session fed in two chunks and generated on, against feed's own rows.
section('maps', () => {
  const { ids } = fixture.cases[0];
  const session = model.createSession();
  const first = session.feed(ids.slice(0, 3));
  const second = session.feed(ids.slice(3));
  const made = [...generate(session, { maxNew: 5, temperature: 0.8, topK: 20, seed: 7 })];
  const n = session.length;
  const mapsOf = (s) => {
    const out = [];
    for (let l = 0; l < model.config.nLayers; l++) {
      for (let h = 0; h < model.config.nHeads; h++) out.push({ layer: l, head: h, map: Array.from(s.attention(l, h)) });
    }
    return out;
  };
  const whole = model.createSession();
  whole.feed(session.tokens);
  const wholeMaps = mapsOf(whole);
  whole.dispose();
  const out = {
    n,
    tokens: Array.from(session.tokens),
    maps: mapsOf(session),
    wholeMaps,
    feedShapes: [first, second].map((r) => r.attention.map((w) => w.length)),
    second: second.attention.map((w) => Array.from(w)),
    secondFrom: 3,
    secondCount: ids.length - 3,
    lastStep: made.at(-1).attention.map((w) => Array.from(w)),
  };
  session.dispose();
  return out;
});

// The worked steps of some heads, with the weights the cached path computed for the same rows.
section('headSteps', () => {
  const { ids } = fixture.cases[1];
  const session = model.createSession();
  session.feed(ids);
  [...generate(session, { maxNew: 4 })];
  const n = session.length;
  const picks = [
    [0, 0, 0],
    [0, 1, 3],
    [1, 2, n - 1],
    [2, 3, 5],
    [3, 1, n - 2],
    [3, 3, n - 1],
  ];
  const out = picks.map(([layer, head, query]) => {
    const s = session.headSteps(layer, head, query);
    const map = session.attention(layer, head);
    const plain = Object.fromEntries(
      Object.entries(s).map(([k, v]) => [
        k,
        ArrayBuffer.isView(v) ? Array.from(v, (x) => (Number.isFinite(x) ? x : String(x))) : v,
      ]),
    );
    return { layer, head, query, n, steps: plain, cachedRow: Array.from(map.subarray(query * n, (query + 1) * n)) };
  });
  session.dispose();
  return out;
});

section('sampling', () => {
  const { logits } = (() => {
    const s = model.createSession();
    const r = s.feed(fixture.cases[0].ids);
    s.dispose();
    return r;
  })();
  const top = model.topTokens(logits, 5);
  const hot = model.topTokens(logits, 5, 0.5);
  const all = topTokens(logits, logits.length);
  const argmax = sampleToken(logits);
  const seq = (seed) => {
    let k = seed;
    return () => ((k = (k * 16807) % 2147483647) - 1) / 2147483646;
  };
  const stream = seq(1);
  const draws = Array.from({ length: 300 }, () => sampleToken(logits, { temperature: 1, topK: 3, random: stream }));
  const firstOfTop = sampleToken(logits, { temperature: 1, topK: 5, random: () => 0 });
  const lastOfTop3 = sampleToken(logits, { temperature: 1, topK: 3, random: () => 0.999999999 });
  const seeded = (seed) => {
    const s = model.createSession();
    s.feed(fixture.cases[2].ids);
    const ids = [...generate(s, { maxNew: 12, temperature: 1.2, seed, stopAtPoemStart: false })].map((t) => t.id);
    s.dispose();
    return ids;
  };
  return {
    logits: Array.from(logits),
    top,
    hot,
    sumAll: all.reduce((a, t) => a + t.prob, 0),
    allTextNull: all.every((t) => t.text === null),
    argmax,
    draws,
    firstOfTop,
    lastOfTop3,
    seededA: seeded(3),
    seededB: seeded(3),
    seededC: seeded(4),
    errors: {
      k0: thrown(() => topTokens(logits, 0)),
      t0: thrown(() => topTokens(logits, 3, 0)),
      negTemperature: thrown(() => sampleToken(logits, { temperature: -1 })),
      badTopK: thrown(() => sampleToken(logits, { temperature: 1, topK: 1.5 })),
      badRandom: thrown(() => sampleToken(logits, { temperature: 1, random: () => 1 })),
      notLogits: thrown(() => sampleToken('x')),
    },
  };
});

section('vocab', () => ({
  encoded: Array.from(model.encode(`${fixture.cases[0].prompt}\n`)),
  astral: thrown(() => model.encode('月😀光x月x')),
  notString: thrown(() => model.encode(5)),
  markerText: thrown(() => model.encode('<s>')),
  decoded: model.decode([...fixture.cases[0].ids, 1, 0]),
  decodedMarker: model.decode(fixture.cases[0].ids, { poemStart: '§' }),
  badDecode: thrown(() => model.decode([model.config.vocabSize])),
  tokenTexts: [0, 1, 2].map((id) => model.tokenText(id)),
}));

// Errors leave the session usable and as it was.
section('errors', () => {
  const { ids } = fixture.cases[0];
  const fresh = model.createSession();
  const expected = Array.from(fresh.feed(ids).logits);
  fresh.dispose();
  const s = model.createSession({ maxLength: ids.length + 2 });
  s.feed(ids.slice(0, 4));
  const tooLong = thrown(() => s.feed(ids.slice(4).concat([5, 6, 7])));
  const lengthAfterTooLong = s.length;
  const badId = thrown(() => s.feed([3, -1]));
  const fraction = thrown(() => s.feed([2.5]));
  const empty = thrown(() => s.feed([]));
  const notArray = thrown(() => s.feed(7));
  const lengthAfterBad = s.length;
  const logitsAfter = Array.from(s.feed(ids.slice(4)).logits);
  s.feed([1, 2]);
  const full = thrown(() => s.feed([3]));
  const generatedWhenFull = [...generate(s, { maxNew: 3 })].length;
  const stoppedWhenFull = generate(s, { maxNew: 3 }).next();
  const badLayer = thrown(() => s.attention(model.config.nLayers, 0));
  const badHead = thrown(() => s.headSteps(0, -1, 0));
  const badQuery = thrown(() => s.headSteps(0, 0, s.length));
  const badTruncate = thrown(() => s.truncate(s.length + 1));
  s.truncate(ids.length);
  const logitsAfterTruncate = Array.from(s.logits);
  const badMaxLength = thrown(() => model.createSession({ maxLength: 0 }));
  const empty2 = model.createSession();
  const generateEmpty = thrown(() => generate(empty2, {}));
  const generateBadTemperature = (() => {
    empty2.feed([0]);
    return thrown(() => generate(empty2, { temperature: -1 }));
  })();
  empty2.dispose();
  s.dispose();
  return {
    expected,
    tooLong,
    lengthAfterTooLong,
    badId,
    fraction,
    empty,
    notArray,
    lengthAfterBad,
    logitsAfter,
    full,
    generatedWhenFull,
    stoppedWhenFull,
    badLayer,
    badHead,
    badQuery,
    badTruncate,
    logitsAfterTruncate,
    badMaxLength,
    generateEmpty,
    generateBadTemperature,
    heapBeforeCreates: attn.memoryStats().heapInUse,
    badEngine: thrown(() => createPoemModel({}, file)),
    noConfig: thrown(() => createPoemModel(attn, { tensors: file.tensors, tokenizer: file.tokenizer })),
    missingTensor: thrown(() => {
      const tensors = { ...file.tensors };
      delete tensors['model.layers.2.mlp.up_proj.weight'];
      createPoemModel(attn, { ...file, tensors });
    }),
    wrongConfig: thrown(() => createPoemModel(attn, { ...file, config: { ...file.config, num_hidden_layers: 5 } })),
    heapAfterFailedCreates: attn.memoryStats().heapInUse,
  };
});

section('dispose', () => {
  const inUse = attn.memoryStats().heapInUse;
  const live = model.createSession();
  live.feed(fixture.cases[0].ids);
  const withSession = attn.memoryStats().heapInUse;
  const other = model.createSession({ maxLength: 32 });
  other.dispose();
  other.dispose();
  const afterOne = attn.memoryStats().heapInUse;
  model.dispose();
  model.dispose();
  return {
    baseline,
    inUse,
    withSession,
    afterOne,
    afterModel: attn.memoryStats().heapInUse,
    sessionDisposed: live.disposed,
    modelDisposed: model.disposed,
    feedAfter: thrown(() => live.feed([1])),
    attentionAfter: thrown(() => other.attention(0, 0)),
    createAfter: thrown(() => model.createSession()),
  };
});

attn.dispose();
process.stdout.write(JSON.stringify(report));
