// The demo page's trained-model tab in Chromium: the model view (every layer × head), generation
// streamed token by token and equal to the fixture's greedy tokens, linked hover, the keyboard,
// the page's own messages, axe-core, and the page without the model file.
const fs = require('node:fs');
const path = require('node:path');
const {
  ROOT,
  axeViolations,
  modelTabSession,
  expectClose,
  cellCenter,
  packageFolderPage,
  runPoem,
  canvasPixels,
} = require('./harness');

const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'models', 'tang-poems.json'), 'utf8'));
const DEFAULT_CASE = FIXTURE.cases.find((c) => c.prompt === '床前明月光，');

/** The model's config.json (the page must draw that many maps). */
const CONFIG = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'tang-poems', 'config.json'), 'utf8'));

let session;
let browser;
let page;
let problems;

const poem = (values, how) => runPoem(page, values, how);

const DEFAULTS = {
  'poem-prompt': '床前明月光，',
  'poem-max-new': '48',
  'poem-decoding': 'greedy',
  'poem-stop-at-end': true,
};

const layouts = (selector) =>
  page.evaluate((sel) => Array.from(document.querySelectorAll(sel), (c) => JSON.parse(c.dataset.layout)), selector);

beforeAll(async () => {
  session = await modelTabSession();
  ({ browser, page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

test('the model tab opens first and draws every layer × head of the prompt', async () => {
  expect(await page.getAttribute('[data-testid=tab-model]', 'aria-selected')).toBe('true');
  expect(await page.locator('[data-testid=panel-textbook]').isHidden()).toBe(true);
  const run = await page.evaluate(() => window.__poem.run);
  expect(run.ids).toEqual(DEFAULT_CASE.ids);
  expect(run.texts).toEqual(['<s>', ...Array.from('床前明月光，')]);
  const thumbs = await layouts('[data-testid=thumb-map]');
  expect(thumbs).toHaveLength(CONFIG.num_hidden_layers * CONFIG.num_attention_heads);
  for (const l of thumbs) expect([l.rows, l.cols]).toEqual([7, 7]);
  const pixels = await canvasPixels(page, '[data-testid=thumb-map]');
  pixels.forEach((px, k) => expect([k, px.distinct > 4]).toEqual([k, true]));
  expect(await page.locator('[data-testid=poem-token]').count()).toBe(7);
  expect(await page.locator('[data-testid=poem-model-facts]').textContent()).toContain(
    `${CONFIG.num_hidden_layers} layers × ${CONFIG.num_attention_heads} heads`,
  );
});

/** The top tokens of every step: sorted by falling probability, summing to at most 1. */
function expectDistributions(tops) {
  tops.forEach((top, i) => {
    if (!top) return;
    const p = top.map((t) => t.prob);
    for (let k = 1; k < p.length; k++) expect([i, k, p[k] <= p[k - 1]]).toEqual([i, k, true]);
    expect([i, p.reduce((a, b) => a + b, 0) <= 1 + 1e-9]).toEqual([i, true]);
    expect([i, p[0] > 0]).toEqual([i, true]);
  });
}

test('greedy generation streams one token per drawing and equals the fixture’s greedy tokens', async () => {
  await poem({ ...DEFAULTS, 'poem-stop-at-end': false }, { generate: true });
  const r = await page.evaluate(() => ({
    run: window.__poem.run,
    counts: window.__poem.tokenCounts,
    done: window.__poem.done,
  }));
  expect(r.done).toBe('maxNew');
  expect(r.run.ids.slice(0, r.run.promptLength)).toEqual(DEFAULT_CASE.ids);
  expect(r.run.ids.slice(r.run.promptLength)).toEqual(DEFAULT_CASE.greedy);
  // Each drawing shows at most one token more than the one before: the tokens appear one by one.
  const counts = r.counts;
  expect(counts[counts.length - 1]).toBe(48);
  const steps = counts.slice(1).map((c, k) => c - counts[k]);
  expect(steps.filter((d) => d !== 0 && d !== 1)).toEqual([]);
  expect(counts).toEqual(expect.arrayContaining(Array.from({ length: 48 }, (_, k) => k + 1)));
  // Greedy: each token is the most probable of its step's list.
  for (let i = r.run.promptLength; i < r.run.n; i++) expect([i, r.run.top[i][0].id]).toEqual([i, r.run.ids[i]]);
  expectDistributions(r.run.top);
  // The list shown is the latest step's, sorted, with the chosen token marked.
  const shown = await page.evaluate(() => ({
    position: document.querySelector('[data-testid=poem-top]').dataset.position,
    p: Array.from(document.querySelectorAll('[data-testid=poem-top-item]'), (li) => Number(li.dataset.p)),
    chosen: document.querySelector('[data-testid=poem-top-item].chosen')?.dataset.id,
  }));
  expect(shown.position).toBe(String(r.run.n - 1));
  expect(shown.p.length).toBeGreaterThan(1);
  expect(shown.p).toEqual([...shown.p].sort((a, b) => b - a));
  expect(shown.p.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1 + 1e-9);
  expect(shown.chosen).toBe(String(r.run.ids[r.run.n - 1]));
  // Every map holds the rows of every token, each a distribution over the tokens before it.
  const thumbs = await layouts('[data-testid=thumb-map]');
  for (const l of thumbs) expect(l.rows).toBe(r.run.n);
  const rowSums = await page.evaluate(() =>
    Array.from(
      window.__poem.matrix(3, 2).reduce((acc, v, k, m) => {
        acc[Math.floor(k / Math.sqrt(m.length))] += v;
        return acc;
      }, new Float64Array(window.__poem.run.n)),
    ),
  );
  expectClose(rowSums, Array(r.run.n).fill(1), 'row sums of layer 4, head 3', 1e-5);

  // A clicked generated token shows the distribution it was drawn from.
  await page.click('[data-testid=poem-token][data-index="9"]');
  const picked = await page.evaluate(() => ({
    position: document.querySelector('[data-testid=poem-top]').dataset.position,
    chosen: document.querySelector('[data-testid=poem-top-item].chosen')?.dataset.id,
  }));
  expect(picked).toEqual({ position: '9', chosen: String(r.run.ids[9]) });
});

test('stopping at the poem’s end gives the fixture’s tokens up to its first poem start', async () => {
  await poem(DEFAULTS, { generate: true });
  const r = await page.evaluate(() => ({
    run: window.__poem.run,
    done: window.__poem.done,
    status: document.querySelector('[data-testid=poem-status]').textContent,
  }));
  const end = DEFAULT_CASE.greedy.indexOf(0);
  expect(end).toBeGreaterThan(0);
  expect(r.done).toBe('poemStart');
  expect(r.run.ids.slice(r.run.promptLength)).toEqual(DEFAULT_CASE.greedy.slice(0, end));
  expect(r.status).toMatch(
    new RegExp(
      `^${end} characters generated: the model ended the poem \\(its next token would start a new one\\)\\. ` +
        'The worker took \\d+(\\.\\d\\d)? ms per character \\(median\\)\\.$',
    ),
  );
  // the worker's time for each generated token, as it measured it
  expect(r.run.tokenMs).toHaveLength(end);
  for (const ms of r.run.tokenMs) expect(ms).toBeGreaterThan(0);
});

test('Stop ends a sampled generation early; the same seed samples the same poem', async () => {
  const sampled = {
    ...DEFAULTS,
    'poem-max-new': '200',
    'poem-decoding': 'sample',
    'poem-temperature': '1',
    'poem-top-k': '0',
    'poem-seed': '7',
    'poem-stop-at-end': false,
  };
  await page.evaluate((v) => {
    for (const [name, value] of Object.entries(v)) {
      const node = document.getElementById(name);
      if (node.type === 'checkbox') node.checked = value;
      else node.value = value;
    }
    document.getElementById('poem-decoding').dispatchEvent(new Event('input', { bubbles: true }));
  }, sampled);
  expect(await page.locator('[data-testid=poem-temperature]').isEnabled()).toBe(true);
  await page.click('[data-testid=poem-generate]');
  await page.waitForFunction(
    () => (window.__poem.run?.n ?? 0) - (window.__poem.run?.promptLength ?? 0) >= 3 && !window.__poem.run.done,
  );
  await page.click('[data-testid=poem-stop]');
  await page.waitForFunction(() => window.__poem.run.done);
  const stopped = await page.evaluate(() => ({ run: window.__poem.run, done: window.__poem.done }));
  expect(stopped.done).toBe('stopped');
  const made = stopped.run.n - stopped.run.promptLength;
  expect(made).toBeGreaterThanOrEqual(3);
  expect(made).toBeLessThan(200);
  expect(await page.locator('[data-testid=poem-stop]').isDisabled()).toBe(true);
  expectDistributions(stopped.run.top);

  // The same seed again, stopped by a small maxNew: the same first tokens.
  await poem({ ...sampled, 'poem-max-new': '3' }, { generate: true });
  const again = await page.evaluate(() => window.__poem.run);
  expect(again.ids).toEqual(stopped.run.ids.slice(0, again.promptLength + 3));
  await poem(DEFAULTS, { generate: false });
});

test('hovering a token brings its row forward in every thumbnail and in the large view', async () => {
  await poem(DEFAULTS, { generate: true });
  await page.click('[data-testid=thumb][data-layer="1"][data-head="2"]');
  await page.waitForFunction(() => window.__poem.stepsShown?.layer === 1);
  const maps = '[data-testid=thumb-map], [data-testid=head-map]';
  const n = CONFIG.num_hidden_layers * CONFIG.num_attention_heads + 1;
  // The first thumbnail's colours in rows 4 and 8 (column 0), before and while row 4 is hovered.
  await page.mouse.move(2, 2);
  const [before] = await canvasPixels(page, '[data-testid=thumb-map]', [
    [4, 0],
    [8, 0],
  ]);
  await page.hover('[data-testid=poem-token][data-index="4"]');
  let all = await layouts(maps);
  expect(all).toHaveLength(n);
  expect(all.map((l) => l.highlightRow)).toEqual(Array(n).fill(4));
  const [lit] = await canvasPixels(page, '[data-testid=thumb-map]', [
    [4, 0],
    [8, 0],
  ]);
  expect(lit.colours[0]).toEqual(before.colours[0]); // the hovered row as it was
  const brightness = (rgb) => rgb.reduce((x, y) => x + y);
  expect(brightness(lit.colours[1])).toBeGreaterThan(brightness(before.colours[1])); // the others veiled

  // Pointing at a row of any thumbnail does the same, the token chip included.
  const cell = await cellCenter(page, '[data-testid=thumb-map][data-layer="3"][data-head="0"]', 10, 2);
  await page.mouse.move(cell.x, cell.y);
  all = await layouts(maps);
  expect(all.map((l) => l.highlightRow)).toEqual(Array(n).fill(10));
  expect(await page.getAttribute('[data-testid=poem-token][data-index="10"]', 'class')).toContain('lit');

  await page.mouse.move(2, 2);
  all = await layouts(maps);
  expect(all.map((l) => l.highlightRow)).toEqual(Array(n).fill(-1));
});

test('the keyboard reaches a thumbnail, opens it large, and the large map’s Enter shows that query’s four steps', async () => {
  await page.focus('[data-testid=poem-stop-at-end]');
  let reached = null;
  for (let k = 0; k < 100 && !reached; k++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() =>
      document.activeElement.dataset.testid === 'thumb'
        ? document.activeElement.dataset.layer + document.activeElement.dataset.head
        : null,
    );
  }
  expect(reached).not.toBeNull();
  // The viz model view is one Tab stop (the last thumbnail used): Ctrl+Home goes to the first, an
  // arrow key to the next; in a grid of one button per thumbnail the first Tab stop is the first
  // and the next is a Tab further.
  const on = () => page.evaluate(() => document.activeElement.dataset.layer + document.activeElement.dataset.head);
  await page.keyboard.press('Control+Home');
  expect(await on()).toBe('00');
  await page.keyboard.press('ArrowRight');
  if ((await on()) !== '01') await page.keyboard.press('Tab');
  expect(await on()).toBe('01');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__poem.stepsShown?.layer === 0 && window.__poem.stepsShown?.head === 1);
  expect(await page.locator('[data-testid=head-section]').isVisible()).toBe(true);
  expect(await page.locator('#head-heading').textContent()).toBe('Layer 1, head 2');

  let onMap = false;
  for (let k = 0; k < 60 && !onMap; k++) {
    await page.keyboard.press('Tab');
    onMap = await page.evaluate(() => document.activeElement.dataset.testid === 'head-map');
  }
  expect(onMap).toBe(true);
  // The cursor starts on the picked query, column 0, and stays inside the map.
  const { n, query } = await page.evaluate(() => ({ n: window.__poem.run.n, query: window.__poem.ui.query }));
  expect(await page.evaluate(() => window.__poem.ui.cursor)).toEqual({ i: query, j: 0 });
  for (const key of ['ArrowDown', 'ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowRight']) await page.keyboard.press(key);
  const ui = await page.evaluate(() => window.__poem.ui);
  expect(ui.cursor).toEqual({ i: Math.min(query + 1, n - 1) - 3, j: 1 });
  // One read-out, the map's own live line (the page adds no tooltip or second line of its own).
  expect(await page.locator('[data-testid=head-map]').getAttribute('aria-label')).toMatch(/^layer 1, head 2: /);
  expect(await page.locator('#head-map-box [data-testid=viz-readout]').textContent()).toMatch(
    /^query “.+” \(#\d+\) → key “.+” \(#2\): weight /,
  );
  expect(await page.locator('[data-testid=tooltip], [data-testid=map-readout]').count()).toBe(0);
  await page.keyboard.press('Enter');
  await page.waitForFunction((i) => window.__poem.stepsShown?.query === i, ui.cursor.i);
  // The steps' weights (a one-shot engine call with intermediates) are the large map's row (the cached path).
  const r = await page.evaluate(
    (i) => ({
      weights: Array.from(document.querySelectorAll('[data-testid=head-steps] [data-testid=row-weights] td'), (td) =>
        Number(td.title),
      ),
      row: Array.from(window.__poem.matrix(0, 1).slice(i * window.__poem.run.n, (i + 1) * window.__poem.run.n)),
      strips: document.querySelectorAll(
        '[data-testid=head-steps] [data-testid=step-q], [data-testid=head-steps] [data-testid=step-k]',
      ).length,
    }),
    ui.cursor.i,
  );
  expect(r.strips).toBe(2);
  expectClose(r.weights, r.row, `steps of query ${ui.cursor.i} against the large map`, 1e-4);
  expect(await page.evaluate(() => document.activeElement.dataset.testid)).toBe('head-map');
});

test('unknown characters get the page’s own message, listing them; a good prompt brings the views back', async () => {
  await page.fill('[data-testid=poem-prompt]', '床前明月光，hello Ω');
  await page.waitForSelector('[data-testid=poem-error]:not([hidden])');
  expect(await page.locator('[data-testid=poem-error]').textContent()).toMatch(
    /^Prompt: the model knows only the [\d,]+ characters of the Three Hundred Tang Poems it was trained on \(simplified Chinese and its punctuation\), and not these 6: “h” “e” “l” “o” space “Ω”\. Remove or replace them\.$/,
  );
  expect(await page.locator('#model-view-section').isHidden()).toBe(true);
  await poem(DEFAULTS, { generate: false });
  expect(await page.locator('[data-testid=poem-error]').isHidden()).toBe(true);
  expect(await page.locator('#model-view-section').isVisible()).toBe(true);
});

test('axe-core finds no violation on the model tab with a head open', async () => {
  await page.click('[data-testid=thumb][data-layer="2"][data-head="3"]');
  await page.waitForFunction(() => window.__poem.stepsShown?.layer === 2 && window.__poem.stepsShown?.head === 3);
  const violations = await axeViolations(page);
  expect(violations).toEqual([]);
  const levels = await page.evaluate(() =>
    Array.from(document.querySelectorAll('h1, h2, h3, h4'), (h) => Number(h.tagName[1])),
  );
  levels.forEach((l, k) => {
    if (k) expect(l - levels[k - 1]).toBeLessThanOrEqual(1);
  });
});

test('without the model file (a package folder) the page says so plainly, and the textbook works', async () => {
  const { url, page: other, problems: seen, close } = await packageFolderPage(browser, ['dist']);
  try {
    await other.goto(url);
    await other.waitForSelector('body[data-model=missing]', { timeout: 60000 });
    const text = await other.locator('[data-testid=poem-error]').textContent();
    expect(text).toMatch(
      /^The trained poem model is not here: \/models\/tang-poems\/config\.json answered HTTP 404\. The package ships it in the folder models\/tang-poems\/ next to web\//,
    );
    expect(text).toContain('the textbook tab');
    expect(await other.locator('[data-testid=poem-controls]').isHidden()).toBe(true);
    // The textbook is one key away too: the tabs take the arrow keys, and the address names the tab.
    await other.focus('[data-testid=tab-model]');
    await other.keyboard.press('ArrowRight');
    await other.waitForFunction(() => window.__demo.shown().self !== null);
    expect(await other.evaluate(() => [document.activeElement.dataset.testid, location.hash])).toEqual([
      'tab-textbook',
      '#textbook',
    ]);
    expect(await other.locator('[data-testid=panel-model]').isHidden()).toBe(true);
    expect(await other.evaluate(() => window.__demo.shown().heads.length)).toBe(2);
    expect(await other.locator('[data-testid=error]').isHidden()).toBe(true);
    // The only problem is the missing file itself.
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) expect(p).toMatch(/config\.json|404/);
  } finally {
    await close();
  }
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
