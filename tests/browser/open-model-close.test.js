// "Open a model" → Close model in Chromium: a model opened and run, then closed from the keyboard
// (the worker disposes it: the weights it reported go to 0, the tab is back to its empty state),
// then another model opened and run as in Node; closing during a long generation and during a
// stalled download stops them first, and the page opens the next model after each. Opening a model
// while a generation runs also ends the run before the old model is freed.
const fs = require('node:fs');
const path = require('node:path');
const {
  FIXTURES,
  fixtureFiles,
  expectedOf,
  nodeResult,
  startFixtureServer,
  runPrompt,
  writeRandomGpt2,
  tabSession,
  openFiles,
} = require('./open-model-harness');

const session = tabSession();
let page;
let problems;
beforeAll(() => {
  ({ page, problems } = session);
});

/** Presses Close model from the keyboard and waits until the tab is empty again. */
async function closeFromKeyboard() {
  await page.focus('[data-testid=om-close]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__openModel.state === 'idle', null, { timeout: 30000 });
}

/**
 * Opens the random gpt2 written in `dir`, starts a 256-token generation and, as soon as three new
 * tokens are there, resolves to whether the run had ended by then (`clickClose`: Close model is
 * clicked in the page at that very moment).
 */
async function midGeneration(dir, { clickClose = false } = {}) {
  const opened = await openFiles(page, [path.join(dir, 'config.json'), path.join(dir, 'model.safetensors')]);
  expect(opened).toEqual({ state: 'ready', error: null });
  const before = await page.evaluate(() => window.__openModel.run?.id ?? 0);
  await page.fill('[data-testid=om-prompt]', '5 6 7');
  await page.fill('[data-testid=om-max-new]', '256');
  await page.click('[data-testid=om-run]');
  return page.evaluate(
    ({ b, close }) =>
      new Promise((resolve) => {
        const check = () => {
          const r = window.__openModel.run;
          if (!(r && r.id > b && r.ids.length >= r.promptLength + 3)) return setTimeout(check, 0);
          const done = r.done;
          if (close) document.querySelector('[data-testid=om-close]').click();
          return resolve(done);
        };
        check();
      }),
    { b: before, close: clickClose },
  );
}

/** What the tab shows of a model: nothing, once it is closed. */
const tabView = () =>
  page.evaluate(() => {
    const q = (id) => document.querySelector(`[data-testid=${id}]`);
    const t = window.__openModel;
    return {
      modelHidden: q('om-model').hidden,
      viewsHidden: q('om-views').hidden,
      tokens: q('om-tokens').children.length,
      output: q('om-output').textContent,
      facts: q('om-facts').textContent,
      thumbs: q('om-model-view').querySelectorAll('[data-testid=thumb]').length,
      closeDisabled: q('om-close').disabled,
      config: t.config,
      run: t.run,
      error: t.error,
    };
  });

const EMPTY = {
  modelHidden: true,
  viewsHidden: true,
  tokens: 0,
  output: '',
  facts: '',
  thumbs: 0,
  closeDisabled: true,
  config: null,
  run: null,
  error: null,
};

test('Close model is disabled with no model, and has a label that says what it does', async () => {
  const button = await page.evaluate(() => {
    const b = document.querySelector('[data-testid=om-close]');
    return { tag: b.tagName, text: b.textContent, disabled: b.disabled };
  });
  expect(button).toEqual({ tag: 'BUTTON', text: 'Close model', disabled: true });
});

test('closing an opened gpt2 frees its weights and empties the tab; a llama opened next runs as in Node', async () => {
  const { prompt } = expectedOf('gpt2');
  expect(await openFiles(page, fixtureFiles('gpt2'))).toEqual({ state: 'ready', error: null });
  await runPrompt(page, { prompt, maxNew: 6 });
  expect(await page.isEnabled('[data-testid=om-close]')).toBe(true);
  const held = await page.evaluate(() => window.__openModel.memory.weightBytes);
  expect(held).toBeGreaterThan(0);

  await closeFromKeyboard();
  expect(await tabView()).toEqual(EMPTY);
  const freed = await page.evaluate(() => window.__openModel.memory);
  expect(freed.weightBytes).toBe(0);
  expect(freed.cacheBytes).toBe(0);
  expect(await page.textContent('[data-testid=om-memory]')).toMatch(/\(weights 0 B, caches 0 B\)$/);
  expect(await page.textContent('[data-testid=om-status]')).toBe(
    'The model was closed and its memory freed. Open another one above.',
  );

  const name = 'llama-gqa-llama3-sharded';
  const llamaPrompt = expectedOf(name).prompt;
  const [opened, want] = await Promise.all([openFiles(page, fixtureFiles(name)), nodeResult(name, llamaPrompt)]);
  expect(opened).toEqual({ state: 'ready', error: null });
  const run = await runPrompt(page, { prompt: llamaPrompt, maxNew: 6 });
  expect(run.newIds).toEqual(want.newIds);
  expect(run.text).toBe(want.text);
  expect(await page.textContent('[data-testid=om-facts]')).toContain('llama, a decoder');
});

test('closing during a long generation stops it first; the next model opens and runs', async () => {
  const dir = writeRandomGpt2({ layers: 4, hidden: 256, heads: 4, vocab: 2048, positions: 512, seed: 5 });
  try {
    // Close, clicked in the page as soon as three new tokens are there: the generation is mid-way.
    expect(await midGeneration(dir, { clickClose: true })).toBe(false);
    await page.waitForFunction(() => window.__openModel.state === 'idle', null, { timeout: 30000 });
    expect(await tabView()).toEqual(EMPTY);
    expect(await page.evaluate(() => window.__openModel.memory.weightBytes)).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const { prompt } = expectedOf('gpt2');
  const [opened, want] = await Promise.all([openFiles(page, fixtureFiles('gpt2')), nodeResult('gpt2', prompt)]);
  expect(opened).toEqual({ state: 'ready', error: null });
  const run = await runPrompt(page, { prompt, maxNew: 6 });
  expect(run.newIds).toEqual(want.newIds);
});

test('closing during a stalled download cancels it: nothing is kept, no error is shown, the next model opens', async () => {
  await closeFromKeyboard(); // the gpt2 of the test before
  const hub = await startFixtureServer({ stall: ['gpt2/model.safetensors'] });
  const earlier = problems.length;
  try {
    await page.fill('[data-testid=om-url]', `${hub.url}gpt2/`);
    await page.click('[data-testid=om-open-url]');
    await page.waitForFunction(() =>
      /^Reading model\.safetensors: /.test(document.querySelector('[data-testid=om-status]').textContent),
    );
    expect(await page.isEnabled('[data-testid=om-close]')).toBe(true);
    await closeFromKeyboard();
    expect(await tabView()).toEqual(EMPTY);
    expect(await page.isHidden('[data-testid=om-loading]')).toBe(true);
    expect(await page.evaluate(() => window.__openModel.memory.weightBytes)).toBe(0);
  } finally {
    await hub.close();
  }
  const size = fs.statSync(path.join(FIXTURES, 'gpt2', 'model.safetensors')).size;
  expect(await openFiles(page, fixtureFiles('gpt2'))).toEqual({ state: 'ready', error: null });
  expect(await page.evaluate(() => window.__openModel.files.find((f) => f.name === 'model.safetensors').bytes)).toBe(
    size,
  );
  // The browser logs the download the close aborted, and only that.
  const aborted = problems.splice(earlier);
  expect(aborted.every((p) => p.startsWith(`request failed: ${hub.url}gpt2/model.safetensors`))).toBe(true);
});

test('opening another model during a long generation ends the run first; the new model runs as in Node', async () => {
  await closeFromKeyboard(); // the gpt2 of the test before
  const dir = writeRandomGpt2({ layers: 4, hidden: 256, heads: 4, vocab: 2048, positions: 512, seed: 6 });
  const name = 'llama-gqa-llama3-sharded';
  const { prompt } = expectedOf(name);
  try {
    expect(await midGeneration(dir)).toBe(false);
    // The next model's files, chosen while the generation runs.
    const [reopened, want] = await Promise.all([openFiles(page, fixtureFiles(name)), nodeResult(name, prompt)]);
    expect(reopened).toEqual({ state: 'ready', error: null });
    expect(await page.evaluate(() => window.__openModel.error)).toBe(null);
    const run = await runPrompt(page, { prompt, maxNew: 6 });
    expect(run.newIds).toEqual(want.newIds);
    expect(run.text).toBe(want.text);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no console error, failed request or page error while closing models', () => {
  expect(problems).toEqual([]);
});
