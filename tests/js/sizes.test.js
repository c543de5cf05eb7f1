'use strict';
// Issue 16, finding 1: the sizes of a call are counted without wrapping (wasm32's size_t stops at
// 2^32): results of 2^32 floats or more are refused with the "too large for WebAssembly memory"
// RangeError before anything is allocated, and the engine stays usable. Nothing large is allocated
// here: the refusal comes first.
const { useEngines } = require('./engines');
const { mhaArgs } = require('./cases');
const ref = require('./reference');

const engines = useEngines();
const TOO_LARGE = /too large for WebAssembly memory/;

function expectTooLarge(fn, label) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect([label, error instanceof RangeError, String(error)]).toEqual([label, true, expect.stringMatching(TOO_LARGE)]);
}

// After a refusal the heap is intact: memoryStats answers and a small call gives the reference numbers.
function expectUsable(attn) {
  expect(attn.memoryStats().heapInUse).toBeGreaterThan(0);
  const args = mhaArgs({ seed: 3, tgtLen: 5, embedDim: 8, numHeads: 2 });
  ref.expectClose(attn.multiHeadAttention(args).output, ref.multiHeadAttention(args).output, 'a small call after');
}

describe.each([1, 2])('%i thread(s)', (threads) => {
  test('per-head weights of 64 heads × 8192² (2^32 floats) and 8193²: the RangeError, not weights null', () => {
    const attn = engines[threads];
    const E = 64;
    const layer = attn.createMultiHeadAttention({
      embedDim: E,
      numHeads: 64,
      slidingWindow: 1,
      inProjWeight: new Float32Array(3 * E * E).fill(0.01),
      outProjWeight: new Float32Array(E * E).fill(0.01),
    });
    try {
      for (const L of [8192, 8193]) {
        const args = { query: new Float32Array(L * E), isCausal: true, needWeights: true, averageAttnWeights: false };
        expectTooLarge(() => layer.forward(args), `weights, ${L} tokens`);
        expectTooLarge(
          () => layer.forward({ ...args, needWeights: false, returnIntermediates: true }),
          `intermediates.scores, ${L} tokens`,
        );
      }
    } finally {
      layer.dispose();
    }
    expectUsable(attn);
  });

  test('selfAttention of batch 64 × 8192² weights (2^32 floats): the RangeError', () => {
    const attn = engines[threads];
    const L = 8192;
    const x = new Float32Array(64 * L);
    const w = new Float32Array([1]);
    expectTooLarge(
      () => attn.selfAttention({ x, batch: 64, seqLen: L, dModel: 1, wq: w, wk: w, wv: w }),
      'selfAttention weights',
    );
    expectUsable(attn);
  });
});
