// The demo page's defects of issue 10, each pinned by a test that failed on the page before
// its fix: the average's steps, stale views after an error, many tokens, colour scales and
// readouts, phones/keyboards/contrast/landmarks, and the exports.
const fs = require('node:fs');
const path = require('node:path');
const {
  ROOT,
  axeViolations,
  startServer,
  launchBrowser,
  watchProblems,
  expectClose,
  cellCenter,
  vizReadout,
  replayInPage,
} = require('./harness');

const PHONE_SCREENSHOT = path.join(ROOT, 'test-results', 'demo-phone.png');
const LONG =
  'attentionisallyouneedandthequickbrownfoxjumpsoverthelazydogwhilewewatchitallhappenagainandagainuntiltheendofthesentencewhichisnow';

let server;
let browser;
let page;
let problems;

/** Sets controls without events, recomputes, and waits for the page (default: the shared one) to settle. */
async function setAndCompute(values, on = page) {
  await on.evaluate((v) => {
    for (const [id, value] of Object.entries(v)) {
      const node = document.getElementById(id);
      if (node.type === 'checkbox') node.checked = value;
      else node.value = value;
    }
    window.__demo.recompute();
    return window.__demo.settled();
  }, values);
}

const DEFAULTS = { text: '我愛AI', dModel: '512', heads: '8', causal: false };

/** The page with the textbook tab open (the trained model's tab opens first otherwise). */
async function openPage(p, url) {
  await p.goto(`${url}web/#textbook`);
  await p.waitForSelector('body[data-state=ready]', { timeout: 30000 });
  // The tab opens at a readable size; these tests use the worked example's (512 wide, 8 heads).
  await setAndCompute({ dModel: '512', heads: '8' }, p);
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = browser.page;
  problems = watchProblems(page);
  await openPage(page, server.url);
});

afterAll(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

afterEach(async () => {
  await setAndCompute(DEFAULTS);
});

test('1. a cell of the average map selects “average” in the picker; the steps say it has no single Q/K/V', async () => {
  expect(
    await page.evaluate(() => Array.from(document.querySelectorAll('[data-testid=source] option'), (o) => o.value)),
  ).toContain('average');
  const shown = await page.evaluate(() => window.__demo.shown());
  const cell = await cellCenter(page, '[data-testid=heatmap-average]', 2, 1);
  await page.mouse.click(cell.x, cell.y);
  await page.waitForFunction(() => document.querySelector('[data-testid=source]').value === 'average');
  const r = await page.evaluate(() => ({
    options: Array.from(document.querySelectorAll('[data-testid=source] option'), (o) => o.value),
    query: document.querySelector('[data-testid=query]').value,
    bars: window.__demo.shown().bars,
    intro: document.querySelector('[data-testid=steps-average]')?.textContent ?? null,
    strips: document.querySelectorAll(
      '[data-testid=steps] [data-testid^=step-q], [data-testid=steps] [data-testid=step-k]',
    ).length,
    weights: Array.from(document.querySelectorAll('[data-testid=row-weights] td'), (td) => Number(td.title)),
    scoreRows: document.querySelectorAll('[data-testid=row-scores]').length,
  }));
  expect(r.options).toEqual(['self', ...Array.from({ length: 8 }, (_, h) => `head:${h}`), 'average']);
  expect(r.query).toBe('2');
  expect(r.intro).toMatch(/average has no single Q, K or V/);
  expect(r.strips).toBe(0);
  expect(r.scoreRows).toBe(0);
  // Bars above and the numbers below are the same row: the average's, query A.
  expectClose(r.bars, shown.average.slice(8, 12), 'row bars of query A in the average');
  expectClose(r.weights, shown.average.slice(8, 12), 'steps of query A in the average');

  // Choosing a head in the picker shows that head consistently above and below.
  await page.selectOption('[data-testid=source]', 'head:2');
  const h = await page.evaluate(() => ({
    bars: window.__demo.shown().bars,
    weights: Array.from(document.querySelectorAll('[data-testid=row-weights] td'), (td) => Number(td.title)),
    source: document.querySelector('[data-testid=steps]').dataset.source,
  }));
  expect(h.source).toBe('head 3 of 8');
  expectClose(h.bars, shown.heads[2].slice(8, 12), 'row bars of query A in head 3');
  expectClose(h.weights, shown.heads[2].slice(8, 12), 'steps of query A in head 3');
});

/** How often a text occurs in what the page shows (innerText: hidden elements excluded). */
const occurrences = (text) => page.evaluate((t) => document.body.innerText.split(t).length - 1, text);

test('2. after an error the error shows once, and no stale caption, legend or map stays', async () => {
  for (const [values, marker] of [
    [{ heads: '3' }, 'heads = 3 does not divide d_model = 512'],
    [{ text: 'x'.repeat(300) }, 'this one has 300'],
  ]) {
    await setAndCompute({ ...DEFAULTS, ...values });
    expect(await page.locator('[data-testid=error]').isVisible()).toBe(true);
    expect(await occurrences(marker)).toBe(1);
    for (const id of ['self-legend', 'mha-legend', 'self-caption', 'mha-caption', 'mha-maps', 'row-bars', 'steps']) {
      expect([id, await page.locator(`#${id}`).isVisible()]).toEqual([id, false]);
    }
    expect(await page.evaluate(() => window.__demo.shown())).toMatchObject({
      self: null,
      heads: [],
      average: null,
      bars: null,
    });
  }
  await setAndCompute(DEFAULTS);
  expect(await page.locator('[data-testid=error]').isHidden()).toBe(true);
  expect(await page.locator('#mha-legend').isVisible()).toBe(true);
});

test('3. many tokens: labels are thinned (not dropped), no weights in the DOM, long input collapses its chips', async () => {
  await setAndCompute({ text: LONG.slice(0, 64) });
  const at64 = await page.evaluate(() => ({
    self: JSON.parse(document.querySelector('[data-testid=heatmap-self]').dataset.layout),
    head: JSON.parse(document.querySelector('[data-testid=heatmap-head]').dataset.layout),
    bars: JSON.parse(document.querySelector('[data-testid=row-bars]').dataset.layout),
    barsWidth: document.querySelector('[data-testid=row-bars]').getBoundingClientRect().width,
    sectionWidth: document.querySelector('#query-section').clientWidth,
  }));
  // Every k-th label is drawn (k ≥ 1), so labels stay readable and some are always there.
  for (const [name, layout] of [
    ['self', at64.self],
    ['head', at64.head],
  ]) {
    expect([name, layout.rowLabelStep >= 1, layout.colLabelStep >= 1]).toEqual([name, true, true]);
    expect([name, layout.cellHeight * layout.rowLabelStep >= 11]).toEqual([name, true]);
  }
  expect(at64.head.rowLabelStep).toBeGreaterThan(1);
  expect(at64.bars.labelStep).toBeGreaterThan(1);
  expect(at64.barsWidth).toBeLessThanOrEqual(at64.sectionWidth);

  // 128 tokens × 64 heads at d_model 1024: the weights stay in memory, the DOM stays small.
  await setAndCompute({ text: LONG.slice(0, 128), dModel: '1024', heads: '64' });
  const big = await page.evaluate(() => ({
    heads: window.__demo.shown().heads.length,
    withWeights: document.querySelectorAll('[data-weights]').length,
    html: document.documentElement.outerHTML.length,
  }));
  expect(big.heads).toBe(64);
  expect(big.withWeights).toBe(0);
  // Each map is a viz heatmap (title, legend, zoom buttons, read-out line: about 2 KB), so 65 maps
  // are some 130 KB; the weights (1M numbers, megabytes as text) are not among them.
  expect(big.html).toBeLessThan(250000);

  // 300 tokens: at most 40 chips and one that says how many more, and why nothing is drawn.
  await setAndCompute({ text: 'y'.repeat(300) });
  const chips = await page.evaluate(() => ({
    chips: document.querySelectorAll('[data-testid=tokens] .token:not(.more)').length,
    more: document.querySelector('[data-testid=tokens-more]')?.textContent ?? null,
  }));
  expect(chips.chips).toBe(40);
  expect(chips.more).toBe("+ 260 more (300 tokens — over the demo's limit of 128, so nothing is computed)");
});

/** The colour of a canvas pixel at CSS point (x, y). */
function pixelOf(selector, x, y) {
  return page.evaluate(
    ([sel, px, py]) => {
      const c = document.querySelector(sel);
      const dpr = c.width / c.getBoundingClientRect().width;
      return Array.from(
        c
          .getContext('2d')
          .getImageData(Math.round(px * dpr), Math.round(py * dpr), 1, 1)
          .data.slice(0, 3),
      );
    },
    [selector, x, y],
  );
}

test('4. one colour scale per view: a weight has one colour in its heatmap, the row bars and the step bars', async () => {
  await page.selectOption('[data-testid=source]', 'self');
  await page.selectOption('[data-testid=query]', '1');
  const selfLayout = JSON.parse(await page.locator('[data-testid=heatmap-self]').getAttribute('data-layout'));
  const rowLayout = JSON.parse(await page.locator('[data-testid=row-bars]').getAttribute('data-layout'));
  const stepLayout = JSON.parse(await page.locator('[data-testid=step-bars]').getAttribute('data-layout'));
  const row = await page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid=row-weights] td'), (td) => Number(td.title)),
  );
  const j = row.indexOf(Math.max(...row)); // the tallest bar
  const inMap = await pixelOf(
    '[data-testid=heatmap-self]',
    selfLayout.x0 + (j + 0.5) * selfLayout.cellWidth,
    selfLayout.y0 + 1.5 * selfLayout.cellHeight,
  );
  const inRow = await pixelOf(
    '[data-testid=row-bars]',
    rowLayout.x0 + (j + 0.5) * rowLayout.barWidth,
    rowLayout.bottom - 3,
  );
  const inSteps = await pixelOf(
    '[data-testid=step-bars]',
    stepLayout.x0 + (j + 0.5) * stepLayout.barWidth,
    stepLayout.bottom - 3,
  );
  expect(inRow).toEqual(inMap);
  expect(inSteps).toEqual(inMap);
  const shown = await page.evaluate(() => window.__demo.shown());
  expect(rowLayout.max).toBe(shown.domains.self[1]);
  expect(stepLayout.max).toBe(shown.domains.self[1]);
  // The multi-head maps share one scale, the average's included.
  const mha = Object.entries(shown.domains)
    .filter(([k]) => k !== 'self')
    .map(([, d]) => d[1]);
  expect(new Set(mha).size).toBe(1);
  expect(mha[0]).toBe(Math.max(...shown.heads.flat(), ...shown.average));
});

test('4. the Q/K/V strips read out the value under the pointer and under the keyboard cursor', async () => {
  await page.selectOption('[data-testid=source]', 'self');
  await page.selectOption('[data-testid=query]', '1');
  const api = await replayInPage(page);
  const it = api.self.intermediates;
  const d = 512;
  const k = page.locator('[data-testid=step-k]');
  await k.scrollIntoViewIfNeeded();
  const box = await k.boundingBox();
  const layout = JSON.parse(await k.getAttribute('data-layout'));
  await page.mouse.move(box.x + layout.x0 + (5 + 0.5) * layout.cellWidth, box.y + layout.y0 + 2.5 * layout.cellHeight);
  const readout = page.locator('[data-testid=step-k-readout]');
  expect(await readout.textContent()).toMatch(/^K \(one row per key\) · row 3 “A” · dim 6 of 512: /);
  expect(Math.fround(Number(await readout.getAttribute('data-value')))).toBe(it.k[2 * d + 5]);

  await page.focus('[data-testid=step-q]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const q = page.locator('[data-testid=step-q-readout]');
  expect(await q.textContent()).toMatch(/dim 3 of 512: /);
  expect(Math.fround(Number(await q.getAttribute('data-value')))).toBe(it.q[1 * d + 2]);
});

test('5. heatmaps work from the keyboard: arrows move the cell, Enter follows the row', async () => {
  await page.focus('[data-testid=heatmap-self]');
  expect(await page.evaluate(() => document.activeElement.dataset.testid)).toBe('heatmap-self');
  const shown = await page.evaluate(() => window.__demo.shown());
  for (const key of ['ArrowUp', 'ArrowUp', 'ArrowUp', 'Home']) await page.keyboard.press(key); // to the top-left cell
  expect(await page.evaluate(() => window.__demo.selection.cell)).toEqual({ i: 0, j: 0 });
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  expect(await page.evaluate(() => window.__demo.selection.cell)).toEqual({ i: 2, j: 1 });
  // The cursor's cell is read out in the map's live line (3 significant digits).
  expect(await vizReadout(page, '#self-map')).toEqual({
    query: 'A',
    queryAt: 3,
    key: '愛',
    keyAt: 2,
    weight: Number(shown.self[2 * 4 + 1].toPrecision(3)),
  });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=steps]').dataset.query === '2');
  expect(await page.locator('[data-testid=query]').inputValue()).toBe('2');
  expect(await page.locator('[data-testid=source]').inputValue()).toBe('self');
  // Tab reaches the head maps too, and the selection follows the map Enter was pressed on.
  await page.focus('[data-testid=heatmap-head][data-head="1"]');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=source]').value === 'head:1');
  expect(await page.evaluate(() => document.activeElement.dataset.head)).toBe('1'); // focus stays on the map
});

/** WCAG contrast ratio of two [r, g, b] colours. */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('5. masked cells in the steps table keep their text at ≥ 4.5:1 contrast', async () => {
  await setAndCompute({ causal: true });
  const colours = await page.evaluate(() => {
    const td = document.querySelector('[data-testid=row-scores] td.masked');
    const cs = getComputedStyle(td);
    const rgb = (s) =>
      s
        .match(/\d+(\.\d+)?/g)
        .slice(0, 3)
        .map(Number);
    return {
      text: rgb(cs.color),
      backgrounds: (cs.backgroundImage.match(/rgba?\([^)]*\)/g) ?? [cs.backgroundColor]).map(rgb),
    };
  });
  expect(colours.backgrounds.length).toBeGreaterThan(0);
  for (const bg of colours.backgrounds) expect(contrast(colours.text, bg)).toBeGreaterThanOrEqual(4.5);
});

test('5. headings never skip a level, all content sits in landmarks, and axe-core finds no violations', async () => {
  await page.selectOption('[data-testid=source]', 'self'); // the steps with their h3s
  const structure = await page.evaluate(() => ({
    levels: Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'), (h) => Number(h.tagName[1])),
    outside: Array.from(document.body.children)
      .filter((n) => !['HEADER', 'MAIN', 'FOOTER', 'SCRIPT'].includes(n.tagName) && !n.hidden)
      .map((n) => n.id || n.tagName),
  }));
  expect(structure.levels[0]).toBe(1);
  structure.levels.forEach((l, k) => {
    if (k) expect(l - structure.levels[k - 1]).toBeLessThanOrEqual(1);
  });
  expect(structure.outside).toEqual([]);

  const violations = await axeViolations(page);
  expect(violations).toEqual([]);
});

test('5. on a 390 px phone the page fits: no horizontal scroll', async () => {
  const phone = await launchBrowser({ viewport: { width: 390, height: 844 } });
  const seen = watchProblems(phone.page);
  try {
    await openPage(phone.page, server.url);
    for (const values of [
      null,
      { text: LONG.slice(0, 64) },
      { text: LONG.slice(0, 128), dModel: '1024', heads: '16', causal: true },
    ]) {
      if (values) await setAndCompute(values, phone.page);
      await phone.page.selectOption('[data-testid=source]', 'self');
      const width = await phone.page.evaluate(() => document.documentElement.scrollWidth);
      expect([values?.text?.length ?? 4, width]).toEqual([values?.text?.length ?? 4, 390]);
    }
    await setAndCompute(DEFAULTS, phone.page);
    await phone.page.selectOption('[data-testid=query]', '1');
    fs.mkdirSync(path.dirname(PHONE_SCREENSHOT), { recursive: true });
    await phone.page.screenshot({ path: PHONE_SCREENSHOT, fullPage: true });
  } finally {
    await phone.close();
  }
  expect(seen).toEqual([]);
});

/** Decodes a PNG in the page: { width, height, red } with red = pixels of the selection outline's reds. */
async function pngStats(file) {
  const b64 = fs.readFileSync(file).toString('base64');
  return page.evaluate(async (data) => {
    const blob = await (await fetch(`data:image/png;base64,${data}`)).blob();
    const bitmap = await createImageBitmap(blob);
    const c = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let red = 0;
    for (let k = 0; k < px.length; k += 4) if (px[k] > 150 && px[k + 1] < 90 && px[k + 2] < 90) red += 1;
    return { width: c.width, height: c.height, red };
  }, b64);
}

test('6. the PNG has no selection outline and one colour scale; the JSON has the intermediates shown', async () => {
  // A selection is showing on the page (a row outlined in red in the single head's map).
  await page.selectOption('[data-testid=source]', 'self');
  await page.selectOption('[data-testid=query]', '2');
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-png]')]);
  const stats = await pngStats(await png.path());
  expect(stats.width).toBeGreaterThan(300);
  expect(stats.red).toBe(0);
  const shown = await page.evaluate(() => window.__demo.shown());
  const info = await page.evaluate(() => window.__demo.lastPNG);
  expect(info.titles.filter((t) => t === 'colour scale')).toHaveLength(1);
  expect(info.titles).toHaveLength(1 + 8 + 1 + 1);
  // One scale for every map: the viz's, weight 0 … 1 (every weight shown lies in it).
  expect(info.domain).toEqual([0, 1]);
  expect(Math.max(...shown.self, ...shown.heads.flat(), ...shown.average)).toBeLessThanOrEqual(1);

  const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-json]')]);
  const doc = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
  const api = await replayInPage(page);
  const n = 4;
  const it = doc.selfAttention.intermediates;
  for (const name of ['q', 'k', 'v']) expectClose(it[name].flat(), api.self.intermediates[name], `JSON self ${name}`);
  for (const name of ['scores', 'scaledScores'])
    expectClose(it[name].flat(), api.self.intermediates[name], `JSON self ${name}`);
  const heads = doc.multiHeadAttention.headIntermediates;
  expect(heads).toHaveLength(8);
  const E = 512;
  const d = 64;
  const h = 5;
  const gather = (m) =>
    Array.from({ length: n }, (_, j) => Array.from(m.subarray(j * E + h * d, j * E + (h + 1) * d))).flat();
  for (const name of ['q', 'k', 'v'])
    expectClose(heads[h][name].flat(), gather(api.heads.intermediates[name]), `JSON head 6 ${name}`);
  expectClose(
    heads[h].scores.flat(),
    api.heads.intermediates.scores.subarray(h * n * n, (h + 1) * n * n),
    'JSON head 6 scores',
  );
  expectClose(
    heads[h].scaledScores.flat(),
    api.heads.intermediates.scaledScores.subarray(h * n * n, (h + 1) * n * n),
    'JSON head 6 scaled',
  );
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
