// wasm-attention/viz's createHeatmap in Chromium: drawing, the hover and keyboard read-out,
// zoom and pan, a 2,048 × 2,048 map with thinned labels, incremental rows, update/dispose, axe.
const { axeViolations, canvasPixels, cellCenter, runInPage } = require('./harness');
const { useBlankPage } = require('./viz-session');

const MODULES = { viz: '/viz/index.mjs', t: '/tests/browser/viz-page.mjs' };
const CANVAS = '[data-testid=viz-heatmap-canvas]';
const session = useBlankPage();
let page;
beforeAll(() => {
  page = session.page;
});

/** Creates a heatmap of a T × T causal map in a fresh page; options are extra creation options. */
function makeMap(T, options = {}, width = 700) {
  return runInPage(
    page,
    MODULES,
    (m, a) => {
      window.w = m.t.causalMap(a.T, 3);
      window.toks = m.t.tokens(a.T);
      window.view = m.viz.createHeatmap(m.t.mount(a.width), {
        weights: window.w,
        queryTokens: window.toks,
        causal: true,
        title: 'map under test',
        ...a.options,
      });
      return JSON.parse(document.querySelector('[data-testid=viz-heatmap-canvas]').dataset.layout);
    },
    { T, options, width },
  );
}

const readout = () => page.locator('[data-testid=viz-readout]').textContent();
const weightAt = (i, j) => page.evaluate(([a, b]) => window.w[a * window.toks.length + b], [i, j]);

/** The significant digits of a number as printed (leading zeros dropped). */
const significant = (text) =>
  text
    .replace(/^[0.]+/, '')
    .replace(/e.*$/, '')
    .replace('.', '').length;

test('draws every cell in its weight colour, the causal triangle masked, and titles the map', async () => {
  const layout = await makeMap(8);
  expect(layout).toMatchObject({ rows: 8, cols: 8, zoom: 1 });
  const [px] = await canvasPixels(page, CANVAS, [
    [7, 0],
    [0, 0],
    [0, 7],
    [3, 5],
  ]);
  expect(px.distinct).toBeGreaterThan(8);
  // Row 0 puts all its weight on key 0: the scale's top (yellow); masked cells are light grey.
  expect(px.colours[1][0]).toBeGreaterThan(200);
  expect(px.colours[1][1]).toBeGreaterThan(200);
  for (const masked of [px.colours[2], px.colours[3]]) {
    expect(Math.max(...masked) - Math.min(...masked)).toBeLessThan(40);
    expect(masked[0]).toBeGreaterThan(150);
  }
  expect(await page.locator('.wa-viz-title').textContent()).toBe('map under test');
  expect(await page.locator(CANVAS).getAttribute('aria-label')).toMatch(/8 query × 8 key tokens, causal/);
});

test('hovering a cell reads out its query, key and weight (≥ 2 significant digits); masked cells say so', async () => {
  await makeMap(10);
  const { x, y } = await cellCenter(page, CANVAS, 6, 2);
  await page.mouse.move(x, y);
  const text = await readout();
  expect(text).toMatch(/query “t6” \(#6\) → key “t2” \(#2\): weight /);
  const printed = text.match(/weight (\S+)$/)[1];
  expect(significant(printed)).toBeGreaterThanOrEqual(2);
  const w = await weightAt(6, 2);
  expect(Math.abs(Number(printed) - w)).toBeLessThanOrEqual(Math.abs(w) * 0.01);
  const masked = await cellCenter(page, CANVAS, 2, 6);
  await page.mouse.move(masked.x, masked.y);
  expect(await readout()).toMatch(/query “t2” \(#2\) → key “t6” \(#6\): masked/);
  // The hovered row's label is drawn even where labels are thinned; the readout is a live region.
  expect(await page.locator('[data-testid=viz-readout]').getAttribute('aria-live')).toBe('polite');
});

test('keyboard: arrows, Home/End, PageUp/PageDown move the cursor and the read-out follows it', async () => {
  await makeMap(30);
  await page.locator(CANVAS).focus();
  expect(await readout()).toMatch(/query “t0” \(#0\) → key “t0” \(#0\): weight 1$/);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  expect(await readout()).toMatch(/query “t2” \(#2\) → key “t1” \(#1\): weight /);
  await page.keyboard.press('End');
  expect(await readout()).toMatch(/query “t2” \(#2\) → key “t29” \(#29\): masked/);
  await page.keyboard.press('Home');
  expect(await readout()).toMatch(/query “t2” \(#2\) → key “t0” \(#0\)/);
  // At zoom 1 a page is the whole map.
  await page.keyboard.press('PageDown');
  expect(await readout()).toMatch(/query “t29” \(#29\) → key “t0” \(#0\)/);
  await page.keyboard.press('PageUp');
  expect(await readout()).toMatch(/query “t0” \(#0\) → key “t0” \(#0\)/);
  await page.keyboard.press('Control+End');
  expect(await readout()).toMatch(/query “t29” \(#29\) → key “t29” \(#29\): weight /);
  // numberFrom: 1 counts the read-out's positions from 1, as a page's own token numbers may.
  await page.evaluate(() => window.view.update({ numberFrom: 1, cursor: { query: 2, key: 1 } }));
  expect(await readout()).toMatch(/query “t2” \(#3\) → key “t1” \(#2\): weight /);
});

test('onCursor reports every key that moves the cursor, Page Up/Down included, and not a cursor the page sets', async () => {
  await makeMap(30);
  await page.evaluate(() => {
    window.moves = [];
    window.view.update({ onCursor: (cell) => window.moves.push(cell) });
  });
  await page.locator(CANVAS).focus();
  for (const key of ['ArrowDown', 'ArrowRight', 'PageDown', 'End', 'PageUp', 'Home', 'Control+End', 'Control+Home'])
    await page.keyboard.press(key);
  await page.evaluate(() => window.view.update({ cursor: { query: 5, key: 2 } }));
  expect(await page.evaluate(() => window.moves)).toEqual([
    { query: 1, key: 0 },
    { query: 1, key: 1 },
    { query: 29, key: 1 }, // at zoom 1 a page is the whole map
    { query: 29, key: 29 },
    { query: 0, key: 29 },
    { query: 0, key: 0 },
    { query: 29, key: 29 },
    { query: 0, key: 0 },
  ]);
});

test('zoom: + and − keys, the buttons, Ctrl+wheel; panning keeps the keyboard cursor in view; 0 fits', async () => {
  const start = await makeMap(200);
  const layout = () => page.evaluate(() => JSON.parse(document.querySelector('canvas').dataset.layout));
  await page.locator(CANVAS).focus();
  await page.keyboard.press('+');
  const zoomed = await layout();
  expect(zoomed.zoom).toBeGreaterThan(1);
  expect(zoomed.cellWidth).toBeCloseTo(start.cellWidth * zoomed.zoom, 5);
  await page.keyboard.press('Control+End');
  const panned = await layout();
  expect(panned.pan.row).toBeGreaterThan(0);
  expect(panned.pan.col).toBeGreaterThan(0);
  // The cursor's cell (199, 199) is inside the viewport.
  expect(panned.y0 + 199.5 * panned.cellHeight).toBeLessThan(panned.grid.y + panned.grid.height);
  await page.keyboard.press('0');
  expect((await layout()).zoom).toBe(1);
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await page.getByRole('button', { name: 'Zoom in' }).click();
  const twice = await layout();
  expect(twice.zoom).toBeCloseTo(2.25, 5);
  await page.getByRole('button', { name: 'Zoom out' }).click();
  expect((await layout()).zoom).toBeCloseTo(1.5, 5);
  await page.getByRole('button', { name: 'Zoom to fit the whole map' }).click();
  expect((await layout()).zoom).toBe(1);
  const { x, y } = await cellCenter(page, CANVAS, 100, 100);
  await page.mouse.move(x, y);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  const wheeled = await layout();
  expect(wheeled.zoom).toBeGreaterThan(2);
  // The cell under the pointer stays under it.
  const box = await page.locator(CANVAS).boundingBox();
  expect(Math.floor((y - box.y - wheeled.y0) / wheeled.cellHeight)).toBe(100);
  // A plain wheel over a zoomed map pans it.
  await page.mouse.wheel(0, 200);
  expect((await layout()).pan.row).toBeGreaterThan(wheeled.pan.row);
});

test('legend: false and controls: false hide the scale bar and the zoom buttons; the keys still zoom; update shows them again', async () => {
  const layout = () => page.evaluate(() => JSON.parse(document.querySelector('canvas').dataset.layout));
  const shown = async () => ({
    legend: await page.locator('.wa-viz-legend').isVisible(),
    buttons: await page.getByRole('button', { name: /^Zoom / }).count(),
  });
  const start = await makeMap(200, { legend: false, controls: false });
  expect(await shown()).toEqual({ legend: false, buttons: 0 });
  // The bar keeps the title: the map is not pushed down or shrunk by what is hidden.
  expect(await page.locator('.wa-viz-title').textContent()).toBe('map under test');
  await page.locator(CANVAS).focus();
  await page.keyboard.press('+');
  expect((await layout()).zoom).toBeGreaterThan(1);
  await page.evaluate(() => window.view.update({ controls: true }));
  expect(await shown()).toEqual({ legend: false, buttons: 3 });
  await page.evaluate(() => window.view.update({ title: 'renamed' }));
  expect(await shown()).toEqual({ legend: false, buttons: 3 });
  await page.evaluate(() => window.view.update({ legend: true, controls: false }));
  expect(await shown()).toEqual({ legend: true, buttons: 0 });
  await page.evaluate(() => window.view.update({ controls: true }));
  expect(await shown()).toEqual({ legend: true, buttons: 3 });
  expect(start.rows).toBe(200);
});

test('2,048 × 2,048: drawn pooled, labels thinned so they never overlap, more labels when zoomed', async () => {
  const layout = await makeMap(2048, {}, 900);
  expect(layout).toMatchObject({ rows: 2048, cols: 2048 });
  expect(layout.level).toBeGreaterThan(1);
  const FONT = 11;
  for (const [step, drawn] of [
    [layout.rowLabelStep, layout.rowLabelsDrawn],
    [layout.colLabelStep, layout.colLabelsDrawn],
  ]) {
    expect(step * layout.cellHeight).toBeGreaterThanOrEqual(FONT + 2);
    expect(drawn).toBeGreaterThan(10);
    expect(drawn * (FONT + 2)).toBeLessThanOrEqual(layout.grid.height + FONT);
  }
  const [px] = await canvasPixels(page, CANVAS);
  expect(px.distinct).toBeGreaterThan(10);
  await page.locator(CANVAS).focus();
  for (let k = 0; k < 5; k++) await page.keyboard.press('+');
  const zoomed = JSON.parse(await page.locator(CANVAS).getAttribute('data-layout'));
  expect(zoomed.zoom).toBeGreaterThan(5);
  expect(zoomed.rowLabelStep).toBeLessThan(layout.rowLabelStep);
  expect(zoomed.rowLabelStep * zoomed.cellHeight).toBeGreaterThanOrEqual(FONT + 2);
});

test('zoomed into 2,048 × 2,048 at ≥ 1 px a cell, only the rows in view are coloured; panning colours the rest as they come', async () => {
  await makeMap(2048, {}, 900);
  const result = await page.evaluate(async () => {
    const { spyCanvas } = await import('/tests/browser/viz-page.mjs');
    const canvas = document.querySelector('[data-testid=viz-heatmap-canvas]');
    const layout = () => JSON.parse(canvas.dataset.layout);
    const spy = spyCanvas();
    canvas.focus();
    while (layout().level > 1) canvas.dispatchEvent(new KeyboardEvent('keydown', { key: '+', bubbles: true }));
    // Rows of the full-resolution level (2,048 pixels wide).
    const zoomed = { rows: spy.byWidth[2048], layout: layout() };
    spy.byWidth = {};
    canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'PageDown', bubbles: true }));
    const paged = { rows: spy.byWidth[2048] ?? 0, layout: layout() };
    spy.stop();
    return { zoomed, paged };
  });
  const inView = (l) => Math.ceil(l.grid.height / l.cellHeight) + 1;
  expect(result.zoomed.layout.level).toBe(1);
  expect(result.zoomed.rows).toBeLessThanOrEqual(inView(result.zoomed.layout));
  expect(result.zoomed.rows).toBeLessThan(2048 / 2);
  expect(result.paged.layout.pan.row).not.toBeCloseTo(result.zoomed.layout.pan.row, 0);
  expect(result.paged.rows).toBeGreaterThan(0);
  expect(result.paged.rows).toBeLessThanOrEqual(inView(result.paged.layout) + 1);
});

test('incremental: the same map with one more query (and key) row colours one row, not the grid', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const T = 200;
    const full = m.t.causalMap(T, 9);
    const toks = m.t.tokens(T);
    const spy = m.t.spyCanvas();
    const view = m.viz.createHeatmap(m.t.mount(600), {
      weights: m.t.shorter(full, T),
      queryTokens: toks.slice(0, T - 1),
      causal: true,
    });
    const first = spy.rows;
    spy.rows = 0;
    view.update({ weights: full, queryTokens: toks });
    const appended = spy.rows;
    spy.rows = 0;
    // The same pixels as a map of the whole data drawn from scratch.
    const whole = m.viz.createHeatmap(m.t.mount(600), { weights: full, queryTokens: toks, causal: true });
    const [a, b] = Array.from(
      document.querySelectorAll('canvas'),
      (c) => c.getContext('2d').getImageData(0, 0, c.width, c.height).data,
    );
    let differ = a.length === b.length ? 0 : -1;
    for (let k = 0; k < a.length && differ >= 0; k++) if (a[k] !== b[k]) differ++;
    whole.dispose();
    spy.rows = 0;
    view.update({ weights: m.t.causalMap(T, 10) });
    const changed = spy.rows;
    spy.rows = 0;
    view.update({ title: 'same data, new title' });
    const same = spy.rows;
    spy.stop();
    const layout = JSON.parse(document.querySelector('canvas').dataset.layout);
    return { first, appended, changed, same, layout, differ };
  });
  expect(result.layout.rows).toBe(200);
  expect(result.first).toBeGreaterThanOrEqual(Math.ceil(199 / result.layout.level));
  expect(result.appended).toBe(1);
  expect(result.changed).toBeGreaterThanOrEqual(Math.ceil(200 / result.layout.level));
  expect(result.same).toBe(0);
  expect(result.differ).toBe(0);
});

test('the hovered row stays visible at 1 px rows: lines outside it and a marker beside it', async () => {
  await makeMap(137, { height: 137 }, 420);
  const before = await canvasPixels(page, CANVAS, [[60, 10]]);
  const { x, y, layout } = await cellCenter(page, CANVAS, 60, 10);
  expect(layout.cellHeight).toBeLessThanOrEqual(1.01);
  await page.mouse.move(x, y);
  const after = await canvasPixels(page, CANVAS, [[60, 10]]);
  // The row's own pixels are untouched by the highlight.
  expect(after[0].colours[0]).toEqual(before[0].colours[0]);
  // The marker beside the grid, at the row's height, is the highlight red.
  const marker = await page.evaluate(
    ([row]) => {
      const c = document.querySelector('canvas');
      const l = JSON.parse(c.dataset.layout);
      const dpr = c.width / c.getBoundingClientRect().width;
      const px = c
        .getContext('2d')
        .getImageData(
          Math.floor((l.grid.x + l.grid.width + 5) * dpr),
          Math.floor((l.y0 + (row + 0.5) * l.cellHeight) * dpr),
          1,
          1,
        ).data;
      return Array.from(px.slice(0, 3));
    },
    [60],
  );
  expect(marker).toEqual([192, 57, 43]);
});

test('update keeps the options not given; keyTokens may differ from queryTokens; dispose removes all it added', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const listeners = m.t.spyListeners();
    const host = m.t.mount(500);
    host.append(document.createElement('span'));
    const before = document.body.innerHTML.length;
    const w = new Float32Array(3 * 5).fill(0.2);
    const view = m.viz.createHeatmap(host, {
      weights: w,
      queryTokens: ['a', 'b', 'c'],
      keyTokens: ['k0', 'k1', 'k2', 'k3', 'k4'],
      title: 'cross',
    });
    view.update({ causal: false });
    const layout = JSON.parse(host.querySelector('canvas').dataset.layout);
    const title = host.querySelector('.wa-viz-title').textContent;
    const added = listeners.live();
    view.dispose();
    view.dispose();
    const out = {
      layout,
      title,
      added,
      left: listeners.live(),
      children: host.children.length,
      same: document.body.innerHTML.length === before,
    };
    listeners.stop();
    return out;
  });
  expect(result.layout).toMatchObject({ rows: 3, cols: 5 });
  expect(result.title).toBe('cross');
  expect(result.added).toBeGreaterThan(5);
  expect(result.left).toBe(0);
  expect(result.children).toBe(1);
  expect(result.same).toBe(true);
});

test('bad arguments: TypeError / RangeError naming the option, what was expected and what was given', async () => {
  const errors = await runInPage(page, MODULES, (m) => {
    const host = m.t.mount();
    const w = new Float32Array(4).fill(0.5);
    const attempts = {
      element: () => m.viz.createHeatmap(null, { weights: w, queryTokens: ['a', 'b'] }),
      weightsType: () => m.viz.createHeatmap(host, { weights: [0.5, 0.5, 0.5, 0.5], queryTokens: ['a', 'b'] }),
      weightsLength: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b', 'c'] }),
      tokens: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 2] }),
      causal: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b'], causal: 'yes' }),
      unknown: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b'], colour: 'red' }),
      legend: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b'], legend: 'no' }),
      controls: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b'] }).update({ controls: 0 }),
      update: () => m.viz.createHeatmap(host, { weights: w, queryTokens: ['a', 'b'] }).update({ queryTokens: ['a'] }),
    };
    return m.t.errorsOf(attempts);
  });
  expect(errors.element).toMatch(/^TypeError: createHeatmap: element must be a DOM element.*got null/);
  expect(errors.weightsType).toMatch(
    /^TypeError: createHeatmap: weights must be a Float32Array, got an array of length 4/,
  );
  expect(errors.weightsLength).toMatch(/^RangeError: createHeatmap: weights must have 9 elements, got 4/);
  expect(errors.tokens).toMatch(/^TypeError: createHeatmap: queryTokens\[1\] must be a string, got number 2/);
  expect(errors.causal).toMatch(/^TypeError: createHeatmap: causal must be true or false, got the string "yes"/);
  expect(errors.unknown).toMatch(/^TypeError: createHeatmap: unknown option "colour"/);
  expect(errors.legend).toMatch(/^TypeError: createHeatmap: legend must be true or false, got the string "no"/);
  expect(errors.controls).toMatch(/^TypeError: createHeatmap: controls must be true or false, got number 0/);
  expect(errors.update).toMatch(/^RangeError: createHeatmap: weights must have 1 elements, got 4/);
});

test('axe-core finds no violations in a page with a heatmap, hovered and focused', async () => {
  await makeMap(40);
  await page.locator(CANVAS).focus();
  await page.keyboard.press('ArrowDown');
  expect(await axeViolations(page)).toEqual([]);
});
