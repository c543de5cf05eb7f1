'use strict';
// The ways a forward splits its work over threads (every head at once for few tokens, one head at a
// time for long sequences, heads stacked per K/V head in grouped-query steps, averaged weights per
// head) give bit-identical results on 1, 2 and 3 threads, and agree with the float64 reference.
const { useEngines } = require('./engines');
const { multiHeadAttention, mulberry32, randomArray, expectClose } = require('./reference');

const THREADS = [1, 2, 3];
const engines = useEngines(THREADS);

/** Same bits (any NaN equals any NaN); names the first index that differs. */
function expectSameBits(a, b, label) {
  if (a === null || b === null) {
    expect([label, a === null]).toEqual([label, b === null]);
    return;
  }
  expect([label, a.length]).toEqual([label, b.length]);
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i]) && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) {
      throw new Error(`${label}: index ${i} is ${a[i]} on one engine and ${b[i]} on the other`);
    }
  }
}

function weightsOf(rng, e, h) {
  return {
    embedDim: e,
    numHeads: h,
    inProjWeight: randomArray(rng, 3 * e * e, 0.1),
    inProjBias: randomArray(rng, 3 * e, 0.1),
    outProjWeight: randomArray(rng, e * e, 0.1),
    outProjBias: randomArray(rng, e, 0.1),
  };
}

// tokens × embedDim × heads: the shapes of the benchmark, small to large.
const SHAPES = [
  [8, 64, 2],
  [12, 48, 3],
  [4, 512, 8],
  [64, 256, 4],
  [96, 384, 6],
];

describe.each(SHAPES)('%i tokens × %i × %i heads', (n, e, h) => {
  const rng = mulberry32(n * 1000 + e + h);
  const w = weightsOf(rng, e, h);
  const query = randomArray(rng, n * e);
  const key = randomArray(rng, 2 * n * e);

  test.each([
    ['self-attention, no weights', { query, needWeights: false }],
    ['self-attention, averaged weights', { query }],
    ['cross-attention, per-head weights, causal', { query, key, isCausal: true, averageAttnWeights: false }],
  ])('%s: one-shot and prepared, same bits on 1, 2, 3 threads', (what, args) => {
    const ref = multiHeadAttention({ ...w, ...args });
    const results = THREADS.map((t) => {
      const layer = engines[t].createMultiHeadAttention(w);
      const prepared = layer.forward(args);
      layer.dispose();
      return { oneShot: engines[t].multiHeadAttention({ ...w, ...args }), prepared };
    });
    expectClose(results[0].oneShot.output, ref.output, `${what} output`);
    if (args.needWeights !== false) expectClose(results[0].oneShot.weights, ref.weights, `${what} weights`);
    for (const [i, r] of results.entries()) {
      for (const kind of ['oneShot', 'prepared']) {
        expectSameBits(r[kind].output, results[0].oneShot.output, `${what}: ${kind} output on ${THREADS[i]} threads`);
        expectSameBits(
          r[kind].weights,
          results[0].oneShot.weights,
          `${what}: ${kind} weights on ${THREADS[i]} threads`,
        );
      }
    }
  });
});

// Grouped-query and multi-query decoding: a prompt, then steps of one and of three tokens, with and
// without weights (averaged or per head), each split by heads.
describe.each([
  ['GQA 16 heads, 4 K/V heads', 16, 4],
  ['GQA 16 heads, 8 K/V heads (stacked pairs)', 16, 8],
  ['multi-query, 1 K/V head', 8, 1],
])('%s: decode steps with a KV cache', (what, numHeads, numKvHeads) => {
  test.each([
    ['no weights', { needWeights: false }],
    ['averaged weights', {}],
    ['per-head weights', { averageAttnWeights: false }],
  ])('%s: same bits on 1, 2, 3 threads', (weightsKind, extra) => {
    const rng = mulberry32(numHeads * 100 + numKvHeads);
    const embedDim = 512,
      headDim = 64;
    const layerArgs = {
      embedDim,
      numHeads,
      numKvHeads,
      headDim,
      rope: true,
      qProjWeight: randomArray(rng, numHeads * headDim * embedDim, 0.05),
      kProjWeight: randomArray(rng, numKvHeads * headDim * embedDim, 0.05),
      vProjWeight: randomArray(rng, numKvHeads * headDim * embedDim, 0.05),
      outProjWeight: randomArray(rng, embedDim * numHeads * headDim, 0.05),
    };
    const tokens = [20, 1, 3, 1];
    const inputs = tokens.map((n) => randomArray(rng, n * embedDim));
    const runs = THREADS.map((t) => {
      const layer = engines[t].createMultiHeadAttention(layerArgs);
      const cache = layer.createKvCache({ maxLength: 32 });
      const steps = inputs.map((query) => layer.forward({ query, cache, isCausal: true, ...extra }));
      layer.dispose();
      return steps;
    });
    for (const [i, steps] of runs.entries()) {
      steps.forEach((step, s) => {
        expectSameBits(step.output, runs[0][s].output, `step ${s} output on ${THREADS[i]} threads`);
        expectSameBits(step.weights, runs[0][s].weights, `step ${s} weights on ${THREADS[i]} threads`);
      });
    }
    // The steps equal one causal forward over the whole sequence (no cache).
    const all = new Float32Array(tokens.reduce((a, b) => a + b) * embedDim);
    inputs.reduce((offset, x) => (all.set(x, offset), offset + x.length), 0);
    const layer = engines[2].createMultiHeadAttention(layerArgs);
    const whole = layer.forward({ query: all, isCausal: true, needWeights: false }).output;
    layer.dispose();
    const stepped = new Float32Array(whole.length);
    runs[0].reduce((offset, step) => (stepped.set(step.output, offset), offset + step.output.length), 0);
    expectClose(stepped, whole, `${what} ${weightsKind}: steps vs one forward`);
  });
});
