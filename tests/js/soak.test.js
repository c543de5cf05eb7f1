'use strict';
// A soak: 10,000 mixed calls on one engine (one-shot and prepared, several sizes, weights and the
// fused path, errors interleaved, layers created and disposed along the way). After a warm-up the
// heap in use comes back to its baseline whenever no layer is alive, WebAssembly memory does not
// grow, and a call repeated late gives the same bits as early.
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { mhaArgs, saArgs } = require('./cases');

const CALLS = 10000;
const WARM_UP = 1000;

test(`${CALLS} mixed calls keep the heap flat`, async () => {
  const attn = await createAttention({ threads: 1 });
  const rng = ref.mulberry32(4242);
  const pick = (list) => list[Math.floor(rng() * list.length)];
  const shapes = [1, 2, 5, 16, 33].map((L, i) =>
    mhaArgs({
      seed: 700 + i,
      batch: 1 + (i % 2),
      tgtLen: L,
      srcLen: [1, 3, 7, 16, 40][i],
      embedDim: 4 * (1 + (i % 3)),
      numHeads: 1 + (i % 2),
      bias: true,
      keyPaddingMask: i % 2 ? 'bool' : 'float',
      attnMask: i % 2 ? 'float2d' : undefined,
      isCausal: i === 3,
    }),
  );
  const sa = [3, 8].map((L, i) =>
    saArgs({ seed: 800 + i, seqLen: L, dModel: 5, dK: 3, dV: 2, bias: true, mask: 'bool' }),
  );
  const layerOf = (a) => ({
    embedDim: a.embedDim,
    numHeads: a.numHeads,
    inProjWeight: a.inProjWeight,
    inProjBias: a.inProjBias,
    outProjWeight: a.outProjWeight,
  });
  const inputsOf = (a) => ({
    query: a.query,
    key: a.key,
    value: a.value,
    batch: a.batch,
    attnMask: a.attnMask,
    keyPaddingMask: a.keyPaddingMask,
    isCausal: a.isCausal,
  });
  const first = new Map(); // shape index → output bits of its first one-shot call
  const bits = (r) => Array.from(new Uint32Array(r.output.buffer));
  const live = []; // [layer, args]
  let errors = 0,
    prepared = 0,
    baseline = null,
    memory = null;
  const bad = [
    () => attn.multiHeadAttention({ ...shapes[0], query: 'q' }),
    () => attn.multiHeadAttention({ ...shapes[1], numHeads: 3 }),
    () => attn.selfAttention({ ...sa[0], scale: 1e300 }),
    () => attn.selfAttention({ ...sa[1], x: new Proxy(sa[1].x, {}) }),
    () => attn.multiHeadAttention({ ...shapes[2], attnMask: new Uint8Array(3) }),
  ];

  for (let call = 0; call < CALLS; call++) {
    const r = rng();
    if (r < 0.08) {
      try {
        pick(bad)();
      } catch (e) {
        errors++;
        if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
      }
    } else if (r < 0.12 && live.length < 4) {
      const args = pick(shapes);
      live.push([attn.createMultiHeadAttention(layerOf(args)), args]);
    } else if (r < 0.16 && live.length > 0) {
      live.splice(Math.floor(rng() * live.length), 1)[0][0].dispose();
    } else if (r < 0.45 && live.length > 0) {
      const [layer, args] = pick(live);
      layer.forward({ ...inputsOf(args), needWeights: rng() < 0.5 });
      prepared++;
    } else if (r < 0.6) {
      const a = pick(sa);
      attn.selfAttention({ ...a, needWeights: rng() < 0.5 });
    } else {
      const i = Math.floor(rng() * shapes.length);
      const out = attn.multiHeadAttention({ ...shapes[i], needWeights: rng() < 0.3 ? false : undefined });
      if (out.weights !== null) {
        if (!first.has(i)) first.set(i, bits(out));
        else if (call % 97 === 0) expect([call, i, bits(out)]).toEqual([call, i, first.get(i)]);
      }
    }
    if (live.length === 0) {
      const { heapInUse, memoryBytes } = attn.memoryStats();
      if (call >= WARM_UP && baseline === null) {
        baseline = heapInUse;
        memory = memoryBytes;
      } else if (baseline !== null) {
        expect([call, heapInUse, memoryBytes]).toEqual([call, baseline, memory]);
      }
    }
  }
  for (const [layer] of live.splice(0)) layer.dispose();
  const end = attn.memoryStats();
  expect(baseline).not.toBeNull();
  expect(end).toEqual({ heapInUse: baseline, memoryBytes: memory });
  expect(errors).toBeGreaterThan(CALLS / 20);
  expect(prepared).toBeGreaterThan(CALLS / 10);
  console.log(
    `soak: ${CALLS} calls (${errors} errors, ${prepared} prepared forwards); heap in use ${baseline} → ${end.heapInUse} bytes, memory ${memory} → ${end.memoryBytes} bytes`,
  );
  attn.dispose();
});
