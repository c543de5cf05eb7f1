'use strict';
// Every error class of the contract: TypeError for a wrong type, RangeError for a wrong length or
// size, a mask of the wrong shape, or work too large for WebAssembly memory. Each message names the
// argument; after every error the instance works and the wasm heap in use is back where it was.
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { saArgs, mhaArgs, saDims, mhaDims, checkResult } = require('./cases');
const { MHA_V1_CALL_ARGS, MHA_V1_LAYER_ARGS } = require('./contract-args');

let attn;
let before; // results of the calls checkStillWorks repeats, computed before any bad call
beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
  before = { sa: attn.selfAttention(SA_OK), mha: attn.multiHeadAttention(MHA_OK) };
});

const heap = () => attn.memoryStats().heapInUse;

/** Small valid calls whose numbers are checked after each error. */
const SA_OK = saArgs({ seed: 1, batch: 2, seqLen: 5, dModel: 8, dK: 4, dV: 3, bias: true, mask: 'bool' });
const MHA_OK = mhaArgs({
  seed: 2,
  batch: 2,
  tgtLen: 4,
  srcLen: 5,
  embedDim: 8,
  numHeads: 2,
  bias: true,
  outBias: true,
  keyPaddingMask: 'bool',
  attnMask: 'float2d',
});
const MHA_SEP_OK = mhaArgs({
  seed: 3,
  batch: 2,
  tgtLen: 3,
  srcLen: 4,
  embedDim: 8,
  numHeads: 2,
  kdim: 5,
  vdim: 7,
  bias: true,
});

const bits = (a) => (a === null ? null : Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length)));

/** The instance still computes right, and bit-identically to before the bad call. */
function checkStillWorks(label) {
  const sa = attn.selfAttention(SA_OK);
  const mha = attn.multiHeadAttention(MHA_OK);
  checkResult(sa, ref.selfAttention(SA_OK), saDims(SA_OK), `${label}: selfAttention after the error`);
  checkResult(mha, ref.multiHeadAttention(MHA_OK), mhaDims(MHA_OK), `${label}: multiHeadAttention after the error`);
  for (const [name, now, then] of [
    ['selfAttention', sa, before.sa],
    ['multiHeadAttention', mha, before.mha],
  ]) {
    expect([label, name, bits(now.output), bits(now.weights)]).toEqual([
      label,
      name,
      bits(then.output),
      bits(then.weights),
    ]);
  }
}

/**
 * Calls fn, expecting it to throw `Cls` (or one of several classes) whose message matches `re`;
 * then checks that the heap in use equals its value before the call.
 */
function expectError(fn, Cls, re, label, heapOf = heap) {
  const classes = Array.isArray(Cls) ? Cls : [Cls];
  const before = heapOf();
  let err = null,
    result;
  try {
    result = fn();
  } catch (e) {
    err = e;
  }
  if (err === null) {
    throw new Error(
      `${label}: no error (returned ${result && Object.keys(result)}), expected ${classes.map((c) => c.name)} matching ${re}`,
    );
  }
  if (!classes.some((c) => err instanceof c)) {
    throw new Error(
      `${label}: threw ${err && err.constructor && err.constructor.name} "${err && err.message}", expected ${classes.map((c) => c.name)}`,
    );
  }
  if (!re.test(err.message)) {
    throw new Error(`${label}: the ${err.name} message "${err.message}" does not name the argument (${re})`);
  }
  const after = heapOf();
  if (after !== before) throw new Error(`${label}: heapInUse ${after} after the error, ${before} before (leak)`);
  return err;
}

const copy = (a) => ({ ...a });
const without = (a, ...keys) => {
  const b = copy(a);
  for (const k of keys) delete b[k];
  return b;
};
const shorter = (t) => t.slice(0, t.length - 1);
const longer = (t) => {
  const b = new t.constructor(t.length + 1);
  b.set(t);
  return b;
};

// --------------------------------------------------------------------- selfAttention

const SA_TYPE_ERRORS = [
  ['x is a string', (a) => ({ ...a, x: 'hello' }), /\bx\b/],
  ['x is an Int32Array', (a) => ({ ...a, x: new Int32Array(a.x.length) }), /\bx\b/],
  ['x is a plain object', (a) => ({ ...a, x: { length: a.x.length } }), /\bx\b/],
  ['x missing', (a) => without(a, 'x'), /\bx\b/],
  ['wq missing', (a) => without(a, 'wq'), /\bwq\b/],
  ['wk is a Uint8Array', (a) => ({ ...a, wk: new Uint8Array(a.wk.length) }), /\bwk\b/],
  ['wv is a string', (a) => ({ ...a, wv: 'abc' }), /\bwv\b/],
  ['bq is a number', (a) => ({ ...a, bq: 5 }), /\bbq\b/],
  ['bv is an Int16Array', (a) => ({ ...a, bv: new Int16Array(a.bv.length) }), /\bbv\b/],
  ['seqLen is a string', (a) => ({ ...a, seqLen: '5' }), /\bseqLen\b/],
  ['seqLen missing', (a) => without(a, 'seqLen'), /\bseqLen\b/],
  ['dModel missing', (a) => without(a, 'dModel'), /\bdModel\b/],
  ['batch is a string', (a) => ({ ...a, batch: '2' }), /\bbatch\b/],
  ['isCausal is a string', (a) => ({ ...a, isCausal: 'yes' }), /\bisCausal\b/],
  ['isCausal is a number', (a) => ({ ...a, isCausal: 1 }), /\bisCausal\b/],
  ['needWeights is a string', (a) => ({ ...a, needWeights: 'no' }), /\bneedWeights\b/],
  ['scale is a string', (a) => ({ ...a, scale: '0.5' }), /\bscale\b/],
  ['attnMask is an Int32Array', (a) => ({ ...a, attnMask: new Int32Array(25) }), /\battnMask\b/],
  ['attnMask is a string', (a) => ({ ...a, attnMask: 'causal' }), /\battnMask\b/],
];

const SA_RANGE_ERRORS = [
  ['x one element short', (a) => ({ ...a, x: shorter(a.x) }), /\bx\b/],
  ['x one element long', (a) => ({ ...a, x: longer(a.x) }), /\bx\b/],
  ['batch larger than x holds', (a) => ({ ...a, batch: 3 }), /\b(x|batch)\b/],
  ['seqLen 0', (a) => ({ ...a, seqLen: 0 }), /\bseqLen\b/],
  ['seqLen -5', (a) => ({ ...a, seqLen: -5 }), /\bseqLen\b/],
  ['seqLen 2.5', (a) => ({ ...a, seqLen: 2.5 }), /\bseqLen\b/],
  ['seqLen NaN', (a) => ({ ...a, seqLen: NaN }), /\bseqLen\b/],
  ['seqLen Infinity', (a) => ({ ...a, seqLen: Infinity }), /\bseqLen\b/],
  ['dModel 0', (a) => ({ ...a, dModel: 0 }), /\bdModel\b/],
  ['dModel 1.5', (a) => ({ ...a, dModel: 1.5 }), /\bdModel\b/],
  ['batch 0', (a) => ({ ...a, batch: 0 }), /\bbatch\b/],
  ['batch -1', (a) => ({ ...a, batch: -1 }), /\bbatch\b/],
  ['batch 1.5', (a) => ({ ...a, batch: 1.5 }), /\bbatch\b/],
  ['wq length not a multiple of dModel', (a) => ({ ...a, wq: shorter(a.wq) }), /\bwq\b/],
  ['wq empty', (a) => ({ ...a, wq: new Float32Array(0) }), /\bwq\b/],
  ['wk rows ≠ wq rows', (a) => ({ ...a, wk: a.wk.slice(0, a.wk.length - 8) }), /\bwk\b/],
  ['wv length not a multiple of dModel', (a) => ({ ...a, wv: longer(a.wv) }), /\bwv\b/],
  ['bq wrong length', (a) => ({ ...a, bq: shorter(a.bq) }), /\bbq\b/],
  ['bk wrong length', (a) => ({ ...a, bk: longer(a.bk) }), /\bbk\b/],
  ['bv wrong length', (a) => ({ ...a, bv: shorter(a.bv) }), /\bbv\b/],
  ['attnMask (bool) wrong length', (a) => ({ ...a, attnMask: new Uint8Array(24) }), /\battnMask\b/],
  ['attnMask (float) wrong length', (a) => ({ ...a, attnMask: new Float32Array(26) }), /\battnMask\b/],
  ['attnMask batch-sized', (a) => ({ ...a, attnMask: new Uint8Array(50) }), /\battnMask\b/],
];

describe('selfAttention errors', () => {
  test.each(SA_TYPE_ERRORS)('TypeError: %s', (label, mutate, re) => {
    expectError(() => attn.selfAttention(mutate(copy(SA_OK))), TypeError, re, label);
    checkStillWorks(label);
  });
  test.each(SA_RANGE_ERRORS)('RangeError: %s', (label, mutate, re) => {
    expectError(() => attn.selfAttention(mutate(copy(SA_OK))), RangeError, re, label);
    checkStillWorks(label);
  });
  test('TypeError: no arguments / null arguments', () => {
    expectError(() => attn.selfAttention(), TypeError, /./, 'selfAttention()');
    expectError(() => attn.selfAttention(null), TypeError, /./, 'selfAttention(null)');
    checkStillWorks('no arguments');
  });
});

// --------------------------------------------------------------------- multiHeadAttention

const MHA_TYPE_ERRORS = [
  ['query is a string', (a) => ({ ...a, query: 'q' }), /\bquery\b/],
  ['query is an Int32Array', (a) => ({ ...a, query: new Int32Array(a.query.length) }), /\bquery\b/],
  ['query missing', (a) => without(a, 'query'), /\bquery\b/],
  ['key is a string', (a) => ({ ...a, key: 'k' }), /\bkey\b/],
  ['value is an Int8Array', (a) => ({ ...a, value: new Int8Array(a.value.length) }), /\bvalue\b/],
  ['embedDim missing', (a) => without(a, 'embedDim'), /\bembedDim\b/],
  ['embedDim is a string', (a) => ({ ...a, embedDim: '8' }), /\bembedDim\b/],
  ['numHeads is a string', (a) => ({ ...a, numHeads: '2' }), /\bnumHeads\b/],
  ['numHeads missing', (a) => without(a, 'numHeads'), /\bnumHeads\b/],
  ['batch is a boolean', (a) => ({ ...a, batch: true }), /\bbatch\b/],
  ['tgtLen is a string', (a) => ({ ...a, tgtLen: '4' }), /\btgtLen\b/],
  ['srcLen is a string', (a) => ({ ...a, srcLen: '5' }), /\bsrcLen\b/],
  ['outProjWeight missing', (a) => without(a, 'outProjWeight'), /\boutProjWeight\b/],
  ['outProjWeight is a string', (a) => ({ ...a, outProjWeight: 'w' }), /\boutProjWeight\b/],
  ['no in-projection weights at all', (a) => without(a, 'inProjWeight'), /\b(inProjWeight|qProjWeight)\b/],
  [
    'inProjWeight is an Int32Array',
    (a) => ({ ...a, inProjWeight: new Int32Array(a.inProjWeight.length) }),
    /\binProjWeight\b/,
  ],
  ['inProjBias is a string', (a) => ({ ...a, inProjBias: 'b' }), /\binProjBias\b/],
  ['outProjBias is an Int32Array', (a) => ({ ...a, outProjBias: new Int32Array(8) }), /\boutProjBias\b/],
  ['attnMask is a string', (a) => ({ ...a, attnMask: 'mask' }), /\battnMask\b/],
  ['attnMask is an Int32Array', (a) => ({ ...a, attnMask: new Int32Array(a.attnMask.length) }), /\battnMask\b/],
  ['keyPaddingMask is an Int32Array', (a) => ({ ...a, keyPaddingMask: new Int32Array(10) }), /\bkeyPaddingMask\b/],
  ['keyPaddingMask is a number', (a) => ({ ...a, keyPaddingMask: 1 }), /\bkeyPaddingMask\b/],
  ['isCausal is a string', (a) => ({ ...a, isCausal: 'true' }), /\bisCausal\b/],
  ['needWeights is a number', (a) => ({ ...a, needWeights: 0 }), /\bneedWeights\b/],
  ['averageAttnWeights is a string', (a) => ({ ...a, averageAttnWeights: 'no' }), /\baverageAttnWeights\b/],
  ['scale is a string', (a) => ({ ...a, scale: '1' }), /\bscale\b/],
];

const MHA_RANGE_ERRORS = [
  ['embedDim % numHeads ≠ 0', (a) => ({ ...a, numHeads: 3 }), /\b(numHeads|embedDim)\b/],
  ['embedDim 0', (a) => ({ ...a, embedDim: 0 }), /\bembedDim\b/],
  ['embedDim 8.5', (a) => ({ ...a, embedDim: 8.5 }), /\bembedDim\b/],
  ['numHeads 0', (a) => ({ ...a, numHeads: 0 }), /\bnumHeads\b/],
  ['numHeads -2', (a) => ({ ...a, numHeads: -2 }), /\bnumHeads\b/],
  ['numHeads 2.5', (a) => ({ ...a, numHeads: 2.5 }), /\bnumHeads\b/],
  ['batch 0', (a) => ({ ...a, batch: 0 }), /\bbatch\b/],
  ['batch 1.5', (a) => ({ ...a, batch: 1.5 }), /\bbatch\b/],
  ['query length not a multiple of batch·embedDim', (a) => ({ ...a, query: shorter(a.query) }), /\bquery\b/],
  ['key length not a multiple of batch·kdim', (a) => ({ ...a, key: longer(a.key) }), /\bkey\b/],
  ['value rows ≠ key rows', (a) => ({ ...a, value: a.value.slice(0, a.value.length - 16) }), /\bvalue\b/],
  ['tgtLen disagrees with query', (a) => ({ ...a, tgtLen: 3 }), /\b(tgtLen|query)\b/],
  ['srcLen disagrees with key', (a) => ({ ...a, srcLen: 4 }), /\b(srcLen|key)\b/],
  ['tgtLen 0', (a) => ({ ...a, tgtLen: 0 }), /\btgtLen\b/],
  ['srcLen -1', (a) => ({ ...a, srcLen: -1 }), /\bsrcLen\b/],
  ['inProjWeight wrong length', (a) => ({ ...a, inProjWeight: shorter(a.inProjWeight) }), /\binProjWeight\b/],
  [
    'inProjWeight [embedDim, embedDim] only',
    (a) => ({ ...a, inProjWeight: a.inProjWeight.slice(0, 64) }),
    /\binProjWeight\b/,
  ],
  ['inProjBias wrong length', (a) => ({ ...a, inProjBias: a.inProjBias.slice(0, 8) }), /\binProjBias\b/],
  ['outProjWeight wrong length', (a) => ({ ...a, outProjWeight: longer(a.outProjWeight) }), /\boutProjWeight\b/],
  ['outProjBias wrong length', (a) => ({ ...a, outProjBias: shorter(a.outProjBias) }), /\boutProjBias\b/],
  [
    'attnMask neither [L, S] nor [batch·numHeads, L, S]',
    (a) => ({ ...a, attnMask: longer(a.attnMask) }),
    /\battnMask\b/,
  ],
  ['attnMask of 60 elements (3 × [L, S])', (a) => ({ ...a, attnMask: new Float32Array(3 * 4 * 5) }), /\battnMask\b/],
  ['attnMask [batch, L, S] (heads missing)', (a) => ({ ...a, attnMask: new Uint8Array(2 * 4 * 5) }), /\battnMask\b/],
  ['keyPaddingMask wrong length', (a) => ({ ...a, keyPaddingMask: shorter(a.keyPaddingMask) }), /\bkeyPaddingMask\b/],
  ['keyPaddingMask [srcLen] for batch 2', (a) => ({ ...a, keyPaddingMask: new Uint8Array(5) }), /\bkeyPaddingMask\b/],
  ['float keyPaddingMask wrong length', (a) => ({ ...a, keyPaddingMask: new Float32Array(11) }), /\bkeyPaddingMask\b/],
];

const MHA_SEP_ERRORS = [
  ['qProjWeight wrong length', (a) => ({ ...a, qProjWeight: shorter(a.qProjWeight) }), RangeError, /\bqProjWeight\b/],
  [
    'kProjWeight [embedDim, embedDim] when kdim 5',
    (a) => ({ ...a, kProjWeight: new Float32Array(64) }),
    RangeError,
    /\bkProjWeight\b/,
  ],
  ['vProjWeight wrong length', (a) => ({ ...a, vProjWeight: longer(a.vProjWeight) }), RangeError, /\bvProjWeight\b/],
  ['kdim 0', (a) => ({ ...a, kdim: 0 }), RangeError, /\bkdim\b/],
  ['vdim 2.5', (a) => ({ ...a, vdim: 2.5 }), RangeError, /\bvdim\b/],
  ['kdim is a string', (a) => ({ ...a, kdim: '5' }), TypeError, /\bkdim\b/],
  ['key length disagrees with kdim', (a) => ({ ...a, kdim: 6 }), RangeError, /\b(key|kdim|kProjWeight)\b/],
  ['kProjWeight missing', (a) => without(a, 'kProjWeight'), TypeError, /\bkProjWeight\b/],
  ['vProjWeight is a string', (a) => ({ ...a, vProjWeight: 'v' }), TypeError, /\bvProjWeight\b/],
  // the contract requires separate weights when kdim ≠ embedDim; it fixes no class for this misuse
  [
    'inProjWeight with kdim ≠ embedDim',
    (a) => ({ ...without(a, 'qProjWeight', 'kProjWeight', 'vProjWeight'), inProjWeight: new Float32Array(3 * 64) }),
    [TypeError, RangeError],
    /\b(kdim|vdim|inProjWeight|qProjWeight|kProjWeight|vProjWeight)\b/,
  ],
];

describe('multiHeadAttention errors', () => {
  test.each(MHA_TYPE_ERRORS)('TypeError: %s', (label, mutate, re) => {
    expectError(() => attn.multiHeadAttention(mutate(copy(MHA_OK))), TypeError, re, label);
    checkStillWorks(label);
  });
  test.each(MHA_RANGE_ERRORS)('RangeError: %s', (label, mutate, re) => {
    expectError(() => attn.multiHeadAttention(mutate(copy(MHA_OK))), RangeError, re, label);
    checkStillWorks(label);
  });
  test.each(MHA_SEP_ERRORS)('separate projections: %s', (label, mutate, Cls, re) => {
    expectError(() => attn.multiHeadAttention(mutate(copy(MHA_SEP_OK))), Cls, re, label);
    checkStillWorks(label);
  });
  test('TypeError: no arguments', () => {
    expectError(() => attn.multiHeadAttention(), TypeError, /./, 'multiHeadAttention()');
    checkStillWorks('no arguments');
  });
});

// --------------------------------------------------------------------- too large for memory

describe('work too large for WebAssembly memory', () => {
  const TOO_LARGE = [
    [
      'selfAttention seqLen 200000 with weights (160 GB of weights)',
      () => {
        const L = 200000;
        return attn.selfAttention({
          x: new Float32Array(L),
          seqLen: L,
          dModel: 1,
          wq: new Float32Array([1]),
          wk: new Float32Array([1]),
          wv: new Float32Array([1]),
          needWeights: true,
        });
      },
    ],
    [
      'selfAttention batch 4 × seqLen 40000 with weights',
      () => {
        const L = 40000;
        return attn.selfAttention({
          x: new Float32Array(4 * L),
          seqLen: L,
          dModel: 1,
          batch: 4,
          wq: new Float32Array([1]),
          wk: new Float32Array([1]),
          wv: new Float32Array([1]),
        });
      },
    ],
    [
      'multiHeadAttention 40000 × 40000, 2 heads, per-head weights',
      () => {
        const L = 40000;
        return attn.multiHeadAttention({
          query: new Float32Array(L * 2),
          embedDim: 2,
          numHeads: 2,
          inProjWeight: new Float32Array(12),
          outProjWeight: new Float32Array(4),
          averageAttnWeights: false,
        });
      },
    ],
    [
      'multiHeadAttention cross 100000 → 100000 keys, averaged weights',
      () => {
        const L = 100000;
        return attn.multiHeadAttention({
          query: new Float32Array(L),
          key: new Float32Array(L),
          value: new Float32Array(L),
          embedDim: 1,
          numHeads: 1,
          inProjWeight: new Float32Array(3),
          outProjWeight: new Float32Array(1),
        });
      },
    ],
  ];

  test.each(TOO_LARGE)('RangeError that says so: %s', (label, call) => {
    const t0 = Date.now();
    const err = expectError(call, RangeError, /memory/i, label);
    const ms = Date.now() - t0;
    if (ms > 5000) throw new Error(`${label}: took ${ms} ms: the size must be checked before computing`);
    expect(err.message.length).toBeGreaterThan(10);
    checkStillWorks(label);
  });
});

// --------------------------------------------------------------------- no leaks on success

describe('successful calls do not leak', () => {
  test('heapInUse is back to the same after 20 calls of each kind', () => {
    const calls = [
      () => attn.selfAttention(SA_OK),
      () => attn.selfAttention({ ...SA_OK, needWeights: false, isCausal: true }),
      () => attn.multiHeadAttention(MHA_OK),
      () => attn.multiHeadAttention({ ...MHA_OK, averageAttnWeights: false, isCausal: true }),
      () => attn.multiHeadAttention({ ...MHA_OK, needWeights: false }),
      () => attn.multiHeadAttention(MHA_SEP_OK),
    ];
    calls.forEach((c) => c()); // warm-up: lazily created state may stay
    const before = heap();
    for (let i = 0; i < 20; i++) {
      calls.forEach((c, k) => {
        c();
        const now = heap();
        if (now !== before) throw new Error(`call kind ${k}, repetition ${i}: heapInUse ${now}, was ${before}`);
      });
    }
    expect(heap()).toBe(before);
  });

  test('memoryStats reports numbers', () => {
    const s = attn.memoryStats();
    expect(Number.isInteger(s.heapInUse)).toBe(true);
    expect(s.heapInUse).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(s.memoryBytes)).toBe(true);
    expect(s.memoryBytes).toBeGreaterThan(s.heapInUse);
  });
});

// --------------------------------------------------------------------- prepared layers

describe('prepared layer errors', () => {
  const pick = (a, keys) => Object.fromEntries(keys.filter((k) => k in a).map((k) => [k, a[k]]));
  const mhaParams = (a) => pick(a, MHA_V1_LAYER_ARGS);
  const mhaInputs = (a) => pick(a, MHA_V1_CALL_ARGS);
  const saParams = (a) => ({ dModel: a.dModel, wq: a.wq, wk: a.wk, wv: a.wv, bq: a.bq, bk: a.bk, bv: a.bv });
  const saInputs = (a) => ({ x: a.x, seqLen: a.seqLen, batch: a.batch, attnMask: a.attnMask });

  test.each([
    ['outProjWeight missing', (p) => without(p, 'outProjWeight'), TypeError, /\boutProjWeight\b/],
    ['embedDim % numHeads ≠ 0', (p) => ({ ...p, numHeads: 3 }), RangeError, /\b(numHeads|embedDim)\b/],
    [
      'inProjWeight wrong length',
      (p) => ({ ...p, inProjWeight: shorter(p.inProjWeight) }),
      RangeError,
      /\binProjWeight\b/,
    ],
    ['inProjBias is a string', (p) => ({ ...p, inProjBias: 'b' }), TypeError, /\binProjBias\b/],
    ['embedDim missing', (p) => without(p, 'embedDim'), TypeError, /\bembedDim\b/],
  ])('createMultiHeadAttention: %s', (label, mutate, Cls, re) => {
    expectError(() => attn.createMultiHeadAttention(mutate(mhaParams(MHA_OK))), Cls, re, label);
    checkStillWorks(label);
  });

  test.each([
    ['wq missing', (p) => without(p, 'wq'), TypeError, /\bwq\b/],
    ['wk rows ≠ wq rows', (p) => ({ ...p, wk: p.wk.slice(0, 8) }), RangeError, /\bwk\b/],
    ['dModel 0', (p) => ({ ...p, dModel: 0 }), RangeError, /\bdModel\b/],
    ['bv wrong length', (p) => ({ ...p, bv: shorter(p.bv) }), RangeError, /\bbv\b/],
  ])('createSelfAttention: %s', (label, mutate, Cls, re) => {
    expectError(() => attn.createSelfAttention(mutate(saParams(SA_OK))), Cls, re, label);
    checkStillWorks(label);
  });

  test('forward errors leave the layer working and the heap unchanged', () => {
    const layer = attn.createMultiHeadAttention(mhaParams(MHA_OK));
    const inputs = mhaInputs(MHA_OK);
    const want = ref.multiHeadAttention(MHA_OK);
    const cases = [
      ['query short', { ...inputs, query: shorter(inputs.query) }, RangeError, /\bquery\b/],
      ['query a string', { ...inputs, query: 'q' }, TypeError, /\bquery\b/],
      ['attnMask wrong shape', { ...inputs, attnMask: longer(inputs.attnMask) }, RangeError, /\battnMask\b/],
      ['keyPaddingMask Int32Array', { ...inputs, keyPaddingMask: new Int32Array(10) }, TypeError, /\bkeyPaddingMask\b/],
      ['isCausal a string', { ...inputs, isCausal: 'yes' }, TypeError, /\bisCausal\b/],
      ['batch 0', { ...inputs, batch: 0 }, RangeError, /\bbatch\b/],
    ];
    for (const [label, args, Cls, re] of cases) {
      expectError(() => layer.forward(args), Cls, re, `MHA layer.forward ${label}`);
      checkResult(layer.forward(inputs), want, mhaDims(MHA_OK), `MHA layer after ${label}`);
    }
    const sa = attn.createSelfAttention(saParams(SA_OK));
    const saIn = saInputs(SA_OK);
    const saWant = ref.selfAttention(SA_OK);
    const saCases = [
      ['x short', { ...saIn, x: shorter(saIn.x) }, RangeError, /\bx\b/],
      ['x an Int32Array', { ...saIn, x: new Int32Array(saIn.x.length) }, TypeError, /\bx\b/],
      ['seqLen 2.5', { ...saIn, seqLen: 2.5 }, RangeError, /\bseqLen\b/],
      ['attnMask wrong length', { ...saIn, attnMask: new Uint8Array(7) }, RangeError, /\battnMask\b/],
    ];
    for (const [label, args, Cls, re] of saCases) {
      expectError(() => sa.forward(args), Cls, re, `SA layer.forward ${label}`);
      checkResult(sa.forward(saIn), saWant, saDims(SA_OK), `SA layer after ${label}`);
    }
    layer.dispose();
    sa.dispose();
  });

  test('too large work through a prepared layer is a RangeError that says so', () => {
    const layer = attn.createMultiHeadAttention({
      embedDim: 2,
      numHeads: 2,
      inProjWeight: new Float32Array(12),
      outProjWeight: new Float32Array(4),
    });
    const L = 40000;
    const t0 = Date.now();
    expectError(
      () => layer.forward({ query: new Float32Array(L * 2), averageAttnWeights: false }),
      RangeError,
      /memory/i,
      'layer.forward 40000 × 40000',
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    layer.dispose();
    checkStillWorks('prepared too large');
  });

  test('forward after dispose throws an Error saying the layer was disposed', () => {
    const layer = attn.createMultiHeadAttention(mhaParams(MHA_OK));
    layer.dispose();
    expectError(() => layer.forward(mhaInputs(MHA_OK)), Error, /disposed/i, 'MHA forward after dispose');
    const sa = attn.createSelfAttention(saParams(SA_OK));
    sa.dispose();
    expectError(() => sa.forward(saInputs(SA_OK)), Error, /disposed/i, 'SA forward after dispose');
    checkStillWorks('after dispose');
  });
});
