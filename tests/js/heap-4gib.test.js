'use strict';
// The WebAssembly heap grows past 2 GiB, up to 4 GiB: a KV cache of 2.3 GB fits, and a call whose
// inputs, masks and results live above the 2 GiB line (addresses that a signed 32-bit integer reads
// as negative) gives the bits of the same call in a small heap.
const { createAttention } = require('wasm-attention');

const E = 64;
let seed = 3;
const random = (n) => Float32Array.from({ length: n }, () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5);
const LAYER = { embedDim: E, numHeads: 2, inProjWeight: random(3 * E * E), outProjWeight: random(E * E) };
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

test('a 2.3 GB cache and calls above the 2 GiB line: same bits as in a small heap; memoryStats counts past 2 GiB', async () => {
  const attn = await createAttention({ threads: 1 });
  const layer = attn.createMultiHeadAttention(LAYER);
  const prompt = random(5 * E);
  const step = random(E);
  const padding = Uint8Array.from([0, 1, 0, 0, 0, 0]); // the step's keyPaddingMask: 6 cached tokens
  const run = (cache) => {
    const first = layer.forward({ query: prompt, cache, isCausal: true });
    const second = layer.forward({
      query: step,
      cache,
      isCausal: true,
      keyPaddingMask: padding,
      averageAttnWeights: false,
    });
    return [first.output, first.weights, second.output, second.weights].map(bits);
  };
  const small = run(layer.createKvCache({ maxLength: 16 }));
  const big = layer.createKvCache({ maxLength: 3_000_000 });
  const stats = attn.memoryStats();
  expect(stats.memoryBytes).toBeGreaterThan(2 ** 31);
  expect(stats.heapInUse).toBeGreaterThan(2 ** 31);
  expect(run(big)).toEqual(small);
  big.dispose();
  layer.dispose();
  attn.dispose();
}, 60000);

test('more than 4 GiB is the out-of-memory RangeError, saying how much was needed and the 4096 MiB limit', async () => {
  const attn = await createAttention({ threads: 1 });
  const layer = attn.createMultiHeadAttention(LAYER);
  expect(() => layer.createKvCache({ maxLength: 6_000_000 })).toThrow(
    /createKvCache: the work is too large for WebAssembly memory: it needs about 439\d\.\d MiB .* limited to 4096 MiB/,
  );
  attn.dispose();
});
