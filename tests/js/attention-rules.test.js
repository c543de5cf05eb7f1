'use strict';
// kvHeadOf and isKeyMasked (lib/attention/attention-rules.mjs): their answers, every package entry exporting
// them, and the engine agreeing with both on a windowed, causal, grouped-query call.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createAttention, isKeyMasked, kvHeadOf } = require('wasm-attention');
const { typeCheck } = require('./type-check');

const ROOT = path.join(__dirname, '..', '..');

test('kvHeadOf: consecutive query heads share a K/V head', () => {
  expect([0, 1, 2, 3, 4, 5, 6, 7].map((h) => kvHeadOf(h, 8, 2))).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
  expect([0, 1, 2, 3, 4, 5].map((h) => kvHeadOf(h, 6, 3))).toEqual([0, 0, 1, 1, 2, 2]);
  expect([0, 1, 2, 3].map((h) => kvHeadOf(h, 4, 4))).toEqual([0, 1, 2, 3]);
  expect([0, 1, 2, 3].map((h) => kvHeadOf(h, 4, 1))).toEqual([0, 0, 0, 0]);
});

test('isKeyMasked: causality and the window from the query’s absolute position', () => {
  const grid = (rule, rows, cols) =>
    Array.from({ length: rows }, (_, i) =>
      Array.from({ length: cols }, (_, j) => (isKeyMasked(rule, i, j) ? 'x' : '.')).join(''),
    );
  expect(grid({}, 2, 3)).toEqual(['...', '...']);
  expect(grid({ isCausal: true }, 3, 3)).toEqual(['.xx', '..x', '...']);
  expect(grid({ slidingWindow: 2 }, 3, 4)).toEqual(['....', '....', 'x...']);
  expect(grid({ isCausal: true, slidingWindow: 2 }, 4, 4)).toEqual(['.xxx', '..xx', 'x..x', 'xx..']);
  // Two rows after 3 cached tokens: positions 3 and 4.
  expect(grid({ isCausal: true, slidingWindow: 3, positionOffset: 3 }, 2, 5)).toEqual(['x...x', 'xx...']);
});

test('every entry exports the same two rules (browser ESM, Node import, require)', () => {
  const script = `
    const entries = await Promise.all([import(${JSON.stringify(path.join(ROOT, 'dist', 'index.mjs'))}),
      import(${JSON.stringify(path.join(ROOT, 'dist', 'node.mjs'))})]);
    console.log(JSON.stringify(entries.map((m) => [typeof m.kvHeadOf, m.kvHeadOf(5, 8, 2), m.isKeyMasked({ isCausal: true }, 0, 1)])));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`node exited ${r.status}:\n${r.stderr}`);
  expect(JSON.parse(r.stdout)).toEqual([
    ['function', 1, true],
    ['function', 1, true],
  ]);
  expect([kvHeadOf(5, 8, 2), isKeyMasked({ isCausal: true }, 0, 1)]).toEqual([1, true]);
});

test('the declarations type both, and refuse misuse', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-rules-'));
  try {
    const file = path.join(dir, 'rules.mts');
    fs.writeFileSync(
      file,
      `import { isKeyMasked, kvHeadOf } from ${JSON.stringify(path.join(ROOT, 'dist', 'index.mjs'))};
      import type { MaskRule } from ${JSON.stringify(path.join(ROOT, 'dist', 'index.mjs'))};
      const rule: MaskRule = { isCausal: true, slidingWindow: 4, positionOffset: 2 };
      export const masked: boolean = isKeyMasked(rule, 0, 1) || isKeyMasked({}, 1, 0);
      export const kv: number = kvHeadOf(3, 8, 2);
      // @ts-expect-error isCausal is a boolean
      isKeyMasked({ isCausal: 'yes' }, 0, 1);
      // @ts-expect-error the head counts are numbers
      kvHeadOf(3, '8', 2);`,
    );
    expect(typeCheck(file).problems).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('the engine agrees', () => {
  let attn;
  beforeAll(async () => {
    attn = await createAttention({ threads: 1 });
  });
  afterAll(() => attn?.dispose());

  // 6 query heads over 3 K/V heads, 4 new tokens after 5 cached ones, causal with a window of 3.
  const numHeads = 6,
    numKvHeads = 3,
    headDim = 2,
    embedDim = numHeads * headDim,
    tgtLen = 4,
    srcLen = 9;
  const rule = { isCausal: true, slidingWindow: 3, positionOffset: srcLen - tgtLen };
  let seed = 7;
  const random = (n) =>
    Float32Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
  // V is its bias alone, one constant per K/V head, and the output projection is the identity on the
  // heads' outputs: query head h's output is the constant of the K/V head it reads.
  const kvConstant = (g) => 10 * (g + 1);
  const args = {
    embedDim,
    numHeads,
    numKvHeads,
    headDim,
    slidingWindow: rule.slidingWindow,
    qProjWeight: random(numHeads * headDim * embedDim),
    kProjWeight: random(numKvHeads * headDim * embedDim),
    vProjWeight: new Float32Array(numKvHeads * headDim * embedDim),
    vProjBias: Float32Array.from({ length: numKvHeads * headDim }, (_, k) => kvConstant(Math.floor(k / headDim))),
    outProjWeight: Float32Array.from({ length: embedDim * numHeads * headDim }, (_, k) =>
      k % (numHeads * headDim + 1) === 0 ? 1 : 0,
    ),
    query: random(tgtLen * embedDim),
    key: random(srcLen * embedDim),
    value: random(srcLen * embedDim),
    tgtLen,
    srcLen,
    isCausal: rule.isCausal,
    positionOffset: rule.positionOffset,
    needWeights: true,
    averageAttnWeights: false,
  };

  test('weights are 0 exactly where isKeyMasked says so', () => {
    const { weights } = attn.multiHeadAttention(args);
    const wrong = [];
    for (let h = 0; h < numHeads; h++) {
      for (let i = 0; i < tgtLen; i++) {
        for (let j = 0; j < srcLen; j++) {
          const w = weights[(h * tgtLen + i) * srcLen + j];
          if ((w === 0) !== isKeyMasked(rule, i, j)) wrong.push(`head ${h}, query ${i}, key ${j}: weight ${w}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  test('query head h reads K/V head kvHeadOf(h)', () => {
    const { output } = attn.multiHeadAttention({ ...args, needWeights: false });
    for (let i = 0; i < tgtLen; i++) {
      for (let h = 0; h < numHeads; h++) {
        const got = output[i * embedDim + h * headDim];
        expect([i, h, got]).toEqual([i, h, expect.closeTo(kvConstant(kvHeadOf(h, numHeads, numKvHeads)), 4)]);
      }
    }
  });
});
