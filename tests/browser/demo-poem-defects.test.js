// The trained-model tab's defects once found, each pinned by a Chromium test: an unfinished
// pinyin composition, the keyboard focus after Enter on a chip, a tap on a chip at 390 px, the
// prompt edited while the model writes, and the live temperature.
const { modelTabSession, runPoem } = require('./harness');

let session;
let page;
let problems;

const DEFAULTS = {
  'poem-prompt': '床前明月光，',
  'poem-max-new': '48',
  'poem-decoding': 'greedy',
  'poem-stop-at-end': true,
};

beforeAll(async () => {
  session = await modelTabSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

afterEach(async () => {
  await page.evaluate(() => window.__poem.idle());
  await page.setViewportSize({ width: 1280, height: 900 });
  await runPoem(page, DEFAULTS, { generate: false });
});

const frames = (n = 2) =>
  page.evaluate(
    (k) =>
      new Promise((resolve) => {
        const step = (left) => (left ? requestAnimationFrame(() => step(left - 1)) : resolve());
        step(k);
      }),
    n,
  );

/** Waits until the current run (a new one when `after` is given) has ended. */
const runDone = (after = null) =>
  page.waitForFunction((before) => window.__poem.run?.done && window.__poem.run.id !== before, after, {
    timeout: 60000,
  });

test('an unfinished pinyin composition is neither reported as unknown characters nor makes the maps vanish', async () => {
  const before = await page.evaluate(() => window.__poem.run.id);
  await page.focus('[data-testid=poem-prompt]');
  await page.evaluate(() => {
    const t = document.getElementById('poem-prompt');
    t.setSelectionRange(t.value.length, t.value.length);
  });
  const cdp = await page.context().newCDPSession(page);
  for (const text of ['c', 'chu', 'chuang'])
    await cdp.send('Input.imeSetComposition', { text, selectionStart: text.length, selectionEnd: text.length });
  await page.waitForTimeout(700); // past the prompt's debounce
  const composing = await page.evaluate(() => ({
    prompt: document.getElementById('poem-prompt').value,
    error: document.querySelector('[data-testid=poem-error]').hidden,
    run: window.__poem.run?.id ?? null,
    maps: document.querySelectorAll('[data-testid=thumb-map][data-layout]').length,
    output: document.getElementById('poem-output-section').hidden,
  }));
  expect(composing).toEqual({ prompt: '床前明月光，chuang', error: true, run: before, maps: 16, output: false });
  // Committing the composition runs the prompt with the character chosen.
  await cdp.send('Input.insertText', { text: '窗' });
  await runDone(before);
  expect(await page.evaluate(() => window.__poem.run.texts.join(''))).toBe('<s>床前明月光，窗');
  expect(await page.locator('[data-testid=poem-error]').isHidden()).toBe(true);
  await cdp.detach();
});

test('Enter on a chip keeps the keyboard focus on that chip, and the arrow keys go on from there', async () => {
  await page.focus('[data-testid=poem-token][data-index="3"]');
  await page.keyboard.press('Enter');
  await frames();
  const after = await page.evaluate(() => ({
    index: document.activeElement.dataset.index,
    testid: document.activeElement.dataset.testid,
    picked: document.querySelector('[data-testid=poem-token][aria-pressed=true]')?.dataset.index,
    highlight: window.__poem.ui.highlight,
  }));
  expect(after).toEqual({ index: '3', testid: 'poem-token', picked: '3', highlight: 3 });
  await page.keyboard.press('ArrowRight');
  expect(await page.evaluate(() => document.activeElement.dataset.index)).toBe('4');
  // Space too, and a generation redrawing the chips every frame keeps it as well.
  await page.keyboard.press(' ');
  await frames();
  expect(await page.evaluate(() => document.activeElement.dataset.index)).toBe('4');
});

test('the chips are one Tab stop (arrow keys move along them), so the first map is a few Tab presses from the prompt', async () => {
  await runPoem(page, { 'poem-max-new': '50', 'poem-stop-at-end': false }, { generate: true });
  expect(await page.evaluate(() => window.__poem.run.n)).toBe(57);
  await page.focus('[data-testid=poem-prompt]');
  let presses = 0;
  while (presses < 40) {
    await page.keyboard.press('Tab');
    presses++;
    if (await page.evaluate(() => document.activeElement.dataset.testid === 'thumb')) break;
  }
  expect(presses).toBeLessThanOrEqual(12); // 58 before
  // On the chips: the arrow keys, Home and End move the focus and bring each row forward.
  await page.focus('[data-testid=poem-token][data-index="0"]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  expect(await page.evaluate(() => [document.activeElement.dataset.index, window.__poem.ui.highlight])).toEqual([
    '2',
    2,
  ]);
  await page.keyboard.press('End');
  expect(await page.evaluate(() => document.activeElement.dataset.index)).toBe('56');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowLeft');
  expect(await page.evaluate(() => document.activeElement.dataset.index)).toBe('0');
  expect(
    await page.evaluate(
      () => Array.from(document.querySelectorAll('[data-testid=poem-token]')).filter((c) => c.tabIndex === 0).length,
    ),
  ).toBe(1);
});

test('tapping a chip on a 390 px phone brings its row forward in the maps', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await frames(3);
  const chip = page.locator('[data-testid=poem-token][data-index="5"]');
  await chip.scrollIntoViewIfNeeded();
  const box = await chip.boundingBox();
  const cdp = await page.context().newCDPSession(page);
  const point = [{ x: box.x + box.width / 2, y: box.y + box.height / 2 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: point });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
  await page.waitForFunction(() => window.__poem.ui.highlight === 5);
  await frames();
  expect(
    await page.evaluate(() => ({
      highlight: window.__poem.ui.highlight,
      lit: Array.from(document.querySelectorAll('[data-testid=poem-token].lit'), (c) => c.dataset.index),
    })),
  ).toEqual({ highlight: 5, lit: ['5'] });
});

test('editing the prompt while the model writes stops the generation, keeps its poem and says why', async () => {
  await page.evaluate(() => {
    document.getElementById('poem-max-new').value = '120';
    document.getElementById('poem-stop-at-end').checked = false;
    document.getElementById('poem-generate').click();
  });
  await page.waitForFunction(() => window.__poem.run && window.__poem.run.n - window.__poem.run.promptLength >= 5);
  const id = await page.evaluate(() => window.__poem.run.id);
  await page.focus('[data-testid=poem-prompt]');
  await page.keyboard.press('End');
  await page.keyboard.type('春');
  await page.waitForFunction(() => window.__poem.done !== null, null, { timeout: 30000 });
  await frames();
  const r = await page.evaluate(() => ({
    done: window.__poem.done,
    id: window.__poem.run.id,
    made: window.__poem.run.n - window.__poem.run.promptLength,
    status: document.querySelector('[data-testid=poem-status]').textContent,
    stop: document.querySelector('[data-testid=poem-stop]').disabled,
    prompt: document.getElementById('poem-prompt').value,
  }));
  expect(r.done).toBe('edited');
  expect(r.id).toBe(id); // the run on screen is still the generation, not thrown away
  expect(r.made).toBeGreaterThanOrEqual(5);
  expect(r.made).toBeLessThan(120);
  expect(r.status).toMatch(
    /characters? generated: stopped, because the prompt was edited; the poem above is what the model had written/,
  );
  expect(r.stop).toBe(true);
  expect(r.prompt).toBe('床前明月光，春');
  // The next edit (nothing running) shows the new prompt as before.
  await page.keyboard.type('风');
  await runDone(id);
  expect(await page.evaluate(() => window.__poem.run.texts.join(''))).toBe('<s>床前明月光，春风');
});

test('live temperature: the candidates are listed again at once, and a running generation samples so from its next token', async () => {
  await page.selectOption('[data-testid=poem-decoding]', 'sample');
  await runPoem(page, { 'poem-temperature': '0.8', 'poem-top-k': '20' }, { generate: false });
  const at = async () =>
    page.evaluate(() => ({
      temperature: window.__poem.run.temperature,
      shown: Array.from(document.querySelectorAll('[data-testid=poem-top-item]'), (li) => Number(li.dataset.p)),
    }));
  const cold = await at();
  expect(cold.temperature).toBe(0.8);
  await page.fill('[data-testid=poem-temperature]', '2');
  await frames();
  const hot = await at();
  expect(hot.temperature).toBe(2);
  // Hotter: the likeliest candidate loses probability, the list stays sorted.
  expect(hot.shown[0]).toBeLessThan(cold.shown[0]);
  for (let k = 1; k < hot.shown.length; k++) expect(hot.shown[k]).toBeLessThanOrEqual(hot.shown[k - 1]);
  // p(T) from p(0.8) of the same candidates: p_i(T) ∝ p_i(0.8)^(0.8 / T); ratios must agree.
  const ratio = (p) => p[1] / p[0];
  expect(ratio(hot.shown)).toBeCloseTo(ratio(cold.shown) ** (0.8 / 2), 6);

  // A greedy generation recites the anthology; switched to temperature 3 mid-run, it leaves it.
  await page.selectOption('[data-testid=poem-decoding]', 'greedy');
  await runPoem(page, { 'poem-max-new': '60', 'poem-stop-at-end': false }, { generate: false });
  await page.evaluate(() => document.getElementById('poem-generate').click());
  await page.waitForFunction(() => window.__poem.run && window.__poem.run.n - window.__poem.run.promptLength >= 3);
  // The sampling fields are filled while disabled (greedy); switching to sampling applies them.
  await page.evaluate(() => {
    document.getElementById('poem-top-k').value = '0';
    document.getElementById('poem-temperature').value = '3';
  });
  await page.selectOption('[data-testid=poem-decoding]', 'sample');
  expect(await page.locator('[data-testid=poem-status]').textContent()).toBe(
    'Generating… temperature 3, top-k all from the next character on.',
  );
  await page.waitForFunction(() => window.__poem.run.done, null, { timeout: 60000 });
  const { text, drawnAt, promptLength } = await page.evaluate(() => ({
    text: window.__poem.run.texts.join(''),
    drawnAt: window.__poem.run.drawnAt.slice(window.__poem.run.promptLength),
    promptLength: window.__poem.run.promptLength,
  }));
  // Each token says the temperature it was drawn at: greedy up to the change, 3 from then on.
  const from = drawnAt.indexOf(3);
  expect(from).toBeGreaterThanOrEqual(3);
  expect(drawnAt.slice(0, from).every((t) => t === 0)).toBe(true);
  expect(drawnAt.slice(from).every((t) => t === 3)).toBe(true);
  const greedy = '<s>床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n';
  expect(text.slice(0, promptLength + from)).toBe(greedy.slice(0, promptLength + from));
  expect(text.startsWith(greedy)).toBe(false);
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
