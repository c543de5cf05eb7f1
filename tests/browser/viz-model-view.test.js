// wasm-attention/viz's createModelView in Chromium: a labelled thumbnail per layer × head,
// K/V groups named, one tab stop with arrow keys inside, onSelect by click and Enter,
// incremental thumbnails, update/dispose, errors, axe.
const { axeViolations, canvasPixels, runInPage } = require('./harness');
const { useBlankPage } = require('./viz-session');

const MODULES = { viz: '/viz/index.mjs', t: '/tests/browser/viz-page.mjs' };
const session = useBlankPage();
let page;
beforeAll(() => {
  page = session.page;
});

function makeView(layers, heads, kv, T, width = 900) {
  return runInPage(
    page,
    MODULES,
    (m, a) => {
      window.picks = [];
      const before = document.createElement('button');
      before.textContent = 'before';
      m.t.mount(a.width).append(before);
      window.view = m.viz.createModelView(m.t.mount(a.width), {
        attention: m.t.attentionOf(a.layers, a.heads, a.T, 2),
        tokens: m.t.tokens(a.T),
        numKvHeads: a.kv,
        onSelect: (pick) => window.picks.push(pick),
      });
    },
    { layers, heads, kv, T, width },
  );
}
const picks = () => page.evaluate(() => window.picks);
const focused = () =>
  page.evaluate(() => {
    const n = document.activeElement;
    return n?.dataset.layer ? { layer: Number(n.dataset.layer), head: Number(n.dataset.head) } : n?.tagName;
  });

test('a labelled, drawn thumbnail per layer × head; K/V groups named in text and each accessible name', async () => {
  await makeView(3, 8, 2, 16);
  const thumbs = page.locator('[data-testid=thumb]');
  expect(await thumbs.count()).toBe(24);
  expect(await thumbs.nth(13).innerText()).toBe('L1 H5');
  expect(await thumbs.nth(13).getAttribute('aria-label')).toBe('Layer 1, head 5, K/V head 1 (shared by heads 4–7)');
  expect(await page.locator('[data-testid=viz-kv-groups]').innerText()).toMatch(
    /8 query heads share 2 K\/V heads, 4 each:\s+K\/V head 0: heads 0–3\s+K\/V head 1: heads 4–7/,
  );
  // Each group is one framed box per layer.
  expect(await page.locator('.wa-viz-group').count()).toBe(6);
  const pixels = await canvasPixels(page, '[data-testid=thumb-map]');
  expect(pixels).toHaveLength(24);
  for (const p of pixels) expect(p.distinct).toBeGreaterThan(5);
  // Different heads, different maps.
  const shots = await page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid=thumb-map]'), (c) => c.toDataURL()),
  );
  expect(new Set(shots).size).toBe(24);
});

test('without grouped heads there are no group names; every head its own K/V head', async () => {
  await makeView(1, 4, 4, 6);
  expect(await page.locator('[data-testid=viz-kv-groups]').innerText()).toBe('');
  expect(await page.locator('[data-testid=thumb]').nth(2).getAttribute('aria-label')).toBe('Layer 0, head 2');
});

test('one tab stop: Tab reaches the grid once, arrows/Home/End/PageDown move, Enter and click call onSelect', async () => {
  await makeView(4, 6, 3, 10);
  expect(await page.locator('[data-testid=thumb][tabindex="0"]').count()).toBe(1);
  await page.getByRole('button', { name: 'before' }).focus();
  await page.keyboard.press('Tab');
  expect(await focused()).toEqual({ layer: 0, head: 0 });
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  expect(await focused()).toEqual({ layer: 1, head: 2 });
  await page.keyboard.press('End');
  expect(await focused()).toEqual({ layer: 1, head: 5 });
  await page.keyboard.press('PageDown');
  expect(await focused()).toEqual({ layer: 3, head: 5 });
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  expect(await picks()).toEqual([{ layer: 3, head: 0 }]);
  expect(await page.locator('[data-testid=thumb][tabindex="0"]').count()).toBe(1);
  // Leaving the grid takes one Tab too.
  await page.keyboard.press('Tab');
  expect(await focused()).not.toEqual(expect.objectContaining({ layer: expect.any(Number) }));
  await page.locator('[data-testid=thumb][data-layer="2"][data-head="4"]').click();
  expect(await picks()).toEqual([
    { layer: 3, head: 0 },
    { layer: 2, head: 4 },
  ]);
  // The clicked thumbnail is now the grid's tab stop.
  await page.keyboard.press('Shift+Tab');
  expect(await focused()).toBe('BUTTON');
  await page.keyboard.press('Tab');
  expect(await focused()).toEqual({ layer: 2, head: 4 });
});

test('incremental: a token appended colours one row per thumbnail; the selection is marked', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const T = 120;
    const full = m.t.attentionOf(2, 4, T, 4);
    const before = full.map((layer) => {
      const out = new Float32Array(4 * (T - 1) * (T - 1));
      for (let h = 0; h < 4; h++)
        out.set(m.t.shorter(layer.subarray(h * T * T, (h + 1) * T * T), T), h * (T - 1) * (T - 1));
      return out;
    });
    const toks = m.t.tokens(T);
    const spy = m.t.spyCanvas();
    const view = m.viz.createModelView(m.t.mount(800), { attention: before, tokens: toks.slice(0, -1), numKvHeads: 2 });
    const first = spy.rows;
    spy.rows = 0;
    view.update({ attention: full, tokens: toks, selected: { layer: 1, head: 3 } });
    const appended = spy.rows;
    spy.stop();
    return {
      first,
      appended,
      selected: Array.from(document.querySelectorAll('[aria-selected=true]'), (n) => n.getAttribute('aria-label')),
    };
  });
  expect(result.first).toBeGreaterThan(8 * 10);
  expect(result.appended).toBe(8);
  expect(result.selected).toEqual(['Layer 1, head 3, K/V head 1 (shared by heads 2–3)']);
});

test('layers not computed (null, as forward gives for attention: { layers }) have no row; keys skip them', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const [a, b] = m.t.attentionOf(2, 2, 5);
    const picks = [];
    m.viz.createModelView(m.t.mount(600), {
      attention: [null, a, null, b],
      tokens: m.t.tokens(5),
      onSelect: (p) => picks.push(p),
    });
    const first = document.querySelector('[data-testid=thumb][tabindex="0"]');
    first.focus();
    first.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
    document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    return {
      rows: Array.from(document.querySelectorAll('[role=rowheader]'), (n) => n.textContent),
      summary: document.querySelector('.wa-viz-title').textContent,
      first: first.getAttribute('aria-label'),
      picks,
    };
  });
  expect(result).toEqual({
    rows: ['layer 1', 'layer 3'],
    summary: '2 layers (of 4) × 2 heads, 5 tokens',
    first: 'Layer 1, head 0',
    picks: [{ layer: 3, head: 0 }],
  });
});

test('2,048 tokens: every thumbnail drawn pooled (a pixel per block, its largest weight), the diagonal kept', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const T = 2048;
    const a = new Float32Array(2 * T * T);
    // Head 0 looks at the token before (a diagonal), head 1 at the first token.
    for (let i = 0; i < T; i++) {
      a[i * T + Math.max(0, i - 1)] = 1;
      a[T * T + i * T] = 1;
    }
    m.viz.createModelView(m.t.mount(700), { attention: [a], tokens: m.t.tokens(T) });
    return Array.from(document.querySelectorAll('[data-testid=thumb-map]'), (c) => JSON.parse(c.dataset.layout));
  });
  expect(result).toHaveLength(2);
  for (const l of result) expect([l.rows, l.cols]).toEqual([2048, 2048]);
  // Near the diagonal's middle the pooled pixel is bright in head 0 and dark in head 1.
  const [px] = await canvasPixels(page, '[data-testid=thumb-map][data-head="0"]', [[1024, 1023]]);
  const [other] = await canvasPixels(page, '[data-testid=thumb-map][data-head="1"]', [[1024, 1023]]);
  expect(px.colours[0][1]).toBeGreaterThan(200); // viridis at 1: yellow
  expect(other.colours[0][1]).toBeLessThan(60);
});

test('update keeps the rest; dispose removes every element and listener it added', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const listeners = m.t.spyListeners();
    const host = m.t.mount(600);
    const view = m.viz.createModelView(host, { attention: m.t.attentionOf(2, 2, 5), tokens: m.t.tokens(5) });
    view.update({ attention: m.t.attentionOf(3, 2, 5, 7) });
    const thumbs = host.querySelectorAll('[data-testid=thumb]').length;
    const added = listeners.live();
    view.dispose();
    const out = { thumbs, added, left: listeners.live(), children: host.children.length };
    listeners.stop();
    return out;
  });
  expect(result).toEqual({ thumbs: 6, added: expect.any(Number), left: 0, children: 0 });
  expect(result.added).toBeGreaterThan(2);
});

test('bad arguments name the option, the expectation and the value', async () => {
  const errors = await runInPage(page, MODULES, (m) => {
    const host = m.t.mount();
    const att = m.t.attentionOf(2, 4, 3);
    const tokens = ['a', 'b', 'c'];
    const tries = {
      kv: () => m.viz.createModelView(host, { attention: att, tokens, numKvHeads: 3 }),
      kvType: () => m.viz.createModelView(host, { attention: att, tokens, numKvHeads: '2' }),
      onSelect: () => m.viz.createModelView(host, { attention: att, tokens, onSelect: 'go' }),
      heads: () => m.viz.createModelView(host, { attention: [att[0], att[1].subarray(0, 9)], tokens }),
    };
    return m.t.errorsOf(tries);
  });
  expect(errors.kv).toMatch(/^RangeError: createModelView: numKvHeads must divide the 4 heads \(1 … 4\), got 3/);
  expect(errors.kvType).toMatch(/^TypeError: createModelView: numKvHeads must be an integer, got the string "2"/);
  expect(errors.onSelect).toMatch(/^TypeError: createModelView: onSelect must be a function, got the string "go"/);
  expect(errors.heads).toMatch(
    /^RangeError: createModelView: attention\[1\] has 1 heads, expected 4 as the layers before it/,
  );
});

test('axe-core finds no violations with the grid focused', async () => {
  await makeView(2, 4, 2, 8);
  await page.locator('[data-testid=thumb][tabindex="0"]').focus();
  expect(await axeViolations(page)).toEqual([]);
});
