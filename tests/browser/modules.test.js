// The page's small modules (web/*.js), imported as the browser imports them, in Chromium.
// Each module's export list is pinned, so a module stays focused (as d3's modules do).
const { blankPageSession, runInPage, firstMismatch } = require('./harness');
const { createAttention } = require('wasm-attention');

const MODULE_PATHS = {
  dom: 'shared/dom',
  colormap: 'shared/colormap',
  tokenize: 'textbook/tokenize',
  random: 'shared/random',
  'package-entry': 'shared/package-entry',
  embeddings: 'textbook/embeddings',
  'projection-weights': 'textbook/projection-weights',
  canvas: 'shared/canvas',
  strip: 'shared/strip',
  bars: 'shared/bars',
  steps: 'shared/steps',
  'number-format': 'shared/number-format',
  'value-strip': 'shared/value-strip',
  'step-parts': 'shared/step-parts',
  'export-files': 'shared/export-files',
  engine: 'shared/engine',
  'worker-protocol': 'shared/worker-protocol',
};
const NAMES = Object.keys(MODULE_PATHS);
const MODULE_URLS = Object.fromEntries(NAMES.map((n) => [n, `/web/${MODULE_PATHS[n]}.js`]));
// The bars' colours come from the public viz entry, tested here next to the page's diverging scale.
const WITH_VIZ = { ...MODULE_URLS, viz: '/viz/index.mjs' };

let session;
let page;
let problems;

/** Runs fn(modules) in the page, with every web module imported; returns its (JSON) result. */
const inPage = (fn, arg) => runInPage(page, MODULE_URLS, fn, arg);

// A same-origin document without the page's script: the modules are tested alone.
beforeAll(async () => {
  session = await blankPageSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

test('each module exports exactly its documented names', async () => {
  const exports = await inPage((m) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Object.keys(v).sort()])),
  );
  expect(exports).toEqual({
    dom: ['el'],
    colormap: ['diverging'],
    tokenize: ['MODES', 'tokenize'],
    random: ['gaussian', 'hashString', 'mulberry32', 'rngFor'],
    'package-entry': ['SUPPORTED_MODEL_TYPES', 'isKeyMasked', 'mulberry32'],
    embeddings: ['embed', 'positionalEncoding', 'tokenVector'],
    'projection-weights': [
      'MATCH_LOGIT',
      'PRESETS',
      'identityGain',
      'multiHeadWeights',
      'scaledIdentity',
      'selfAttentionWeights',
      'xavierUniform',
    ],
    canvas: ['FONT_FAMILY', 'prepareCanvas'],
    strip: ['drawStrip', 'stripCellAt'],
    bars: ['drawBars'],
    steps: ['formatNumber', 'renderSteps'],
    'number-format': ['formatNumber'],
    'value-strip': ['valueStrip'],
    'step-parts': ['StepParts', 'numberRow'],
    'export-files': ['buildExport', 'composePNG', 'download', 'downloadJSON', 'downloadPNG', 'toRows'],
    engine: ['startEngine'],
    'worker-protocol': ['MESSAGE', 'UNAVAILABLE', 'errorData', 'reviveError', 'thrownData', 'transferList'],
  });
});

test('weight colours (viz weightRGB): viridis ends, clamping, rising lightness, √ scale; the diverging scale is white at 0', async () => {
  const r = await runInPage(page, WITH_VIZ, ({ viz: { weightRGB }, colormap: { diverging } }) => {
    const lum = ([R, G, B]) => 0.2126 * R + 0.7152 * G + 0.0722 * B;
    const l = Array.from({ length: 65 }, (_, k) => lum(weightRGB(k / 64)));
    return {
      zero: weightRGB(0),
      one: weightRGB(1),
      quarter: weightRGB(0.25), // √0.25: the middle of viridis
      below: weightRGB(-3),
      above: weightRGB(7),
      nan: weightRGB(NaN),
      rising: l.every((v, k) => k === 0 || v > l[k - 1]),
      d0: diverging(0),
      dneg: diverging(-1),
      dpos: diverging(1),
      dclamp: diverging(-9),
    };
  });
  expect(r.zero).toEqual([0x44, 0x01, 0x54]);
  expect(r.one).toEqual([0xfd, 0xe7, 0x25]);
  for (let c = 0; c < 3; c++) expect(Math.abs(r.quarter[c] - [0x21, 0x91, 0x8c][c])).toBeLessThanOrEqual(2);
  expect(r.below).toEqual(r.zero);
  expect(r.above).toEqual(r.one);
  expect(r.nan).toEqual(r.zero);
  expect(r.rising).toBe(true);
  expect(r.d0).toEqual([0xf7, 0xf7, 0xf7]);
  expect(r.dneg).toEqual([0x05, 0x30, 0x61]);
  expect(r.dpos).toEqual([0x67, 0x00, 0x1f]);
  expect(r.dclamp).toEqual(r.dneg);
});

test('package-entry: the page’s helpers are the package entry’s own functions', async () => {
  const urls = { ...MODULE_URLS, dist: '/dist/index.mjs' };
  const r = await runInPage(page, urls, ({ dist, random, 'package-entry': entry }) => ({
    masked: entry.isKeyMasked === dist.isKeyMasked,
    generator: entry.mulberry32 === dist.mulberry32 && random.mulberry32 === dist.mulberry32,
    modelTypes: entry.SUPPORTED_MODEL_TYPES === dist.SUPPORTED_MODEL_TYPES,
  }));
  expect(r).toEqual({ masked: true, generator: true, modelTypes: true });
});

test('tokenize: one token per character without whitespace, or words and punctuation', async () => {
  const r = await inPage(({ tokenize: { tokenize } }) => {
    let error = null;
    try {
      tokenize('x', 'bytes');
    } catch (e) {
      error = e.name;
    }
    return {
      seed: tokenize('我愛AI'),
      spaced: tokenize(' 我 愛\tA I\n', 'char'),
      emoji: tokenize('a👨‍👩‍👧b'),
      words: tokenize('The cat, the  hat.', 'word'),
      cjkWords: tokenize('我愛AI', 'word'),
      empty: tokenize('   '),
      error,
    };
  });
  expect(r.seed).toEqual(['我', '愛', 'A', 'I']);
  expect(r.spaced).toEqual(['我', '愛', 'A', 'I']);
  expect(r.emoji).toEqual(['a', '👨‍👩‍👧', 'b']);
  expect(r.words).toEqual(['The', 'cat', ',', 'the', 'hat', '.']);
  expect(r.cjkWords.join('')).toBe('我愛AI');
  expect(r.cjkWords).toContain('AI');
  expect(r.empty).toEqual([]);
  expect(r.error).toBe('RangeError');
});

test('embeddings: a fixed vector per token plus sinusoidal positions', async () => {
  const r = await inPage(({ embeddings: { embed, positionalEncoding, tokenVector } }) => {
    const d = 6;
    const pe = positionalEncoding(3, d);
    const x = embed(['我', 'A', '我'], d);
    const v = tokenVector('我', d);
    const again = tokenVector('我', d);
    const other = tokenVector('愛', d);
    const minusPe = (pos) => Array.from({ length: d }, (_, i) => x[pos * d + i] - pe[pos * d + i]);
    return {
      pe0: Array.from(pe.subarray(0, d)),
      pe1: Array.from(pe.subarray(d, 2 * d)),
      tok0: minusPe(0),
      tok2: minusPe(2),
      v: Array.from(v),
      same: Array.from(again).every((a, i) => a === v[i]),
      differs: Array.from(other).some((a, i) => a !== v[i]),
      odd: Array.from(positionalEncoding(2, 3)),
      len: x.length,
      mean: (() => {
        const big = tokenVector('mean', 4096);
        return big.reduce((a, b) => a + b, 0) / big.length;
      })(),
      sd: (() => {
        const big = tokenVector('sd', 4096);
        return Math.sqrt(big.reduce((a, b) => a + b * b, 0) / big.length);
      })(),
    };
  });
  expect(r.pe0).toEqual([0, 1, 0, 1, 0, 1]);
  const f = (i) => 1 / Math.pow(10000, i / 6);
  const want1 = [Math.sin(f(0)), Math.cos(f(0)), Math.sin(f(2)), Math.cos(f(2)), Math.sin(f(4)), Math.cos(f(4))];
  r.pe1.forEach((v, i) => expect(v).toBeCloseTo(want1[i], 6));
  r.tok0.forEach((v, i) => expect(v).toBeCloseTo(r.v[i], 5));
  r.tok2.forEach((v, i) => expect(v).toBeCloseTo(r.v[i], 5));
  expect(r.same).toBe(true);
  expect(r.differs).toBe(true);
  expect(r.odd).toHaveLength(6);
  expect(r.odd[2]).toBe(0); // sin(0) at pos 0, dim 2 (no cos partner)
  expect(r.len).toBe(18);
  expect(Math.abs(r.mean)).toBeLessThan(0.06);
  expect(Math.abs(r.sd - 1)).toBeLessThan(0.06);
});

test('projection-weights: seeded Xavier-uniform, and the identity-like Q/K preset', async () => {
  const r = await inPage(({ 'projection-weights': w }) => {
    const a = w.selfAttentionWeights({ dModel: 8, seed: 3 });
    const b = w.selfAttentionWeights({ dModel: 8, seed: 3 });
    const c = w.selfAttentionWeights({ dModel: 8, seed: 4 });
    const id = w.selfAttentionWeights({ dModel: 16, seed: 3, preset: 'identity' });
    const mha = w.multiHeadWeights({ embedDim: 8, numHeads: 2, seed: 3, preset: 'identity' });
    const mhaRandom = w.multiHeadWeights({ embedDim: 8, numHeads: 2, seed: 3 });
    const mhaRandom4 = w.multiHeadWeights({ embedDim: 8, numHeads: 4, seed: 3 });
    const bound = Math.sqrt(6 / 16);
    let error = null;
    try {
      w.selfAttentionWeights({ dModel: 4, seed: 1, preset: 'nope' });
    } catch (e) {
      error = e.name;
    }
    const E = 8;
    const block = (m, k) => Array.from(m.subarray(k * E * E, (k + 1) * E * E));
    const isDiag = (m, n, g) => m.every((v, i) => (Math.floor(i / n) === i % n ? Math.abs(v - g) < 1e-6 : v === 0));
    return {
      inBound: [a.wq, a.wk, a.wv].every((m) => m.every((v) => Math.abs(v) <= bound)),
      spread: Math.max(...a.wq) > bound / 2 && Math.min(...a.wq) < -bound / 2,
      sameSeed: Array.from(a.wq).every((v, i) => v === b.wq[i]),
      otherSeed: Array.from(a.wq).some((v, i) => v !== c.wq[i]),
      streamsDiffer: Array.from(a.wq).some((v, i) => v !== a.wk[i]),
      idQ: isDiag(Array.from(id.wq), 16, w.identityGain(16)),
      idK: isDiag(Array.from(id.wk), 16, w.identityGain(16)),
      idV: Array.from(id.wv).some((v) => v !== 0),
      mhaQ: isDiag(block(mha.inProjWeight, 0), E, w.identityGain(4)),
      mhaK: isDiag(block(mha.inProjWeight, 1), E, w.identityGain(4)),
      mhaV: block(mha.inProjWeight, 2).some((v) => v !== 0),
      headsIrrelevantWhenRandom: Array.from(mhaRandom.inProjWeight).every((v, i) => v === mhaRandom4.inProjWeight[i]),
      shapes: [mha.inProjWeight.length, mha.outProjWeight.length],
      gainCheck: (w.identityGain(64) ** 2 * 64) / Math.sqrt(64),
      match: w.MATCH_LOGIT,
      presets: w.PRESETS,
      error,
    };
  });
  expect(r).toMatchObject({
    inBound: true,
    spread: true,
    sameSeed: true,
    otherSeed: true,
    streamsDiffer: true,
    idQ: true,
    idK: true,
    idV: true,
    mhaQ: true,
    mhaK: true,
    mhaV: true,
    headsIrrelevantWhenRandom: true,
    shapes: [3 * 64, 64],
    presets: ['random', 'identity'],
    error: 'RangeError',
  });
  expect(r.gainCheck).toBeCloseTo(r.match, 10);
});

test('strip: colours each cell by its value, labels its rows, draws a cursor, and maps points to cells', async () => {
  const r = await inPage(({ strip: { drawStrip, stripCellAt }, colormap: { diverging } }) => {
    const canvas = document.createElement('canvas');
    document.body.append(canvas);
    const colour = (v) => diverging(v);
    const layout = drawStrip(canvas, {
      values: [0, 1, -0.5, -1],
      rows: 2,
      cols: 2,
      rowLabels: ['我', '愛'],
      colour,
      cellWidth: 30,
      cellHeight: 30,
      cursor: { i: 1, j: 1 },
    });
    const dpr = window.devicePixelRatio || 1;
    // One readback of the whole canvas (several would earn Chromium's willReadFrequently warning).
    const { data, width } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const pixel = (i, j, dx = 15, dy = 15) => {
      const at =
        4 * (Math.round((layout.y0 + i * 30 + dy) * dpr) * width + Math.round((layout.x0 + j * 30 + dx) * dpr));
      return Array.from(data.slice(at, at + 3));
    };
    return {
      layout,
      stored: JSON.parse(canvas.dataset.layout),
      c00: pixel(0, 0),
      c01: pixel(0, 1),
      c10: pixel(1, 0),
      cursorEdge: pixel(1, 1, 0.6, 15),
      want00: colour(0),
      want01: colour(1),
      want10: colour(-0.5),
      hits: [
        stripCellAt(layout, layout.x0 + 1, layout.y0 + 1),
        stripCellAt(layout, layout.x0 + 59, layout.y0 + 59),
        stripCellAt(layout, layout.x0 - 3, layout.y0 + 45),
        stripCellAt(layout, layout.x0 + 61, layout.y0 + 5),
        stripCellAt(layout, layout.x0 + 5, layout.y0 - 2),
      ],
    };
  });
  expect(r.stored).toEqual(r.layout);
  expect(r.layout).toMatchObject({ rows: 2, cols: 2, cellWidth: 30, cellHeight: 30, y0: 0 });
  expect(r.layout.x0).toBeGreaterThan(0); // room for the row labels
  expect(r.c00).toEqual(r.want00);
  expect(r.c01).toEqual(r.want01);
  expect(r.c10).toEqual(r.want10);
  expect(Math.max(...r.cursorEdge)).toBeLessThan(60); // the cursor's dark frame
  expect(r.hits).toEqual([{ i: 0, j: 0 }, { i: 1, j: 1 }, null, null, null]);
});

test('export-files: rows of the shown matrices in a JSON document', async () => {
  const doc = await inPage(({ 'export-files': { buildExport } }) =>
    buildExport({
      tokens: ['a', 'b'],
      settings: { dModel: 4, numHeads: 2 },
      engine: { version: 'x', simd: true, threads: 1 },
      selfWeights: new Float32Array([1, 0, 0.5, 0.5]),
      headWeights: new Float32Array([1, 0, 0.25, 0.75, 1, 0, 0.75, 0.25]),
      averageWeights: new Float32Array([1, 0, 0.5, 0.5]),
      numHeads: 2,
    }),
  );
  expect(doc.tokens).toEqual(['a', 'b']);
  expect(doc.selfAttention.weights).toEqual([
    [1, 0],
    [0.5, 0.5],
  ]);
  expect(doc.multiHeadAttention.heads).toEqual([
    [
      [1, 0],
      [0.25, 0.75],
    ],
    [
      [1, 0],
      [0.75, 0.25],
    ],
  ]);
  expect(doc.multiHeadAttention.average).toEqual([
    [1, 0],
    [0.5, 0.5],
  ]);
});

test('steps: numbers are printed with a real minus sign and infinities', async () => {
  const r = await inPage(({ steps: { formatNumber } }) => [
    formatNumber(-1.23456),
    formatNumber(-Infinity),
    formatNumber(0.5, 2),
    formatNumber(NaN),
  ]);
  expect(r).toEqual(['−1.235', '−∞', '0.50', 'NaN']);
});

test('worker-protocol: errors come back from the worker as their own class, with their message', async () => {
  const r = await inPage(({ 'worker-protocol': { reviveError } }) =>
    [
      ['RangeError', 'x'],
      ['TypeError', 'y'],
      ['RuntimeError', 'z'],
      ['BindingError', 'w'],
      ['constructor', 'v'],
    ].map(([name, message]) => {
      const e = reviveError({ name, message });
      return {
        name: e.name,
        message: e.message,
        text: String(e),
        error: e instanceof Error,
        range: e instanceof RangeError,
        wasm: e instanceof WebAssembly.RuntimeError,
      };
    }),
  );
  expect(r).toEqual([
    { name: 'RangeError', message: 'x', text: 'RangeError: x', error: true, range: true, wasm: false },
    { name: 'TypeError', message: 'y', text: 'TypeError: y', error: true, range: false, wasm: false },
    { name: 'RuntimeError', message: 'z', text: 'RuntimeError: z', error: true, range: false, wasm: true },
    { name: 'BindingError', message: 'w', text: 'BindingError: w', error: true, range: false, wasm: false },
    { name: 'constructor', message: 'v', text: 'constructor: v', error: true, range: false, wasm: false },
  ]);
});

test('engine: a worker runs groups of calls, stops a group at its first error, transfers results', async () => {
  const r = await inPage(async ({ engine: { startEngine } }) => {
    const engine = await startEngine({ threads: 'auto' });
    const x = Float32Array.from({ length: 3 * 4 }, (_, k) => Math.sin(k + 1));
    const w = Float32Array.from({ length: 4 * 4 }, (_, k) => Math.cos(k * 0.7));
    const self = { x, seqLen: 3, dModel: 4, wq: w, wk: w, wv: w, needWeights: true };
    const bad = { query: x, embedDim: 4, numHeads: 3, inProjWeight: new Float32Array(3 * 16), outProjWeight: w };
    const reply = await engine.run([
      { label: 'one', calls: [{ key: 'a', method: 'selfAttention', args: self }] },
      {
        label: 'two',
        calls: [
          { key: 'b', method: 'selfAttention', args: self },
          { key: 'c', method: 'multiHeadAttention', args: bad },
          { key: 'd', method: 'selfAttention', args: self },
        ],
      },
      { label: 'three', calls: [{ key: 'e', method: 'eval', args: 'alert(1)' }] },
    ]);
    engine.terminate();
    const after = await engine.run([]).then(
      () => 'resolved',
      (e) => e.message,
    );
    return {
      info: engine.info,
      isolated: crossOriginIsolated,
      cores: navigator.hardwareConcurrency,
      keys: Object.keys(reply.results).sort(),
      a: {
        weights: Array.from(reply.results.a.weights),
        type: reply.results.a.weights.constructor.name,
        shared: reply.results.a.weights.buffer instanceof SharedArrayBuffer,
      },
      nulls: ['b', 'c', 'd', 'e'].map((k) => reply.results[k]),
      errors: reply.errors.map(({ label, error }) => ({
        label,
        text: String(error),
        range: error instanceof RangeError,
        type: error instanceof TypeError,
      })),
      engineMs: reply.engineMs,
      after,
      args: { x: Array.from(x), w: Array.from(w) },
    };
  });
  expect(r.isolated).toBe(true);
  expect(r.info.threads).toBe(Math.min(r.cores, 8));
  expect(r.keys).toEqual(['a', 'b', 'c', 'd', 'e']);
  expect(r.a.type).toBe('Float32Array');
  expect(r.a.shared).toBe(false);
  const attn = await createAttention({ threads: 1 });
  const x = Float32Array.from(r.args.x);
  const w = Float32Array.from(r.args.w);
  const want = attn.selfAttention({ x, seqLen: 3, dModel: 4, wq: w, wk: w, wv: w, needWeights: true }).weights;
  expect(firstMismatch(r.a.weights, Array.from(want), 1e-6)).toBeNull();
  expect(r.nulls).toEqual([null, null, null, null]);
  expect(r.errors).toHaveLength(2);
  expect(r.errors[0]).toMatchObject({ label: 'two', range: true });
  expect(r.errors[0].text).toMatch(/^RangeError: multiHeadAttention: .*numHeads = 3/);
  expect(r.errors[1]).toEqual({
    label: 'three',
    text: 'TypeError: engine worker: unknown method eval',
    range: false,
    type: true,
  });
  expect(r.engineMs).toBeGreaterThan(0);
  expect(r.after).toBe('the engine worker was terminated');
});

test('no console errors or warnings while the modules ran', () => {
  expect(problems).toEqual([]);
});
