// The textbook tab of issue 20 in Chromium: a readable d_model by default (the worked example's
// 512 × 8 heads one pick away), the q∘k products that sum to a score, the four steps played one at
// a time (animated, skippable, still under prefers-reduced-motion), and the value rows that make
// the output shaded by their weight; axe-core at 1366×768 and 390 px.
const { axeViolations, startServer, launchBrowser, vizReadout, watchProblems } = require('./harness');

let server;
let browser;
let page;
let problems;

const settle = () => page.evaluate(() => window.__demo.settled());
const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser({ viewport: { width: 1366, height: 768 } });
  page = browser.page;
  problems = watchProblems(page);
  await page.goto(`${server.url}web/#textbook`);
  await page.waitForSelector('body[data-state=ready]', { timeout: 30000 });
  await page.waitForFunction(() => window.__demo.shown().self !== null);
});

afterAll(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

/** The self-attention intermediates of the picked query: q [dK], K [n, dK], V [n, dV], scores, weights. */
const picked = () =>
  page.evaluate(() => {
    const r = window.__demo.last.results.self;
    const it = r.intermediates;
    const n = window.__demo.last.tokens.length;
    const i = window.__demo.selection.query;
    const dK = it.q.length / n;
    const dV = it.v.length / n;
    return {
      n,
      i,
      dK,
      dV,
      q: Array.from(it.q.subarray(i * dK, (i + 1) * dK)),
      K: Array.from(it.k),
      V: Array.from(it.v),
      scores: Array.from(it.scores.subarray(i * n, (i + 1) * n)),
      weights: Array.from(r.weights.subarray(i * n, (i + 1) * n)),
    };
  });

test('opens at a readable size, 16 wide with 2 heads; the worked example’s 512 × 8 heads is one pick away', async () => {
  const first = await page.evaluate(() => ({
    settings: window.__demo.last.settings,
    preset: document.querySelector('[data-testid=size-preset]').value,
    heads: window.__demo.shown().heads.length,
    qCells: document.querySelectorAll('#steps [data-testid=qk-row] td').length,
  }));
  expect(first.settings).toMatchObject({ dModel: 16, numHeads: 2 });
  expect(first).toMatchObject({ preset: '16x2', heads: 2, qCells: 16 }); // every product written out
  await page.selectOption('[data-testid=size-preset]', '512x8');
  await page.waitForFunction(() => window.__demo.last.settings.dModel === 512);
  await settle();
  expect(
    await page.evaluate(() => [
      window.__demo.last.settings.numHeads,
      window.__demo.shown().heads.length,
      document.getElementById('dModel').value,
      document.getElementById('heads').value,
    ]),
  ).toEqual([8, 8, '512', '8']);
  // Typing another width names it "other"; picking a preset again restores both fields.
  await page.fill('[data-testid=dModel]', '24');
  expect(await page.locator('[data-testid=size-preset]').inputValue()).toBe('custom');
  await page.selectOption('[data-testid=size-preset]', '16x2');
  await page.waitForFunction(
    () => window.__demo.last.settings.dModel === 16 && window.__demo.last.settings.numHeads === 2,
  );
  await settle();
});

test('the grid of small maps (each head, the average) has no scale bar or zoom buttons; the single head keeps both', async () => {
  const bars = await page.evaluate(() =>
    Array.from(
      document.querySelectorAll('#self-map [data-testid=viz-heatmap], #mha-maps [data-testid=viz-heatmap]'),
      (map) => ({
        map: map.querySelector('canvas').dataset.testid,
        legend: map.querySelector('.wa-viz-legend').checkVisibility(),
        buttons: Array.from(map.querySelectorAll('.wa-viz-bar button')).filter((b) => b.checkVisibility()).length,
        title: map.querySelector('.wa-viz-title').checkVisibility(),
      }),
    ),
  );
  const small = { legend: false, buttons: 0, title: true };
  expect(bars).toEqual([
    { map: 'heatmap-self', legend: true, buttons: 3, title: true },
    { map: 'heatmap-head', ...small },
    { map: 'heatmap-head', ...small },
    { map: 'heatmap-average', ...small },
  ]);
  // The caption under the grid says the scale the small maps no longer show.
  expect(await page.textContent('#mha-legend')).toMatch(/^Colours: weight 0 \(dark purple\) … 1 \(yellow\)/);
});

test('Page Up/Down on a map move the textbook’s cell with the cursor, so a later render keeps it there', async () => {
  await page.focus('[data-testid=heatmap-self]');
  for (const key of ['Control+Home', 'ArrowRight']) await page.keyboard.press(key);
  const cell = () => page.evaluate(() => window.__demo.selection.cell);
  // The map's own read-out says where its cursor is (positions numbered from 1).
  const cursor = async () => {
    const r = await vizReadout(page, '#self-map');
    return { i: r.queryAt - 1, j: r.keyAt - 1 };
  };
  expect(await cell()).toEqual({ i: 0, j: 1 });
  await page.keyboard.press('PageDown');
  const down = await cursor();
  expect(down.i).toBeGreaterThan(0); // a screenful of rows, clamped to the last
  expect(down.j).toBe(1);
  expect(await cell()).toEqual(down);
  // A recompute puts the focused map's cursor back on the textbook's cell: still the same one.
  await page.evaluate(() => window.__demo.recompute());
  await settle();
  expect(await cursor()).toEqual(down);
  await page.keyboard.press('PageUp');
  expect(await cursor()).toEqual({ i: 0, j: 1 });
  expect(await cell()).toEqual({ i: 0, j: 1 });
  // Ctrl+End goes to the last cell, as the map's help says; the textbook follows it too.
  await page.keyboard.press('Control+End');
  const n = await page.evaluate(() => window.__demo.last.tokens.length);
  expect(await cursor()).toEqual({ i: n - 1, j: n - 1 });
  expect(await cell()).toEqual({ i: n - 1, j: n - 1 });
  await page.keyboard.press('Control+Home');
});

test('q∘k: the products of q and a key, dimension by dimension, sum to the engine’s score', async () => {
  const s = await picked();
  for (let j = 0; j < s.n; j++) {
    await page.selectOption('#steps [data-testid=qk-key]', String(j));
    const row = await page.evaluate(() => ({
      key: Number(document.querySelector('#steps [data-testid=qk-row]').dataset.key),
      products: Array.from(document.querySelectorAll('#steps [data-testid=qk-row] td'), (td) => Number(td.title)),
      sum: Number(document.querySelector('#steps [data-testid=qk-sum]').dataset.sum),
    }));
    expect(row.key).toBe(j);
    expect(row.products).toEqual(s.q.map((qd, d) => qd * s.K[j * s.dK + d]));
    expect(Math.abs(row.sum - s.scores[j])).toBeLessThan(1e-5 * (1 + Math.abs(s.scores[j])));
  }
  // It opens on the key the query weighs most.
  await page.evaluate(() => window.__demo.recompute());
  await settle();
  const strongest = s.weights.indexOf(Math.max(...s.weights));
  expect(await page.locator('#steps [data-testid=qk-key]').inputValue()).toBe(String(strongest));
});

test('the value rows that make the output, shaded by their weight, the strongest outlined', async () => {
  const s = await picked();
  const rows = await page.evaluate(() =>
    Array.from(document.querySelectorAll('#steps [data-testid=v-row]'), (tr) => ({
      key: Number(tr.dataset.key),
      weight: Number(tr.dataset.weight),
      strongest: tr.classList.contains('strongest'),
      alpha: Number((/rgba\([^)]*,\s*([\d.]+)\)/.exec(getComputedStyle(tr).backgroundColor) ?? [0, 0])[1]),
      values: Array.from(tr.querySelectorAll('td:not(.weight)'), (td) => Number(td.title)),
    })),
  );
  expect(rows.map((r) => r.key)).toEqual([...Array(s.n).keys()]);
  expect(rows.map((r) => r.weight)).toEqual(s.weights);
  const strongest = s.weights.indexOf(Math.max(...s.weights));
  expect(rows.filter((r) => r.strongest).map((r) => r.key)).toEqual([strongest]);
  rows.forEach((r, j) => expect(r.values).toEqual(s.V.slice(j * s.dV, j * s.dV + Math.min(16, s.dV))));
  // A heavier row is shaded more.
  const byWeight = [...rows].sort((a, b) => a.weight - b.weight);
  for (let k = 1; k < byWeight.length; k++) expect(byWeight[k].alpha).toBeGreaterThanOrEqual(byWeight[k - 1].alpha);
  expect(byWeight.at(-1).alpha).toBeGreaterThan(byWeight[0].alpha);
  // The last row is their sum, the engine's output.
  const output = await page.evaluate(() =>
    Array.from(document.querySelectorAll('#steps [data-testid=v-output] td:not(.weight)'), (td) => Number(td.title)),
  );
  output.forEach((o, d) => {
    const sum = s.weights.reduce((acc, w, j) => acc + w * s.V[j * s.dV + d], 0);
    expect(Math.abs(o - sum)).toBeLessThan(1e-5 * (1 + Math.abs(sum)));
  });

  // Past 16 tokens the 16 heaviest rows are listed and the others summed up.
  await page.fill('[data-testid=text]', 'attentionisallyouneedtoday');
  await page.waitForFunction(() => window.__demo.last.tokens.length === 26);
  await settle();
  const many = await page.evaluate(() => ({
    rows: Array.from(document.querySelectorAll('#steps [data-testid=v-row]'), (tr) => Number(tr.dataset.weight)),
    rest: document.querySelector('#steps [data-testid=v-rest]')?.textContent,
  }));
  const all = await picked();
  expect(many.rows).toHaveLength(16);
  const heaviest = [...all.weights].sort((a, b) => b - a).slice(0, 16);
  expect([...many.rows].sort((a, b) => b - a)).toEqual(heaviest);
  const rest = all.weights.reduce((a, b) => a + b, 0) - heaviest.reduce((a, b) => a + b, 0);
  expect(many.rest).toBe(`10 other rows× ${rest.toFixed(3)} in all`);
  await page.fill('[data-testid=text]', '我愛AI');
  await page.waitForFunction(() => window.__demo.last.tokens.length === 4);
  await settle();
});

/** The player's state: stage, which parts are veiled and which is current, the status line. */
const player = () =>
  page.evaluate(() => {
    const box = document.getElementById('steps');
    const stages = (cls) =>
      [...new Set(Array.from(box.querySelectorAll(`[data-stage].${cls}`), (e) => Number(e.dataset.stage)))].sort();
    const td = box.querySelector('.current td');
    return {
      stage: Number(box.dataset.stage),
      pending: stages('pending'),
      current: stages('current'),
      status: box.querySelector('[data-testid=steps-status]').textContent,
      animation: td ? getComputedStyle(td).animationName : null,
    };
  });

test('the four steps, played: each appears in turn, animated, and Show all skips to the end', async () => {
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  await page.focus('#steps [data-testid=steps-play]');
  await page.keyboard.press('Enter');
  const first = await player();
  expect(first).toMatchObject({ stage: 1, pending: [2, 3, 4], current: [1], animation: 'step-reveal' });
  expect(first.status).toBe('Step 1 of 4: scores (playing).');
  await page.waitForFunction(() => document.getElementById('steps').dataset.stage === '2', null, { timeout: 5000 });
  expect(await player()).toMatchObject({ pending: [3, 4], current: [2], status: 'Step 2 of 4: scale (playing).' });
  await page.waitForFunction(() => document.getElementById('steps').dataset.stage === '4', null, { timeout: 10000 });
  expect(await player()).toMatchObject({ pending: [], current: [4], status: 'Step 4 of 4: weighted sum.' });
  // Skippable at any step: Show all.
  await page.click('#steps [data-testid=steps-play]');
  expect((await player()).stage).toBe(1);
  await page.click('#steps [data-testid=steps-all]');
  expect(await player()).toMatchObject({ stage: 0, pending: [], current: [], status: '' });
  await page.waitForTimeout(2200);
  expect((await player()).stage).toBe(0); // its timer went with it
});

test('with prefers-reduced-motion nothing moves by itself: Next goes step by step, without animation', async () => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.click('#steps [data-testid=steps-play]');
  expect(await player()).toMatchObject({ stage: 1, current: [1], animation: 'none', status: 'Step 1 of 4: scores.' });
  await page.waitForTimeout(2200);
  expect((await player()).stage).toBe(1);
  for (const [stage, name] of [
    [2, 'scale'],
    [3, 'softmax'],
    [4, 'weighted sum'],
  ]) {
    await page.click('#steps [data-testid=steps-next]');
    expect(await player()).toMatchObject({ stage, status: `Step ${stage} of 4: ${name}.` });
  }
  await page.click('#steps [data-testid=steps-next]');
  expect((await player()).stage).toBe(0); // past the last step: everything shown
  await page.emulateMedia({ reducedMotion: 'no-preference' });
});

test('axe-core finds no violation while stepping, at 1366×768 and at 390 px, and nothing overflows the phone', async () => {
  await page.click('#steps [data-testid=steps-play]');
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished))); // cells fully shown
  expect(await axeViolations(page)).toEqual([]);
  await page.click('#steps [data-testid=steps-all]');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => window.__demo.recompute());
  await settle();
  await frames();
  expect(await axeViolations(page)).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1366, height: 768 });
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
