'use strict';
// Issue 8, item 3: attn.dispose() releases the engine: its layers, its memory and its worker
// threads. Later calls on it or its layers throw an Error saying it was disposed; a second dispose
// does nothing; a Node process that disposed a threaded engine exits on its own.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { createAttention } = require('wasm-attention');
const { mhaArgs, saArgs } = require('./cases');

const MODULE = Symbol.for('wasm-attention.module'); // the package's test hook: the live module, or null
const ARGS = mhaArgs({ seed: 41, tgtLen: 4, embedDim: 8, numHeads: 2, bias: true });
const LAYER = {
  embedDim: 8,
  numHeads: 2,
  inProjWeight: ARGS.inProjWeight,
  inProjBias: ARGS.inProjBias,
  outProjWeight: ARGS.outProjWeight,
};
const SA = saArgs({ seed: 42, seqLen: 3, dModel: 4, dK: 2 });

const workersOf = (attn) => {
  const { PThread } = attn[MODULE];
  return [...PThread.runningWorkers, ...PThread.unusedWorkers];
};

test('after dispose every call on the engine and its layers throws an Error saying so', async () => {
  const attn = await createAttention({ threads: 1 });
  const layer = attn.createMultiHeadAttention(LAYER);
  const sa = attn.createSelfAttention({ dModel: 4, wq: SA.wq, wk: SA.wk, wv: SA.wv });
  const before = layer.forward({ query: ARGS.query });
  expect(attn.disposed).toBe(false);
  attn.dispose();
  expect(attn.disposed).toBe(true);
  expect(attn[MODULE]).toBeNull(); // the module (and its memory) is no longer held
  const calls = {
    selfAttention: () => attn.selfAttention(SA),
    multiHeadAttention: () => attn.multiHeadAttention(ARGS),
    createSelfAttention: () => attn.createSelfAttention({ dModel: 4, wq: SA.wq, wk: SA.wk, wv: SA.wv }),
    createMultiHeadAttention: () => attn.createMultiHeadAttention(LAYER),
    memoryStats: () => attn.memoryStats(),
  };
  for (const [name, call] of Object.entries(calls)) {
    expect(call).toThrow(new RegExp(`^${name}: this engine was disposed`));
    expect(call).toThrow(Error);
  }
  expect(layer.disposed).toBe(true);
  expect(sa.disposed).toBe(true);
  expect(() => layer.forward({ query: ARGS.query })).toThrow(
    /forward: this layer was disposed \(its engine was disposed\)/,
  );
  expect(() => sa.forward({ x: SA.x, seqLen: 3 })).toThrow(/disposed/);
  expect(() => attn.dispose()).not.toThrow(); // a second dispose does nothing
  expect(() => layer.dispose()).not.toThrow();
  expect(attn.info.threads).toBe(1); // info stays readable
  expect(before.output.length).toBe(32);
});

test('a disposed layer frees its memory and the engine keeps working with others', async () => {
  const attn = await createAttention({ threads: 1 });
  const heap0 = attn.memoryStats().heapInUse;
  const a = attn.createMultiHeadAttention(LAYER);
  const b = attn.createMultiHeadAttention(LAYER);
  const want = a.forward({ query: ARGS.query });
  a.dispose();
  a.dispose();
  expect(Array.from(b.forward({ query: ARGS.query }).output)).toEqual(Array.from(want.output));
  b.dispose();
  expect(attn.memoryStats().heapInUse).toBe(heap0);
  attn.dispose();
});

test('a threaded engine: dispose terminates every worker thread', async () => {
  for (let round = 0; round < 3; round++) {
    const attn = await createAttention({ threads: 2 });
    expect(attn.info.threads).toBe(2);
    const workers = workersOf(attn);
    expect(workers.length).toBeGreaterThanOrEqual(1);
    const exited = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
    // enough work to run on both threads
    const big = mhaArgs({ seed: 43, tgtLen: 96, embedDim: 64, numHeads: 4, isCausal: true });
    const layer = attn.createMultiHeadAttention({
      embedDim: 64,
      numHeads: 4,
      inProjWeight: big.inProjWeight,
      outProjWeight: big.outProjWeight,
    });
    expect(layer.forward({ query: big.query, isCausal: true }).output.length).toBe(96 * 64);
    const { PThread } = attn[MODULE];
    attn.dispose();
    expect(PThread.runningWorkers.length + PThread.unusedWorkers.length).toBe(0);
    await Promise.all(exited); // every worker thread really ended
    expect(() => layer.forward({ query: big.query })).toThrow(/disposed/);
  }
});

test('a Node process that creates and disposes a threaded engine exits on its own', async () => {
  // The child holds its workers ref'd (as a program that keeps them would): only dispose lets it end.
  const script = `
    const { createAttention } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'index.cjs'))});
    (async () => {
      const attn = await createAttention({ threads: 2 });
      const { PThread } = attn[Symbol.for('wasm-attention.module')];
      for (const w of [...PThread.runningWorkers, ...PThread.unusedWorkers]) w.ref();
      const E = 16, q = new Float32Array(200 * E).map((_, i) => Math.sin(i));
      const r = attn.multiHeadAttention({ query: q, embedDim: E, numHeads: 2, inProjWeight: new Float32Array(3 * E * E).fill(0.01), outProjWeight: new Float32Array(E * E).fill(0.01) });
      attn.dispose();
      console.log('disposed ' + r.output.length);
    })();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '',
    err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  // A hang is what this test detects: kill the child if it has not exited long after its work.
  const killer = setTimeout(() => child.kill('SIGKILL'), 60000);
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  expect({ code, signal, out: out.trim(), err }).toEqual({ code: 0, signal: null, out: 'disposed 3200', err: '' });
});
