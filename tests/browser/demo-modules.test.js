// The demo page's module graph and its small pure modules (web/*.js), in Chromium.
// Each module has one job: the graph has no cycles, nothing imports main.js, and only
// main.js reaches the engine (engine.js); drawing modules never do.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, blankPageSession, runInPage } = require('./harness');

const WEB = path.join(ROOT, 'web');

/** web/*.js → the web modules each imports (static `import … from './x.js'`). */
function importGraph() {
  const graph = {};
  for (const file of fs.readdirSync(WEB).filter((f) => f.endsWith('.js'))) {
    const src = fs.readFileSync(path.join(WEB, file), 'utf8');
    graph[file] = Array.from(src.matchAll(/^import\s[^;]*?from\s+'\.\/([\w-]+\.js)';/gm), (m) => m[1]);
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
    if (file !== 'main.js') expect([file, reachable(graph, file).has('engine.js')]).toEqual([file, false]);
  }
  // The drawing modules know nothing of attention data, selection or the engine.
  for (const file of ['heatmap.js', 'bars.js', 'colormap.js', 'steps.js', 'tooltip.js']) {
    const r = reachable(graph, file);
    for (const banned of ['engine.js', 'requests.js', 'rundata.js', 'selection.js', 'settings.js']) {
      expect([file, banned, r.has(banned)]).toEqual([file, banned, false]);
    }
  }
});

let session;
let page;
let problems;
const NAMES = ['settings', 'selection', 'rundata', 'requests', 'tooltip', 'status', 'serialize', 'inputs', 'views', 'controls', 'exporting'];
const inPage = (fn, arg) => runInPage(page, Object.fromEntries(NAMES.map((n) => [n, `/web/${n}.js`])), fn, arg);

beforeAll(async () => {
  session = await blankPageSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

test('each new module exports exactly its documented names', async () => {
  const exports = await inPage((m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Object.keys(v).sort()])));
  expect(exports).toEqual({
    settings: ['LIMITS', 'readSettings', 'settingsProblems', 'validHeadCounts'],
    selection: ['fitSelection', 'initialSelection', 'moveCell', 'pickQuery'],
    rundata: ['groupOf', 'headIntermediates', 'matrixOf', 'scaleOf', 'stepsData', 'viewsOf'],
    requests: ['createRequests'],
    tooltip: ['formatWeight', 'hideTooltip', 'showTooltip'],
    status: ['describeError', 'showEngine', 'showErrors'],
    serialize: ['serialize'],
    inputs: ['createInputBuilder', 'engineGroups'],
    views: ['createViews'],
    controls: ['bindControls', 'offerHeadCounts'],
    exporting: ['exportDocument', 'exportPanels'],
  });
});

test('settings: the page’s own checks and the valid head counts', async () => {
  const r = await inPage(({ settings: { settingsProblems, validHeadCounts } }) => {
    const ok = { dModel: 512, numHeads: 8, seed: 1 };
    return {
      counts: [validHeadCounts(512), validHeadCounts(12), validHeadCounts(1), validHeadCounts(0), validHeadCounts(1024).length],
      fine: settingsProblems(ok, ['a']),
      heads: settingsProblems({ ...ok, numHeads: 3 }, ['a']),
      tooMany: settingsProblems(ok, Array(129).fill('a')),
      none: settingsProblems({ ...ok, numHeads: NaN }, []),
    };
  });
  expect(r.counts).toEqual([[1, 2, 4, 8, 16, 32, 64], [1, 2, 3, 4, 6, 12], [1], [], 7]);
  expect(r.fine).toEqual([]);
  expect(r.heads).toEqual(['heads = 3 does not divide d_model = 512: every head gets d_model ÷ heads dimensions. For d_model = 512 choose heads from: 1, 2, 4, 8, 16, 32, 64.']);
  expect(r.tooMany[0]).toMatch(/^Sentence: the demo shows at most 128 tokens; this one has 129\./);
  expect(r.none).toEqual(['Sentence: type a sentence; there are no tokens to attend over.', 'heads must be a whole number from 1 to 64 in the demo, got nothing.']);
});

test('selection: fitted to a run, cursor moves clamp, picking a row moves the cursor', async () => {
  const r = await inPage(({ selection: { fitSelection, moveCell, pickQuery } }) => {
    const run = { n: 3, settings: { numHeads: 2 }, results: { self: {}, mhaHeads: {}, mhaAverage: {} } };
    return {
      fit: fitSelection({ view: 'head:5', query: 7, cell: { i: 1, j: 9 } }, run),
      keep: fitSelection({ view: 'average', query: 2, cell: { i: 2, j: 2 } }, run),
      moves: [['ArrowUp', 0, 0], ['ArrowDown', 2, 1], ['ArrowRight', 1, 2], ['End', 1, 0], ['Home', 1, 2], ['x', 1, 1]]
        .map(([k, i, j]) => moveCell({ i, j }, k, 3)),
      pick: pickQuery({ view: 'self', query: 0, cell: { i: 0, j: 2 } }, 'head:1', 2),
    };
  });
  expect(r.fit).toEqual({ view: 'self', query: 0, cell: { i: 1, j: 0 } });
  expect(r.keep).toEqual({ view: 'average', query: 2, cell: { i: 2, j: 2 } });
  expect(r.moves).toEqual([{ i: 0, j: 0 }, { i: 2, j: 1 }, { i: 1, j: 2 }, { i: 1, j: 2 }, { i: 1, j: 0 }, null]);
  expect(r.pick).toEqual({ view: 'head:1', query: 2, cell: { i: 2, j: 2 } });
});

test('requests: one request at a time, only the newest waiting one is sent, stale replies dropped', async () => {
  const r = await inPage(async ({ requests: { createRequests } }) => {
    const sent = [];
    const delivered = [];
    const q = createRequests((groups) => { sent.push(groups); return new Promise((res) => setTimeout(() => res(`reply ${groups}`), 10)); });
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
