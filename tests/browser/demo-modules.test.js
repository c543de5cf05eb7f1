// The demo page's module graph and its small pure modules (every .js file under web/), in Chromium.
// Each module has one job: the graph has no cycles, nothing imports main.js, and only
// main.js reaches the engine (engine.js); drawing modules never do.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, blankPageSession, runInPage } = require('./harness');

const WEB = path.join(ROOT, 'web');

/** Every .js file under web/ (paths from web/) → the web modules each imports (static `import … from '…/x.js'`). */
function importGraph() {
  const graph = {};
  const files = fs.readdirSync(WEB, { recursive: true }).filter((f) => f.endsWith('.js'));
  for (const file of files.map((f) => f.split(path.sep).join('/'))) {
    const src = fs.readFileSync(path.join(WEB, file), 'utf8');
    graph[file] = Array.from(src.matchAll(/^import\s[^;]*?from\s+'(\.\.?\/[\w./-]+\.js)';/gm), (m) =>
      path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1])),
    ).filter((target) => !target.startsWith('..'));
  }
  return graph;
}

/** Every module reachable from `start` (itself excluded). */
function reachable(graph, start) {
  const seen = new Set();
  const stack = [...(graph[start] ?? [])];
  while (stack.length) {
    const m = stack.pop();
    if (seen.has(m)) continue;
    seen.add(m);
    stack.push(...(graph[m] ?? []));
  }
  return seen;
}

test('web modules: no import cycles, nothing imports main.js, only main.js reaches the engine', () => {
  const graph = importGraph();
  expect(Object.keys(graph)).toContain('main.js');
  for (const file of Object.keys(graph)) {
    expect([file, reachable(graph, file).has(file)]).toEqual([file, false]);
    expect([file, graph[file].includes('main.js')]).toEqual([file, false]);
    if (file !== 'main.js') expect([file, reachable(graph, file).has('shared/engine.js')]).toEqual([file, false]);
  }
  // The drawing modules know nothing of attention data, selection or the engine.
  for (const file of [
    'shared/canvas.js',
    'shared/strip.js',
    'shared/bars.js',
    'shared/colormap.js',
    'shared/steps.js',
  ]) {
    const r = reachable(graph, file);
    for (const banned of [
      'shared/engine.js',
      'textbook/requests.js',
      'textbook/run.js',
      'textbook/selection.js',
      'textbook/settings.js',
      'poem/run.js',
      'poem/poem.js',
      'textbook/textbook.js',
    ]) {
      expect([file, banned, r.has(banned)]).toEqual([file, banned, false]);
    }
  }
  // The model's views draw a run's data, nothing of the engine, the controller or the textbook.
  for (const file of ['poem/model-view.js', 'poem/view.js']) {
    const r = reachable(graph, file);
    for (const banned of [
      'shared/engine.js',
      'poem/poem.js',
      'poem/controls.js',
      'poem/settings.js',
      'textbook/run.js',
      'textbook/settings.js',
      'textbook/requests.js',
      'poem/generation.js',
      'poem/handlers.js',
      'textbook/textbook.js',
    ]) {
      expect([file, banned, r.has(banned)]).toEqual([file, banned, false]);
    }
  }
  // The textbook gets the engine's client from main.js, and the engine serves only the textbook;
  // the poem tab runs its model in a model worker of its own, the one "Open a model" starts (its
  // runner and the runner's paced extension are the worker's alone). Both protocols import nothing.
  expect(graph['main.js']).toEqual(
    expect.arrayContaining(['poem/poem.js', 'textbook/textbook.js', 'tabs.js', 'shared/engine.js']),
  );
  expect(graph['shared/engine-worker.js']).toEqual(['shared/worker-protocol.js']);
  expect(graph['shared/worker-protocol.js']).toEqual([]);
  expect(graph['open-model/protocol.js']).toEqual([]);
  expect(graph['poem/loading.js']).toContain('open-model/client.js');
  expect(graph['poem/worker.js']).toBeUndefined();
  const workerSide = ['open-model/worker.js', 'open-model/runner.js', 'open-model/paced.js'];
  for (const file of Object.keys(graph)) {
    if (file !== 'shared/engine-worker.js')
      expect([file, reachable(graph, file).has('shared/engine-worker.js')]).toEqual([file, false]);
    for (const inWorker of workerSide)
      if (!workerSide.includes(file))
        expect([file, inWorker, reachable(graph, file).has(inWorker)]).toEqual([file, inWorker, false]);
  }
});

let session;
let page;
let problems;
const MODULE_PATHS = {
  settings: 'textbook/settings',
  selection: 'textbook/selection',
  'textbook-run': 'textbook/run',
  requests: 'textbook/requests',
  status: 'shared/status',
  serialize: 'shared/serialize',
  inputs: 'textbook/inputs',
  views: 'textbook/views',
  heatmaps: 'textbook/heatmaps',
  'self-view': 'textbook/self-view',
  'heads-view': 'textbook/heads-view',
  'query-view': 'textbook/query-view',
  'token-chips': 'textbook/token-chips',
  captions: 'textbook/captions',
  'section-width': 'textbook/section-width',
  'demo-api': 'textbook/demo-api',
  'textbook-handlers': 'textbook/handlers',
  controls: 'textbook/controls',
  'textbook-export': 'textbook/export',
  tabs: 'tabs',
  poem: 'poem/poem',
  'poem-run': 'poem/run',
  'poem-settings': 'poem/settings',
  'poem-view': 'poem/view',
  'poem-controls': 'poem/controls',
  'model-view': 'poem/model-view',
  textbook: 'textbook/textbook',
  'poem-generation': 'poem/generation',
  'poem-handlers': 'poem/handlers',
  'poem-loading': 'poem/loading',
  'poem-focus': 'poem/focus',
  'poem-heads': 'poem/heads',
  'poem-recited': 'poem/recited',
  'poem-tour': 'poem/tour',
  'poem-export': 'poem/export',
  'poem-state': 'poem/state',
  'poem-test-hooks': 'poem/test-hooks',
  'poem-chips': 'poem/chips',
  'poem-extras': 'poem/extras',
  'poem-drawing': 'poem/drawing',
  'poem-head-steps-view': 'poem/head-steps-view',
};
const NAMES = Object.keys(MODULE_PATHS);
const inPage = (fn, arg) =>
  runInPage(page, Object.fromEntries(NAMES.map((n) => [n, `/web/${MODULE_PATHS[n]}.js`])), fn, arg);

beforeAll(async () => {
  session = await blankPageSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

test('each new module exports exactly its documented names', async () => {
  const exports = await inPage((m) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Object.keys(v).sort()])),
  );
  expect(exports).toEqual({
    settings: ['LIMITS', 'readSettings', 'settingsProblems', 'validHeadCounts'],
    selection: ['fitSelection', 'initialSelection', 'moveCell', 'pickQuery'],
    'textbook-run': ['groupOf', 'headIntermediates', 'maskedCells', 'matrixOf', 'scaleOf', 'stepsData', 'viewsOf'],
    requests: ['createRequests'],
    status: ['describeError', 'showEngine', 'showErrors'],
    serialize: ['serialize'],
    inputs: ['createInputBuilder', 'engineGroups'],
    views: ['createViews'],
    heatmaps: ['Heatmaps'],
    'self-view': ['renderSelf'],
    'heads-view': ['renderHeads'],
    'query-view': ['renderQuery'],
    'token-chips': ['renderTokens'],
    captions: ['NO_INTERMEDIATES', 'barScale', 'headsCaption', 'rowCaption', 'selfCaption'],
    'section-width': ['innerWidth'],
    'demo-api': ['createDemoApi'],
    'textbook-handlers': ['textbookHandlers'],
    controls: ['bindControls', 'offerHeadCounts'],
    'textbook-export': ['exportDocument', 'exportPanels'],
    tabs: ['bindTabs'],
    poem: ['createPoemPage'],
    'poem-run': [
      'WEIGHT_DOMAIN',
      'addPrompt',
      'addToken',
      'createPoemRun',
      'finishRun',
      'labelsOf',
      'matrixOf',
      'stepsOf',
      'tokenLabel',
      'topAt',
      'withTemperature',
    ],
    'poem-settings': [
      'DEFAULT_PROMPT',
      'POEM_LIMITS',
      'generationRequest',
      'poemProblems',
      'readPoemSettings',
      'unknownCharacters',
    ],
    'poem-view': ['renderPoemTokens', 'renderTopTokens'],
    'poem-controls': ['bindPoemControls'],
    'model-view': ['createModelView'],
    textbook: ['createTextbook'],
    'poem-generation': ['createGeneration', 'listedTemperature'],
    'poem-handlers': ['poemHandlers'],
    'poem-loading': ['loadPoemModel'],
    'poem-focus': ['bindChipKeys', 'keepChipFocus', 'resetChipStop'],
    'poem-heads': ['kindOf', 'markThumbnails', 'readHeads', 'renderHeadBadges', 'shortName', 'tinyName'],
    'poem-recited': ['readRecited', 'recitedSegments'],
    'poem-tour': ['createTour', 'strongestKey', 'tourStops'],
    'poem-export': ['attentionDocument', 'headCSV', 'saveAttentionJSON', 'saveHeadCSV'],
    'poem-state': ['createPoemState'],
    'poem-test-hooks': ['createTestHooks'],
    'poem-chips': ['renderChips'],
    'poem-extras': ['bindExports', 'loadExtras'],
    'poem-drawing': ['PoemDrawing'],
    'poem-head-steps-view': ['askSteps'],
  });
});

test('settings: the page’s own checks and the valid head counts', async () => {
  const r = await inPage(({ settings: { settingsProblems, validHeadCounts } }) => {
    const ok = { dModel: 512, numHeads: 8, seed: 1 };
    return {
      counts: [
        validHeadCounts(512),
        validHeadCounts(12),
        validHeadCounts(1),
        validHeadCounts(0),
        validHeadCounts(1024).length,
      ],
      fine: settingsProblems(ok, ['a']),
      heads: settingsProblems({ ...ok, numHeads: 3 }, ['a']),
      tooMany: settingsProblems(ok, Array(129).fill('a')),
      none: settingsProblems({ ...ok, numHeads: NaN }, []),
    };
  });
  expect(r.counts).toEqual([[1, 2, 4, 8, 16, 32, 64], [1, 2, 3, 4, 6, 12], [1], [], 7]);
  expect(r.fine).toEqual([]);
  expect(r.heads).toEqual([
    'heads = 3 does not divide d_model = 512: every head gets d_model ÷ heads dimensions. For d_model = 512 choose heads from: 1, 2, 4, 8, 16, 32, 64.',
  ]);
  expect(r.tooMany[0]).toMatch(/^Sentence: the demo shows at most 128 tokens; this one has 129\./);
  expect(r.none).toEqual([
    'Sentence: type a sentence; there are no tokens to attend over.',
    'heads must be a whole number from 1 to 64 in the demo, got nothing.',
  ]);
});

test('selection: fitted to a run, cursor moves clamp, picking a row moves the cursor', async () => {
  const r = await inPage(({ selection: { fitSelection, moveCell, pickQuery } }) => {
    const run = { n: 3, settings: { numHeads: 2 }, results: { self: {}, mhaHeads: {}, mhaAverage: {} } };
    return {
      fit: fitSelection({ view: 'head:5', query: 7, cell: { i: 1, j: 9 } }, run),
      keep: fitSelection({ view: 'average', query: 2, cell: { i: 2, j: 2 } }, run),
      moves: [
        ['ArrowUp', 0, 0],
        ['ArrowDown', 2, 1],
        ['ArrowRight', 1, 2],
        ['End', 1, 0],
        ['Home', 1, 2],
        ['x', 1, 1],
      ].map(([k, i, j]) => moveCell({ i, j }, k, 3)),
      pick: pickQuery({ view: 'self', query: 0, cell: { i: 0, j: 2 } }, 'head:1', 2),
    };
  });
  expect(r.fit).toEqual({ view: 'self', query: 0, cell: { i: 1, j: 0 } });
  expect(r.keep).toEqual({ view: 'average', query: 2, cell: { i: 2, j: 2 } });
  expect(r.moves).toEqual([{ i: 0, j: 0 }, { i: 2, j: 1 }, { i: 1, j: 2 }, { i: 1, j: 2 }, { i: 1, j: 0 }, null]);
  expect(r.pick).toEqual({ view: 'head:1', query: 2, cell: { i: 2, j: 2 } });
});

test('poem-run: rows stream into causal maps; each step keeps the distribution its token came from', async () => {
  const r = await inPage(({ 'poem-run': m }) => {
    // 1 layer, 2 heads; a prompt of 2 tokens, then one token. Head h's row i holds 10·h + i + key/10.
    let run = m.createPoemRun({ id: 3, nLayers: 1, nHeads: 2, nKvHeads: 1, capacity: 4 });
    const prompt = new Float32Array([0, 0, 0.1, 0.2, /* head 1 */ 10, 0, 11, 11.1]);
    run = m.addPrompt(run, {
      ids: [0, 5],
      texts: ['<s>', '月'],
      top: [{ id: 7, text: '光', prob: 0.5 }],
      attention: [prompt],
    });
    const afterPrompt = { n: run.n, top: run.top.map((t) => t && t[0].id) };
    run = m.addToken(run, {
      token: { id: 7, text: '\n', top: [{ id: 7, text: '\n', prob: 0.6 }] },
      attention: [new Float32Array([2, 2.1, 2.2, 12, 12.1, 12.2])],
    });
    run = m.finishRun(run, 'poemStart', [{ id: 0, text: '<s>', prob: 0.9 }]);
    let tooMany = null;
    try {
      m.addToken(m.createPoemRun({ id: 1, nLayers: 1, nHeads: 1, nKvHeads: 1, capacity: 0 }), {
        token: {},
        attention: [],
      });
    } catch (e) {
      tooMany = e.name;
    }
    return {
      afterPrompt,
      head1: Array.from(m.matrixOf(run, 0, 1)).map((v) => Math.round(v * 10) / 10),
      head0: Array.from(m.matrixOf(run, 0, 0)).map((v) => Math.round(v * 10) / 10),
      labels: m.labelsOf(run),
      tops: [0, 1, 2, 3].map((i) => m.topAt(run, i)?.[0].id ?? null),
      done: [run.done, run.reason, run.n, run.promptLength],
      tooMany,
      steps: m.stepsOf(run, { layer: 0, head: 1 }, 1, {
        q: new Float32Array(4),
        keys: 0,
        values: 0,
        scores: 0,
        scaledScores: 0,
        weights: new Float32Array(3),
        output: new Float32Array(4),
      }),
    };
  });
  expect(r.afterPrompt).toEqual({ n: 2, top: [null, null, 7] });
  expect(r.head0).toEqual([0, 0, 0, 0.1, 0.2, 0, 2, 2.1, 2.2]);
  expect(r.head1).toEqual([10, 0, 0, 11, 11.1, 0, 12, 12.1, 12.2]);
  expect(r.labels).toEqual(['⟨s⟩', '月', '↵']);
  expect(r.tops).toEqual([null, null, 7, 0]);
  expect(r.done).toEqual([true, 'poemStart', 3, 2]);
  expect(r.tooMany).toBe('RangeError');
  expect(r.steps).toMatchObject({
    source: 'layer 1, head 2',
    tokens: ['⟨s⟩', '月', '↵'],
    query: 1,
    dK: 4,
    dV: 4,
    scale: 0.5,
    domain: [0, 1],
    causal: true,
  });
});

test('poem-settings: unknown characters and the other checks, in the page’s words', async () => {
  const r = await inPage(({ 'poem-settings': m }) => {
    const vocab = ['<s>', '\n', '，', '。', '床', '前', '明', '月', '光'];
    const ok = {
      text: '床前明月光，',
      maxNew: 9,
      greedy: true,
      temperature: 0.8,
      topK: 20,
      seed: 1,
      stopAtPoemStart: true,
    };
    const model = { vocab, maxLen: 16 };
    return {
      unknown: m.unknownCharacters('床前a明b月a光 ', vocab),
      fine: m.poemProblems(ok, model),
      one: m.poemProblems({ ...ok, text: '床x' }, model, { generating: false }),
      empty: m.poemProblems({ ...ok, text: '' }, model, { generating: false }),
      long: m.poemProblems({ ...ok, maxNew: 12 }, model),
      sampling: m.poemProblems({ ...ok, greedy: false, temperature: 0, topK: 2.5, seed: NaN, maxNew: 0 }, model),
      greedy: m.generationRequest(ok, { generating: true }),
      promptOnly: m.generationRequest({ ...ok, greedy: false }, { generating: false }),
    };
  });
  expect(r.unknown).toEqual(['a', 'b', ' ']);
  expect(r.fine).toEqual([]);
  expect(r.one).toEqual([
    'Prompt: the model knows only the 7 characters of the Three Hundred Tang Poems it was trained on (simplified Chinese and its punctuation), and not this one: “x”. Remove or replace it.',
  ]);
  expect(r.empty).toEqual(['Prompt: type a few characters of a poem for the model to continue.']);
  expect(r.long).toEqual([
    'New characters: the model reads at most 16 tokens in all; with this prompt ask for at most 9.',
  ]);
  expect(r.sampling).toEqual([
    'New characters: a whole number from 1 to 200.',
    'Temperature: a number from 0.05 to 3.',
    'Top-k: a whole number from 0 (all characters) to 200.',
    'Seed: a whole number.',
  ]);
  expect(r.greedy).toEqual({
    text: '床前明月光，',
    maxNew: 9,
    temperature: 0,
    topK: 0,
    stopAtPoemStart: true,
    topCount: 8,
  });
  expect(r.promptOnly).toMatchObject({ maxNew: 0, temperature: 0.8, topK: 20, seed: 1 });
});

test('requests: one request at a time, only the newest waiting one is sent, stale replies dropped', async () => {
  const r = await inPage(async ({ requests: { createRequests } }) => {
    const sent = [];
    const delivered = [];
    const q = createRequests((groups) => {
      sent.push(groups);
      return new Promise((res) => setTimeout(() => res(`reply ${groups}`), 10));
    });
    q.request('a', (reply) => delivered.push(reply));
    q.request('b', (reply) => delivered.push(reply));
    q.request('c', (reply) => delivered.push(reply));
    const busy = q.busy;
    await q.settled();
    q.request('d', (reply) => delivered.push(reply));
    q.refuse();
    await q.settled();
    return { sent, delivered, busy };
  });
  expect(r).toEqual({ sent: ['a', 'c', 'd'], delivered: ['reply c'], busy: true });
});

test('no console errors or warnings while the modules ran', () => {
  expect(problems).toEqual([]);
});
