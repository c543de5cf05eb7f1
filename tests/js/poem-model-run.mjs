// Runs the poem model (web/poem/model over the package's loadModel, ES modules) under Node for
// tests/js/poem-model.test.js, which runs under Jest's CommonJS: `node tests/js/poem-model-run.mjs`
// prints one JSON object of what the model computed, section by section ({ error } in a section that
// threw), for the test to assert on.
import fs from 'node:fs';
import * as pkg from '../../dist/node.mjs';
import { openPoemModel, generate, topTokens } from '../../web/poem/model/index.js';

const { createAttention } = pkg;
const ROOT = new URL('../../', import.meta.url);
const fixture = JSON.parse(fs.readFileSync(new URL('tests/fixtures/models/tang-poems.json', ROOT), 'utf8'));
const folder = new URL(fixture.model, ROOT);
const json = (name) => JSON.parse(fs.readFileSync(new URL(name, folder), 'utf8'));
const files = {
  config: json('config.json'),
  tokenizer: json('tokenizer.json'),
  weights: new Uint8Array(fs.readFileSync(new URL('model.safetensors', folder))),
};

const attn = await createAttention({ threads: 1 });
const heap = () => attn.memoryStats().heapInUse;
const baseline = heap();
const model = await openPoemModel(pkg, attn, files);
const c = model.config;
const report = {};

async function section(name, fn) {
  try {
    report[name] = await fn();
  } catch (e) {
    report[name] = { error: `${e.name}: ${e.message}\n${e.stack}` };
  }
}

/** { name, message } of what fn throws, or null. */
function thrownSync(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    return { name: e.constructor.name, message: e.message };
  }
}

/** { name, message } of what fn throws (or its promise rejects with), or null. */
async function thrown(fn) {
  try {
    await fn();
    return null;
  } catch (e) {
    return { name: e.constructor.name, message: e.message };
  }
}

const rows = (flat, width) =>
  Array.from({ length: flat.length / width }, (_, i) => Array.from(flat.subarray(i * width, (i + 1) * width)));

/**
 * The n × n map of every layer and head from what feed returned, chunk after chunk (each chunk's
 * attention per layer is [numHeads, count, keys]); row i holds query i over keys 0 … n − 1.
 */
function mapsOf(feeds, n) {
  const maps = [];
  for (let l = 0; l < c.numLayers; l++) {
    for (let h = 0; h < c.numHeads; h++) {
      const map = new Float32Array(n * n);
      let first = 0;
      for (const { count, attention } of feeds) {
        const keys = first + count;
        for (let t = 0; t < count; t++) {
          const from = (h * count + t) * keys;
          map.set(attention[l].subarray(from, from + keys), (first + t) * n);
        }
        first += count;
      }
      maps.push({ layer: l, head: h, map: Array.from(map) });
    }
  }
  return maps;
}

await section('config', () => ({ config: { ...c }, vocab: model.vocab.slice(0, 4), vocabLength: model.vocab.length }));

// Logits of each fixture case fed whole (every position) and one token at a time.
await section('forward', () =>
  fixture.cases.map((k) => {
    const whole = model.createSession();
    const all = whole.feed(k.ids, { allLogits: true });
    const wholeRows = rows(all.allLogits, c.vocabSize).slice(k.logitsFrom);
    const lastEqualsAll = Array.from(all.logits).every(
      (v, i) => v === all.allLogits[(k.ids.length - 1) * c.vocabSize + i],
    );
    whole.dispose();
    const stepped = model.createSession();
    const stepRows = [];
    k.ids.forEach((id, i) => {
      const { logits } = stepped.feed([id]);
      if (i >= k.logitsFrom) stepRows.push(Array.from(logits));
    });
    stepped.dispose();
    return { whole: wholeRows, steps: stepRows, lastEqualsAll };
  }),
);

// Greedy continuations as PyTorch made them (through poem starts), and the default stop.
await section('greedy', () =>
  fixture.cases.map((k) => {
    const session = model.createSession();
    session.feed(k.ids);
    const made = [...generate(session, { maxNew: k.greedy.length, temperature: 0, stopAtPoemStart: false })];
    const ids = made.map((s) => s.id);
    const text = made.map((s) => s.text).join('');
    const positions = made.map((s) => s.position);
    const rowShapes = made[0].attention.map((w) => w.length);
    session.truncate(k.ids.length);
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

// The maps of a session fed in two chunks and generated on, against the same tokens fed whole.
await section('maps', () => {
  const { ids } = fixture.cases[0];
  const session = model.createSession();
  const first = session.feed(ids.slice(0, 3));
  const second = session.feed(ids.slice(3));
  const made = [...generate(session, { maxNew: 5, temperature: 0.8, topK: 20, seed: 7 })];
  const n = session.length;
  const feeds = [
    { count: 3, attention: first.attention },
    { count: ids.length - 3, attention: second.attention },
    ...made.map((s) => ({ count: 1, attention: s.attention })),
  ];
  const whole = model.createSession();
  const all = whole.feed(session.tokens);
  whole.dispose();
  session.dispose();
  return {
    n,
    maps: mapsOf(feeds, n),
    wholeMaps: mapsOf([{ count: n, attention: all.attention }], n),
    feedShapes: [first, second].map((r) => r.attention.map((w) => w.length)),
    secondFrom: 3,
    secondCount: ids.length - 3,
  };
});

// The worked steps of some heads, with the weights the cached path gave for the same rows.
await section('headSteps', async () => {
  const { ids } = fixture.cases[1];
  const session = model.createSession();
  const fed = session.feed(ids);
  const made = [...generate(session, { maxNew: 4 })];
  const n = session.length;
  const maps = mapsOf(
    [{ count: ids.length, attention: fed.attention }, ...made.map((s) => ({ count: 1, attention: s.attention }))],
    n,
  );
  const picks = [
    [0, 0, 0],
    [0, 1, 3],
    [1, 2, n - 1],
    [2, 3, 5],
    [3, 1, n - 2],
    [3, 3, n - 1],
  ];
  const out = [];
  const heapBefore = heap();
  for (const [layer, head, query] of picks) {
    const s = session.headSteps(layer, head, query);
    const { map } = maps[layer * c.numHeads + head];
    const plain = Object.fromEntries(
      Object.entries(s).map(([k, v]) => [
        k,
        ArrayBuffer.isView(v) ? Array.from(v, (x) => (Number.isFinite(x) ? x : String(x))) : v,
      ]),
    );
    out.push({ layer, head, query, n, steps: plain, cachedRow: map.slice(query * n, (query + 1) * n) });
  }
  const heapAfter = heap(); // the steps keep nothing in the engine
  // After a truncate and other tokens, the steps follow what the session now holds.
  session.truncate(n - 2);
  const fedAgain = session.feed([5, 6]); // attention per layer [heads, 2, n]
  const [layer, head] = [1, 2];
  const again = session.headSteps(layer, head, n - 1);
  const truncated = {
    weights: Array.from(again.weights),
    cachedRow: Array.from(fedAgain.attention[layer].subarray((head * 2 + 1) * n, (head * 2 + 2) * n)),
  };
  session.dispose();
  return { picks: out, heapBefore, heapAfter, truncated };
});

await section('sampling', async () => {
  const s = model.createSession();
  const { logits } = s.feed(fixture.cases[0].ids);
  s.dispose();
  const prompt = fixture.cases[2].ids;
  const seeded = (seed, temperature = 1.2, topK = 0) => {
    const session = model.createSession();
    session.feed(prompt);
    const ids = [...generate(session, { maxNew: 12, temperature, topK, seed, stopAtPoemStart: false })].map(
      (t) => t.id,
    );
    session.dispose();
    return ids;
  };
  // loadModel's own generate, with the same seed and sampling, from the same prompt
  const modelGenerate = async (options) =>
    Array.from(
      (await model.model.generate(Int32Array.from(prompt), { maxNewTokens: 12, stopAtEos: false, ...options })).ids,
    );
  return {
    logits: Array.from(logits),
    top: model.topTokens(logits, 5),
    hot: model.topTokens(logits, 5, 0.5),
    sumAll: topTokens(logits, logits.length).reduce((a, t) => a + t.prob, 0),
    allTextNull: topTokens(logits, logits.length).every((t) => t.text === null),
    seededA: seeded(3),
    seededB: seeded(3),
    seededC: seeded(4),
    modelSeededA: await modelGenerate({ temperature: 1.2, seed: 3 }),
    topK40: seeded(6, 0.9, 40),
    modelTopK40: await modelGenerate({ temperature: 0.9, topK: 40, seed: 6 }),
    greedy: seeded(5, 0),
    modelGreedy: await modelGenerate({ temperature: 0 }),
    errors: {
      k0: await thrown(() => topTokens(logits, 0)),
      t0: await thrown(() => topTokens(logits, 3, 0)),
      notLogits: await thrown(() => topTokens('x', 3)),
    },
  };
});

await section('vocab', async () => ({
  encoded: Array.from(model.encode(`${fixture.cases[0].prompt}\n`)),
  astral: await thrown(() => model.encode('月😀光x月x')),
  notString: await thrown(() => model.encode(5)),
  markerText: await thrown(() => model.encode('<s>')),
  decoded: model.decode([...fixture.cases[0].ids, 1, 0]),
  tokenTexts: [0, 1, 2].map((id) => model.tokenText(id)),
  badTokenText: await thrown(() => model.tokenText(c.vocabSize)),
}));

// Errors leave the session usable and as it was.
await section('errors', async () => {
  const { ids } = fixture.cases[0];
  const fresh = model.createSession();
  const expected = Array.from(fresh.feed(ids).logits);
  fresh.dispose();
  const s = model.createSession({ maxLength: ids.length + 2 });
  s.feed(ids.slice(0, 4));
  const tooLong = await thrown(() => s.feed(ids.slice(4).concat([5, 6, 7])));
  const lengthAfterTooLong = s.length;
  const badId = await thrown(() => s.feed([3, -1]));
  const fraction = await thrown(() => s.feed([2.5]));
  const empty = await thrown(() => s.feed([]));
  const notArray = await thrown(() => s.feed(7));
  const lengthAfterBad = s.length;
  const logitsAfter = Array.from(s.feed(ids.slice(4)).logits);
  s.feed([1, 2]);
  const full = await thrown(() => s.feed([3]));
  const generatedWhenFull = [...generate(s, { maxNew: 3 })].length;
  const stoppedWhenFull = generate(s, { maxNew: 3 }).next();
  const badLayer = await thrown(() => s.headSteps(c.numLayers, 0, 0));
  const badHead = await thrown(() => s.headSteps(0, -1, 0));
  const badQuery = await thrown(() => s.headSteps(0, 0, s.length));
  const badTruncate = await thrown(() => s.truncate(s.length + 1));
  s.truncate(ids.length);
  const logitsAfterTruncate = Array.from(s.logits);
  const badMaxLength = await thrown(() => model.createSession({ maxLength: 0 }));
  const empty2 = model.createSession();
  const generateEmpty = await thrown(() => generate(empty2, {}));
  empty2.feed([0]);
  const generateBadTemperature = await thrown(() => generate(empty2, { temperature: -1 }));
  const generateBadTopCount = await thrown(() => generate(empty2, { topCount: 0 }));
  const generateBadTopK = await thrown(() => generate(empty2, { temperature: 1, topK: -1 }));
  empty2.dispose();
  s.dispose();
  const heapBeforeOpens = heap();
  const open = (f) => thrown(() => openPoemModel(pkg, attn, f));
  const withoutTensor = () => {
    const { tensors } = pkg.readSafetensors(files.weights);
    delete tensors['model.layers.2.mlp.up_proj.weight'];
    return { ...files, weights: { tensors } };
  };
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
    generateBadTopCount,
    generateBadTopK,
    heapBeforeOpens,
    badEngine: await thrown(() => openPoemModel(pkg, {}, files)),
    badPackage: await thrown(() => openPoemModel({}, attn, files)),
    noConfig: await open({ ...files, config: undefined }),
    missingTensor: await open(withoutTensor()),
    wrongConfig: await open({ ...files, config: { ...files.config, num_hidden_layers: 5 } }),
    heapAfterFailedOpens: heap(),
  };
});

await section('dispose', async () => {
  const inUse = heap();
  const live = model.createSession();
  live.feed(fixture.cases[0].ids);
  const withSession = heap();
  const other = model.createSession({ maxLength: 32 });
  other.dispose();
  other.dispose();
  const afterOne = heap();
  model.dispose();
  model.dispose();
  return {
    baseline,
    inUse,
    withSession,
    afterOne,
    afterModel: heap(),
    sessionDisposed: live.disposed,
    modelDisposed: model.disposed,
    feedAfter: await thrown(() => live.feed([1])),
    headStepsAfter: await thrown(() => live.headSteps(0, 0, 0)),
    createAfter: await thrown(() => model.createSession()),
  };
});

attn.dispose();
process.stdout.write(JSON.stringify(report));
