// wasm-attention/viz's createHeadView in Chromium: lines per head, head toggles, a token's own
// lines on hover and by keyboard with the read-out, many tokens, update/dispose, errors, axe.
const { axeViolations, runInPage } = require('./harness');
const { useBlankPage } = require('./viz-session');

const MODULES = { viz: '/viz/index.mjs', t: '/tests/browser/viz-page.mjs' };
const CANVAS = '[data-testid=viz-head-canvas]';
const session = useBlankPage();
let page;
beforeAll(() => {
  page = session.page;
});

function makeView(layers, heads, T, width = 600) {
  return runInPage(
    page,
    MODULES,
    (m, a) => {
      window.att = m.t.attentionOf(a.layers, a.heads, a.T, 5);
      window.view = m.viz.createHeadView(m.t.mount(a.width), { attention: window.att, tokens: m.t.tokens(a.T) });
      return JSON.parse(document.querySelector('[data-testid=viz-head-canvas]').dataset.layout);
    },
    { layers, heads, T, width },
  );
}
const layout = async () => JSON.parse(await page.locator(CANVAS).getAttribute('data-layout'));
const readout = () => page.locator('[data-testid=viz-readout]').textContent();

/** Lines a head view should draw: weights ≥ min (0.01) of the shown heads, of one query row or all. */
function expectedLines(heads, row, min = 0.01) {
  return page.evaluate(
    ([shown, i, least]) => {
      const a = window.att[0];
      const T = Math.round(Math.sqrt(a.length / shown.length));
      let n = 0;
      shown.forEach((on, h) => {
        if (!on) return;
        for (let q = 0; q < T; q++)
          if (i < 0 || q === i) for (let k = 0; k < T; k++) if (a[h * T * T + q * T + k] >= least) n++;
      });
      return n;
    },
    [heads, row, min],
  );
}

test('draws every head’s lines; toggling a head (aria-pressed) removes its lines', async () => {
  const first = await makeView(2, 3, 10);
  expect(first.lines).toBe(await expectedLines([true, true, true], -1));
  expect(first.lines).toBeGreaterThan(20);
  const toggles = page.locator('[data-testid=viz-head-toggle]');
  expect(await toggles.count()).toBe(3);
  expect(await toggles.nth(1).getAttribute('aria-pressed')).toBe('true');
  await toggles.nth(1).click();
  expect(await toggles.nth(1).getAttribute('aria-pressed')).toBe('false');
  expect((await layout()).lines).toBe(await expectedLines([true, false, true], -1));
  await toggles.nth(1).press('Enter');
  expect(await toggles.nth(1).getAttribute('aria-pressed')).toBe('true');
  const [px] = await require('./harness').canvasPixels(page, CANVAS);
  expect(px.distinct).toBeGreaterThan(5);
});

test('with thousands of lines only the strongest are drawn (at most 4,000; the faintest steps left out)', async () => {
  const l = await makeView(1, 4, 150);
  expect(l.lines).toBeLessThanOrEqual(4000);
  expect(l.minWeight).toBeGreaterThan(0.01);
  expect(l.lines).toBe(await expectedLines([true, true, true, true], -1, l.minWeight));
  expect(await expectedLines([true, true, true, true], -1)).toBeGreaterThan(4000);
});

test('hovering a query token shows only its lines and reads out its strongest keys', async () => {
  const l = await makeView(1, 2, 12);
  const box = await page.locator(CANVAS).boundingBox();
  await page.mouse.move(box.x + 10, box.y + l.top + 7.5 * l.rowHeight);
  const hovered = await layout();
  expect(hovered.focus).toEqual({ side: 'query', i: 7 });
  expect(hovered.lines).toBe(await expectedLines([true, true], 7));
  expect(await readout()).toMatch(/^query “t7” \(#7\) attends most to “t\d+” \(#\d+\) 0\.\d+/);
  await page.mouse.move(box.x + box.width - 10, box.y + l.top + 2.5 * l.rowHeight);
  expect((await layout()).focus).toEqual({ side: 'key', i: 2 });
  expect(await readout()).toMatch(/^key “t2” \(#2\) is attended most by/);
  await page.mouse.move(box.x - 50, box.y - 50);
  expect((await layout()).focus).toBe(null);
});

test('keyboard: focus the map, Up/Down between tokens, Left/Right between columns, Home/End', async () => {
  await makeView(1, 2, 15);
  await page.locator(CANVAS).focus();
  expect((await layout()).focus).toEqual({ side: 'query', i: 0 });
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  expect(await readout()).toMatch(/^query “t2” \(#2\) attends most to/);
  await page.keyboard.press('ArrowRight');
  expect(await readout()).toMatch(/^key “t2” \(#2\)/);
  await page.keyboard.press('End');
  expect((await layout()).focus).toEqual({ side: 'key', i: 14 });
  await page.keyboard.press('Home');
  expect((await layout()).focus).toEqual({ side: 'key', i: 0 });
});

test('2,048 tokens: labels thinned, no lines until a token is picked, then only its lines', async () => {
  const l = await makeView(1, 2, 2048, 700);
  expect(l.lines).toBe(null);
  expect(l.labelStep * l.rowHeight).toBeGreaterThanOrEqual(14);
  expect(l.labelsDrawn).toBeGreaterThan(20);
  expect(await readout()).toMatch(/too many lines/);
  await page.locator(CANVAS).focus();
  await page.keyboard.press('End');
  const focused = await layout();
  expect(focused.focus).toEqual({ side: 'query', i: 2047 });
  expect(focused.lines).toBe(await expectedLines([true, true], 2047));
});

test('update({ layer }) draws that layer and keeps the tokens; dispose removes all it added', async () => {
  const result = await runInPage(page, MODULES, (m) => {
    const listeners = m.t.spyListeners();
    const host = m.t.mount(500);
    const att = m.t.attentionOf(3, 2, 6, 8);
    const view = m.viz.createHeadView(host, { attention: att, tokens: m.t.tokens(6) });
    view.update({ layer: 2 });
    const title = host.querySelector('.wa-viz-title').textContent;
    const added = listeners.live();
    view.dispose();
    const out = { title, added, left: listeners.live(), children: host.children.length };
    listeners.stop();
    return out;
  });
  expect(result).toEqual({ title: 'Layer 2', added: expect.any(Number), left: 0, children: 0 });
  expect(result.added).toBeGreaterThan(4);
});

test('bad arguments name the option, the expectation and the value', async () => {
  const errors = await runInPage(page, MODULES, (m) => {
    const host = m.t.mount();
    const att = m.t.attentionOf(2, 2, 3);
    const tries = {
      attention: () => m.viz.createHeadView(host, { attention: att[0], tokens: ['a', 'b', 'c'] }),
      shape: () => m.viz.createHeadView(host, { attention: att, tokens: ['a', 'b'] }),
      layer: () => m.viz.createHeadView(host, { attention: att, tokens: ['a', 'b', 'c'], layer: 2 }),
      layerType: () => m.viz.createHeadView(host, { attention: att, tokens: ['a', 'b', 'c'], layer: '1' }),
      absent: () => m.viz.createHeadView(host, { attention: [att[0], null], tokens: ['a', 'b', 'c'], layer: 1 }),
    };
    return m.t.errorsOf(tries);
  });
  expect(errors.attention).toMatch(
    /^TypeError: createHeadView: attention must be an array over layers.*got a Float32Array/,
  );
  expect(errors.shape).toMatch(
    /^RangeError: createHeadView: attention\[0\] must hold numHeads × 2 × 2 weights.*got 18/,
  );
  expect(errors.layer).toMatch(/^RangeError: createHeadView: layer must be from 0 to 1, got 2/);
  expect(errors.absent).toMatch(/^RangeError: createHeadView: layer 1 was not computed \(attention\[1\] is null\)/);
  expect(errors.layerType).toMatch(/^TypeError: createHeadView: layer must be an integer, got the string "1"/);
});

test('axe-core finds no violations with a head view focused', async () => {
  await makeView(1, 4, 20);
  await page.locator(CANVAS).focus();
  expect(await axeViolations(page)).toEqual([]);
});
