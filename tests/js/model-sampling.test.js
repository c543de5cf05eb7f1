'use strict';
// lib/model/sampling.mjs: greedy picks the first maximal logit; sampling follows softmax(logits / T)
// restricted by top-k and top-p, reproducibly from a seed; the fixtures' first greedy tokens; the same
// token as the sampler drew before it stopped sorting the vocabulary, from every row and seed.
const { modelModules, fixtureNames, loadFixture } = require('./model-modules');
const { samplerBefore } = require('./sampling-before');

const { greedy, createSampler, mulberry32 } = modelModules();

describe('greedy', () => {
  test('the first maximal logit; NaN never wins; -Infinity rows give 0', () => {
    expect(greedy(Float32Array.of(1, 3, 2, 3))).toBe(1);
    expect(greedy([NaN, -1, NaN, 5, 5])).toBe(3);
    expect(greedy(Float64Array.of(-Infinity, -Infinity))).toBe(0);
    expect(greedy([NaN, NaN])).toBe(0);
    expect(greedy([-Infinity, Infinity, Infinity])).toBe(1);
  });

  test.each(fixtureNames().filter((n) => loadFixture(n).expected.greedy))(
    "%s: the reference's first greedy token from its last logits row",
    (name) => {
      const { reference, expected } = loadFixture(name);
      const [T, V] = reference.logits.shape;
      expect(greedy(reference.logits.data.subarray((T - 1) * V, T * V))).toBe(expected.greedy[0]);
    },
  );
});

describe('createSampler', () => {
  const logits = Float32Array.of(2, 1, 0, -1, 3, 0.5, -Infinity, NaN);
  const softmax = (row, t) => {
    const e = Array.from(row, (x) => (x > -Infinity ? Math.exp(x / t) : 0));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  };
  const sequence = (options, row, n) => {
    const s = createSampler(options);
    return Array.from({ length: n }, () => s(row));
  };
  const draw = (sampler, n) => {
    const counts = new Array(logits.length).fill(0);
    for (let i = 0; i < n; i++) counts[sampler(logits)]++;
    return counts;
  };

  test('temperature 0 (the default) is greedy', () => {
    expect(createSampler()(logits)).toBe(4);
    expect(createSampler({ temperature: 0, seed: 3 })(logits)).toBe(4);
  });

  test('a seed reproduces the same tokens; another seed gives others', () => {
    const run = (seed) => sequence({ temperature: 1.5, seed }, logits, 40);
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  test('frequencies follow softmax(logits / temperature); -Infinity and NaN are never drawn', () => {
    const n = 20000;
    for (const t of [0.7, 2]) {
      const counts = draw(createSampler({ temperature: t, seed: 11 }), n);
      const p = softmax(
        logits.map((x) => (Number.isNaN(x) ? -Infinity : x)),
        t,
      );
      counts.forEach((c, i) => {
        const sd = Math.sqrt(n * p[i] * (1 - p[i]));
        expect([t, i, Math.abs(c - n * p[i]) <= 5 * sd + 1]).toEqual([t, i, true]);
      });
      expect([counts[6], counts[7]]).toEqual([0, 0]);
    }
  });

  test('top-k keeps the k largest logits (and any tied with the k-th)', () => {
    const counts = draw(createSampler({ temperature: 5, topK: 2, seed: 1 }), 3000);
    expect(counts.map((c) => c > 0)).toEqual([true, false, false, false, true, false, false, false]);
    const tied = Float32Array.of(1, 5, 1, 0);
    const seen = new Set(sequence({ temperature: 100, topK: 2, seed: 2 }, tied, 400));
    expect([...seen].sort()).toEqual([0, 1, 2]);
    expect(createSampler({ temperature: 1, topK: 1, seed: 5 })(logits)).toBe(4);
  });

  test('top-p keeps the shortest prefix reaching p; a tiny p is greedy', () => {
    const p = softmax(
      logits.map((x) => (Number.isNaN(x) ? -Infinity : x)),
      1,
    ); // order: 4, 0, 1, 5, 2, 3
    const twoMass = p[4] + p[0];
    const counts = draw(createSampler({ temperature: 1, topP: twoMass - 1e-6, seed: 4 }), 4000);
    expect(counts.map((c) => c > 0)).toEqual([true, false, false, false, true, false, false, false]);
    expect(draw(createSampler({ temperature: 1, topP: twoMass + 1e-6, seed: 4 }), 4000)[1]).toBeGreaterThan(0);
    expect(draw(createSampler({ temperature: 3, topP: 1e-9, seed: 4 }), 200)[4]).toBe(200);
  });

  test('+Infinity logits share the probability; an all -Infinity row is greedy', () => {
    const picks = new Set(sequence({ temperature: 1, seed: 9 }, Float32Array.of(0, Infinity, 3, Infinity), 200));
    expect([...picks].sort()).toEqual([1, 3]);
    expect(createSampler({ temperature: 1, seed: 9 })([-Infinity, -Infinity])).toBe(0);
  });

  test('wrong options are TypeErrors or RangeErrors naming them', () => {
    expect(() => createSampler({ temperature: -1 })).toThrow(/temperature must be a finite number ≥ 0/);
    expect(() => createSampler({ temperature: '1' })).toThrow(TypeError);
    expect(() => createSampler({ topK: 1.5 })).toThrow(RangeError);
    expect(() => createSampler({ topP: 0 })).toThrow(/topP must be in \(0, 1\]/);
    expect(() => createSampler({ topP: 1.1 })).toThrow(RangeError);
    expect(() => createSampler({ seed: 0.5 })).toThrow(/seed must be an integer/);
    expect(() => createSampler()('logits')).toThrow(TypeError);
    expect(() => greedy(new Float32Array(0))).toThrow(RangeError);
  });
});

describe('the same tokens as before the vocabulary stopped being sorted (sampling-before.js)', () => {
  // Rows made to be awkward, from a seeded generator: many ties (quarter steps), NaN, mostly −∞, +∞,
  // −0 beside +0, smooth values, float32's extremes; rows shorter and longer than the radix sort's
  // threshold (256) and longer than where it takes 16-bit digits (16384); all −∞, all NaN, one entry.
  const random = mulberry32(2024);
  const rows = [];
  for (const n of [1, 2, 7, 255, 256, 300, 2501, 20000]) {
    for (let kind = 0; kind < 7; kind++) {
      if (n === 20000 && kind !== 0) continue; // ties: enough at this length (the old sampler is slow there)
      const row = Array.from({ length: n }, () => Math.round((random() * 8 - 4) * 4) / 4);
      for (let i = 0; i < n; i++) {
        const r = random();
        if (kind === 1 && r < 0.1) row[i] = NaN;
        if (kind === 2 && r < 0.8) row[i] = -Infinity;
        if (kind === 3 && r < 0.01) row[i] = Infinity;
        if (kind === 4 && r < 0.3) row[i] = r < 0.15 ? -0 : 0;
        if (kind === 5) row[i] = random() * 20 - 10;
        if (kind === 6 && r < 0.2) row[i] = r < 0.1 ? 3.4028234663852886e38 : -3.4028234663852886e38;
      }
      rows.push(row);
    }
  }
  rows.push(Array(300).fill(-Infinity), Array(300).fill(NaN), Array(500).fill(0), [Infinity], [-Infinity, 5]);
  // Float32Array (the engine's rows: the radix path), Float64Array and arrays of values finer than
  // float32 (the comparison sort), and plain arrays of the same float32 values.
  // The long row only as a Float32Array: the other kinds order it as they order the shorter ones.
  const kinds = {
    Float32Array: (row) => Float32Array.from(row),
    Float64Array: (row) => Float64Array.from(row, (x) => x + (Number.isFinite(x) ? 1e-9 * Math.sin(x * 7) : 0)),
    array: (row) => Array.from(Float32Array.from(row)),
  };
  const rowsOf = (kind) => (kind === 'Float32Array' ? rows : rows.filter((row) => row.length < 20000));

  test.each(Object.keys(kinds))('%s rows: every option and seed draws what it drew before', (kind) => {
    const made = rowsOf(kind).map(kinds[kind]);
    let compared = 0;
    const differ = [];
    for (const temperature of [1e-300, 0.01, 0.5, 1, 2]) {
      for (const topK of [0, 1, 3, 40, 299, 300, 5000]) {
        for (const topP of [1, 0.5, 0.9, 1e-9, 1 - 2 ** -40]) {
          const seed = compared;
          const now = createSampler({ temperature, topK, topP, seed });
          const before = samplerBefore({ temperature, topK, topP }, mulberry32(seed), greedy);
          // One sampler over every row in turn: its generator must stay in step with the old one's too.
          for (const row of made) {
            const [a, b] = [now(row), before(row)];
            compared++;
            if (a !== b && differ.length < 5) differ.push({ temperature, topK, topP, n: row.length, a, b });
          }
        }
      }
    }
    expect(compared).toBe(5 * 7 * 5 * made.length);
    expect(differ).toEqual([]);
  });
});
