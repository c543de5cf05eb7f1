'use strict';
// The demo's poem model (web/poem/model over the package's loadModel) against PyTorch:
// tests/fixtures/models/tang-poems.json holds what models/tang-poems/model.py computes in float64
// from the shipped fp16 weights (written by make_fixture.py). web/poem/model is ES modules and Jest runs
// CommonJS here, so the model runs in a child `node tests/js/poem-model-run.mjs` that prints what it
// computed; this file asserts on it. Nothing here depends on which weights are shipped: every
// expectation comes from the fixture.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const RUNNER = path.join(__dirname, 'poem-model-run.mjs');
const fixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'models', 'tang-poems.json'), 'utf8'),
);
const cases = fixture.cases.map((c) => [c.prompt, c]);
// The contract's tolerance.
const close = (got, ref) => Math.abs(got - ref) <= 1e-4 + 1e-4 * Math.abs(ref);
// Below this a greedy step's two best logits could swap within the tolerance.
const SAFE_MARGIN = 1e-3;

let report;
beforeAll(() => {
  const r = spawnSync(process.execPath, [RUNNER], { encoding: 'utf8', timeout: 170000, maxBuffer: 256 << 20 });
  if (r.status !== 0)
    throw new Error(`node ${RUNNER} exited ${r.status}${r.signal ? ` (${r.signal})` : ''}:\n${r.stderr}`);
  report = JSON.parse(r.stdout);
}, 180000);

/** A section of the runner's report; one that threw fails here with its error. */
function section(name) {
  const s = report[name];
  if (s === undefined) throw new Error(`the runner reported no section ${name}`);
  if (s && s.error) throw new Error(`section ${name} threw in the runner:\n${s.error}`);
  return s;
}

/** Every element within the tolerance; the message names the first bad index. */
function expectAllClose(got, want, what) {
  expect([what, got.length]).toEqual([what, want.length]);
  const bad = want.findIndex((w, i) => !close(got[i], w));
  if (bad >= 0)
    throw new Error(
      `${what}: element ${bad} is ${got[bad]}, PyTorch/reference ${want[bad]} (|diff| ${Math.abs(got[bad] - want[bad])})`,
    );
}

/** A float from the runner's JSON (non-finite values travel as strings). */
const num = (v) => (typeof v === 'string' ? Number(v) : v);

describe('the shipped model against PyTorch', () => {
  test("config is loadModel's model.config of config.json, shaped as model.py; the vocabulary from tokenizer.json", () => {
    const { config, vocab, vocabLength } = section('config');
    const width = fixture.cases[0].logits[0].length;
    expect(config).toEqual({
      modelType: 'llama',
      numLayers: 4,
      hiddenSize: 128,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 32,
      vocabSize: width,
      maxPositions: 256,
      causal: true,
    });
    expect(vocabLength).toBe(width);
    expect(vocab.slice(0, 2)).toEqual(['<s>', '\n']);
  });

  test.each(cases)('%s fed whole: logits of every fixture position', (_, c) => {
    const got = section('forward')[fixture.cases.indexOf(c)];
    expect(got.whole.length).toBe(c.logits.length);
    got.whole.forEach((row, r) => expectAllClose(row, c.logits[r], `logits at position ${c.logitsFrom + r}`));
    expect(got.lastEqualsAll).toBe(true); // feed's logits are the last row of allLogits
  });

  test.each(cases)("%s fed token by token: each step's logits", (_, c) => {
    const got = section('forward')[fixture.cases.indexOf(c)];
    expect(got.steps.length).toBe(c.logits.length);
    got.steps.forEach((row, r) => expectAllClose(row, c.logits[r], `logits after token ${c.logitsFrom + r}`));
  });

  test.each(cases)("%s: greedy generation reproduces PyTorch's tokens", (prompt, c) => {
    if (!(c.smallestMargin >= SAFE_MARGIN)) {
      throw new Error(
        `fixture prompt ${JSON.stringify(prompt)}: a greedy step's two best logits differ by only ${c.smallestMargin} ` +
          `(< ${SAFE_MARGIN}), so a correct float32 forward may pick either; pick another prompt in models/tang-poems/make_fixture.py (PROMPTS) and regenerate the fixture`,
      );
    }
    const got = section('greedy')[fixture.cases.indexOf(c)];
    expect(got.ids).toEqual(c.greedy);
    expect(got.text).toBe(c.greedyText); // text is the token's own string, '<s>' included
    expect(got.positions).toEqual(c.greedy.map((_, i) => c.ids.length + i));
    // each step's attention: [nHeads, 1 query, keys so far] per layer
    expect(got.rowShapes).toEqual([4, 4, 4, 4].map((h) => h * (c.ids.length + 1)));
  });

  test.each(cases)('%s: by default generation stops before the next poem start', (_, c) => {
    const got = section('greedy')[fixture.cases.indexOf(c)];
    const end = c.greedy.indexOf(0);
    if (end < 0) {
      // the fixture's continuation never starts a poem: generation runs on past it
      expect(got.untilStart.slice(0, c.greedy.length)).toEqual(c.greedy);
      expect(got.stopped.stop).toBe('maxLength');
      return;
    }
    expect(got.untilStart).toEqual(c.greedy.slice(0, end));
    expect(got.stopped.stop).toBe('poemStart');
    expect(got.stopped.top[0]).toMatchObject({ id: 0, text: '<s>' });
    expect(got.stopped.length).toBe(c.ids.length + end); // the poem start is not fed
  });
});

describe('attention maps', () => {
  test('each row sums to 1 and is causal (zeros after the query)', () => {
    const { n, maps } = section('maps');
    expect(maps.length).toBe(16);
    for (const { layer, head, map } of maps) {
      expect(map.length).toBe(n * n);
      for (let i = 0; i < n; i++) {
        const row = map.slice(i * n, (i + 1) * n);
        const sum = row.reduce((a, b) => a + b, 0);
        if (!(Math.abs(sum - 1) <= 1e-5)) throw new Error(`layer ${layer} head ${head}: row ${i} sums to ${sum}`);
        const after = row.findIndex((v, j) => j > i && v !== 0);
        if (after >= 0)
          throw new Error(
            `layer ${layer} head ${head}: row ${i} has weight ${row[after]} at key ${after} after the query`,
          );
        if (!row.slice(0, i + 1).every((v) => v >= 0 && v <= 1))
          throw new Error(`layer ${layer} head ${head}: row ${i} has a weight outside [0, 1]`);
      }
    }
  });

  test("feed's attention: every layer, [numHeads, tokens fed, keys so far]", () => {
    const { feedShapes, secondFrom, secondCount } = section('maps');
    expect(feedShapes).toEqual([
      Array(4).fill(4 * secondFrom * secondFrom),
      Array(4).fill(4 * secondCount * (secondFrom + secondCount)),
    ]);
  });

  test('fed in chunks and generated equals fed whole, within the tolerance', () => {
    const { maps, wholeMaps } = section('maps');
    maps.forEach(({ layer, head, map }, k) => expectAllClose(map, wholeMaps[k].map, `layer ${layer} head ${head} map`));
  });
});

describe('headSteps', () => {
  test("each layer's input comes from the model's own hidden states: nothing stays in the engine", () => {
    const { heapBefore, heapAfter } = section('headSteps');
    expect(heapAfter).toBe(heapBefore);
  });

  test("weights agree with the cached path's; the steps agree with each other", () => {
    for (const { layer, head, query, n, steps, cachedRow } of section('headSteps').picks) {
      const what = `layer ${layer} head ${head} query ${query}`;
      const d = 32;
      expect([what, steps.q.length, steps.keys.length, steps.values.length, steps.output.length]).toEqual([
        what,
        d,
        n * d,
        n * d,
        d,
      ]);
      expect([what, steps.kvHead]).toEqual([what, Math.floor(head / 2)]);
      const weights = steps.weights.map(num);
      expectAllClose(weights, cachedRow, `${what}: weights against the cached path's row`);
      for (let j = 0; j < n; j++) {
        const dot = steps.q.reduce((s, q, k) => s + q * steps.keys[j * d + k], 0);
        if (!close(num(steps.scores[j]), dot))
          throw new Error(`${what}: score ${j} is ${steps.scores[j]}, q·k is ${dot}`);
        if (j <= query) {
          if (!close(num(steps.scaledScores[j]), dot * steps.scale))
            throw new Error(`${what}: scaled score ${j} is ${steps.scaledScores[j]}`);
        } else {
          expect([what, j, steps.scaledScores[j], weights[j]]).toEqual([what, j, '-Infinity', 0]);
        }
      }
      const output = Array.from({ length: d }, (_, k) =>
        weights.reduce((s, w, j) => s + w * steps.values[j * d + k], 0),
      );
      expectAllClose(steps.output, output, `${what}: output against Σ weights·values`);
    }
  });

  test('after a truncate and new tokens, the steps follow what the session holds', () => {
    const { weights, cachedRow } = section('headSteps').truncated;
    expectAllClose(weights, cachedRow, 'layer 1 head 2, the last query, after truncate and feed');
  });
});

describe('choosing tokens', () => {
  const softmax = (logits, t) => {
    const m = Math.max(...logits.map((v) => v / t));
    const e = logits.map((v) => Math.exp(v / t - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  };
  const ranked = (logits) => logits.map((_, i) => i).sort((a, b) => logits[b] - logits[a] || a - b);

  test('topTokens: the most likely tokens, sorted, with softmax(logits / temperature)', () => {
    const s = section('sampling');
    const order = ranked(s.logits);
    for (const [top, t] of [
      [s.top, 1],
      [s.hot, 0.5],
    ]) {
      const p = softmax(s.logits, t);
      expect(top.map((x) => x.id)).toEqual(order.slice(0, 5));
      top.forEach((x) => expect(Math.abs(x.prob - p[x.id])).toBeLessThan(1e-12));
      expect(typeof top[0].text).toBe('string');
    }
    expect(Math.abs(s.sumAll - 1)).toBeLessThan(1e-9);
    expect(s.allTextNull).toBe(true); // the free function has no vocabulary
  });

  test("seeded sampling repeats, and draws what loadModel's generate draws with the same seed", () => {
    const s = section('sampling');
    expect(s.seededA).toEqual(s.seededB);
    expect(s.seededA).not.toEqual(s.seededC);
    expect(s.seededA).toEqual(s.modelSeededA);
    expect(s.topK40).toEqual(s.modelTopK40);
    expect(s.greedy).toEqual(s.modelGreedy);
  });

  test('bad arguments are named errors', () => {
    const e = section('sampling').errors;
    expect(e.k0).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/topTokens: k/) });
    expect(e.t0).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/topTokens: temperature/) });
    expect(e.notLogits).toMatchObject({ name: 'TypeError', message: expect.stringMatching(/logits/) });
  });
});

describe('text', () => {
  test('encode puts the poem start first, as tokenizer.json does; decode leaves it out', () => {
    const v = section('vocab');
    const { prompt, ids } = fixture.cases[0];
    expect(v.encoded).toEqual([...ids, 1]);
    expect(v.decoded).toBe(`${prompt}\n`);
    expect(v.tokenTexts).toEqual(['<s>', '\n', '，']);
    expect(v.badTokenText.name).toBe('RangeError');
  });

  test('encode names every character not in the vocabulary', () => {
    const v = section('vocab');
    expect(v.astral.name).toBe('RangeError');
    expect(v.astral.message).toContain('"😀" (U+1F600)'); // one token per code point, not per UTF-16 unit
    expect(v.astral.message).toContain('"x" (U+0078)');
    expect(v.astral.message.match(/U\+0078/g).length).toBe(1); // each named once
    expect(v.markerText.name).toBe('RangeError'); // '<s>' in text is not the marker
    expect(v.notString.name).toBe('TypeError');
  });
});

describe('errors leave things usable', () => {
  test('past maxLength, bad ids, bad indices: RangeError, the session unchanged', () => {
    const e = section('errors');
    expect(e.tooLong).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/maxLength 9/) });
    expect(e.lengthAfterTooLong).toBe(4);
    for (const k of [
      'badId',
      'fraction',
      'empty',
      'full',
      'badLayer',
      'badHead',
      'badQuery',
      'badTruncate',
      'badMaxLength',
      'generateEmpty',
      'generateBadTemperature',
      'generateBadTopCount',
      'generateBadTopK',
    ]) {
      expect([k, e[k] && e[k].name]).toEqual([k, 'RangeError']);
    }
    expect(e.generateBadTopK.message).toMatch(/^createSampler: topK must be an integer ≥ 0, got -1$/);
    expect(e.notArray.name).toBe('TypeError');
    expect(e.lengthAfterBad).toBe(4);
    // after the errors the session goes on as if they never happened
    expectAllClose(e.logitsAfter, e.expected, 'logits after the failed feeds');
    expectAllClose(e.logitsAfterTruncate, e.expected, 'logits after truncate');
    expect(e.generatedWhenFull).toBe(0);
    expect(e.stoppedWhenFull).toEqual({ done: true, value: { stop: 'maxLength', top: null } });
  });

  test('openPoemModel refuses what is not this model, leaking nothing', () => {
    const e = section('errors');
    expect(e.badEngine.name).toBe('TypeError');
    expect(e.badPackage).toMatchObject({ name: 'TypeError', message: expect.stringContaining('loadModel') });
    expect(e.noConfig.name).toBe('TypeError');
    expect(e.missingTensor).toMatchObject({
      name: 'TypeError',
      message: expect.stringContaining('model.layers.2.mlp.up_proj.weight'),
    });
    expect(e.wrongConfig).toMatchObject({ name: 'TypeError', message: expect.stringContaining('layers.4.') });
    expect(e.heapAfterFailedOpens).toBe(e.heapBeforeOpens);
  });
});

test('dispose frees the model and its sessions; later calls throw', () => {
  const d = section('dispose');
  expect(d.inUse).toBeGreaterThan(d.baseline); // the model's weights
  expect(d.withSession).toBeGreaterThan(d.inUse); // a session's caches
  expect(d.afterOne).toBe(d.withSession); // a disposed session gave its caches back
  expect(d.afterModel).toBe(d.baseline);
  expect([d.sessionDisposed, d.modelDisposed]).toEqual([true, true]);
  for (const k of ['feedAfter', 'headStepsAfter', 'createAfter']) {
    expect([k, d[k] && d[k].name, d[k] && /disposed/.test(d[k].message)]).toEqual([k, 'Error', true]);
  }
});
