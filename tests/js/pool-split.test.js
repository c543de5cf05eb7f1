'use strict';
// The pool's split follows the machine's cores: a model wide enough that its one-token steps split
// their products by columns gives the same bits at 1, 2 and 4 threads (4 is more threads than this
// machine may have cores: they share them); and the bench's --threads list (bench/threads.mjs) is
// read, checked and capped as its README says.
const path = require('path');
const { spawnSync } = require('child_process');
const { useEngines } = require('./engines');
const { randomLlama } = require('./random-checkpoint');
const { modelModules } = require('./model-modules');
const { createModel, engineOf } = require('../../dist/create.cjs');

const { readModelConfig, planCheckpoint } = modelModules();
const THREADS = [1, 2, 4];
const engines = useEngines(THREADS);
const ROOT = path.join(__dirname, '..', '..');

describe('decode steps split by columns over any thread count', () => {
  // hidden 256, MLP 1024, vocabulary 3000: a one-token step's gate/up product (524k multiply-adds) and
  // LM head (768k) reach the pool's minimum work for two threads (src/parallel.h); its prefill splits
  // everything.
  const shape = {
    layers: 2,
    hidden: 256,
    heads: 8,
    kvHeads: 2,
    headDim: 32,
    intermediate: 1024,
    vocab: 3000,
    seed: 11,
  };
  const random = randomLlama(shape);
  const plan = planCheckpoint(readModelConfig(random.config), random.tensors);
  const ids = Int32Array.from({ length: 40 }, (_, i) => (i * 613 + 5) % shape.vocab);

  test('a prefill and one-token steps give the same bits at 1, 2 and 4 threads', () => {
    const runs = THREADS.map((t) => {
      expect(engines[t].info.threads).toBe(t);
      const model = createModel(engineOf(engines[t]), plan, {});
      const session = model.createSession({ maxLength: 48 });
      const out = [model.forward(ids.subarray(0, 30), { session, logits: 'last' }).logits];
      for (let i = 30; i < 40; i++) out.push(model.forward(ids.subarray(i, i + 1), { session }).logits);
      model.dispose();
      return out;
    });
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
    expect(runs[0].every((l) => l.length === shape.vocab && l.every(Number.isFinite))).toBe(true);
  });
});

/** parseThreads and threadPlan of bench/threads.mjs, in a child (the bench is ES modules). */
function threadsOf(argv, cores) {
  const script =
    `import { parseThreads, threadPlan, withoutThreads } from ${JSON.stringify(path.join(ROOT, 'bench', 'threads.mjs'))};` +
    `const argv = ${JSON.stringify(argv)};` +
    `try { const counts = parseThreads(argv);` +
    `  console.log(JSON.stringify({ counts, plan: threadPlan(counts, ${cores}), rest: withoutThreads(argv) })); }` +
    `catch (e) { console.log(JSON.stringify({ error: e.constructor.name, message: e.message })); }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

describe("the bench's --threads list", () => {
  test('both spellings are read; 1 is always there; counts are sorted and kept once', () => {
    expect(threadsOf(['--quick', '--threads', '16,4,2,4'], 2)).toMatchObject({
      counts: [1, 2, 4, 16],
      rest: ['--quick'],
    });
    expect(threadsOf(['--threads=8', '--skip=ort'], 2)).toMatchObject({ counts: [1, 8], rest: ['--skip=ort'] });
    expect(threadsOf(['--quick'], 2).counts).toEqual([1, 2]);
  });

  test('counts past the cores run with the cores they have, and say so', () => {
    const { plan } = threadsOf(['--threads', '1,2,4,16'], 2);
    expect(plan.map((p) => [p.threads, p.cores])).toEqual([
      [1, 1],
      [2, 2],
      [4, 2],
      [16, 2],
    ]);
    expect(plan[0].note).toBeNull();
    expect(plan[1].note).toBeNull();
    expect(plan[3].note).toMatch(/16 threads on 2 cores/);
    expect(threadsOf(['--threads', '4'], 8).plan.every((p) => p.note === null)).toBe(true);
  });

  test('a bad list is refused, naming the argument, what was expected and what was given', () => {
    expect(threadsOf(['--threads', '0,2'], 2)).toEqual({
      error: 'RangeError',
      message: expect.stringMatching(/--threads: each count must be an integer from 1 to 64, got "0"/),
    });
    expect(threadsOf(['--threads=2,x'], 2)).toMatchObject({
      error: 'RangeError',
      message: expect.stringMatching(/"x"/),
    });
    expect(threadsOf(['--threads=65'], 2)).toMatchObject({ error: 'RangeError' });
    expect(threadsOf(['--threads', '--quick'], 2)).toMatchObject({
      error: 'TypeError',
      message: expect.stringMatching(/--threads/),
    });
    expect(threadsOf(['--threads'], 2)).toMatchObject({ error: 'TypeError' });
  });

  test('bench/long.mjs stops at a bad list before it measures anything', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'long.mjs'), '--threads', '1,-2'], {
      encoding: 'utf8',
      timeout: 60000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--threads: each count must be an integer from 1 to 64, got "-2"/);
  });
});
