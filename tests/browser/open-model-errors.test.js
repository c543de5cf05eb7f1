// "Open a model" when things go wrong, in Chromium: every refusal and failure said in the page's
// words (no config.json, a broken safetensors, another family, a missing shard, weights of another
// model, an address with no model), progress and memory while a slow download runs, Cancel, the
// page working again afterwards; axe-core, a 1366 × 768 laptop and a 390 px phone.
const fs = require('node:fs');
const path = require('node:path');
const { watchProblems, axeViolations } = require('./harness');
const {
  FIXTURES,
  fixtureFiles,
  startFixtureServer,
  openTab,
  loadsEnded,
  settled,
  runPrompt,
  tabSession,
  openFiles,
} = require('./open-model-harness');

const session = tabSession();
let page;
let problems;
beforeAll(() => {
  ({ page, problems } = session);
});

const file = (name, content) => ({
  name,
  mimeType: 'application/octet-stream',
  buffer: Buffer.isBuffer(content) ? content : Buffer.from(content),
});
const fixture = (name, f) => file(f, fs.readFileSync(path.join(FIXTURES, name, f)));

async function expectRefused(files, message) {
  const r = await openFiles(page, files);
  expect(r.state).toBe('failed');
  expect(r.error).toEqual(message);
  expect(await page.textContent('[data-testid=om-error]')).toEqual(r.error);
  expect(await page.isVisible('[data-testid=om-error]')).toBe(true);
  expect(await page.isHidden('[data-testid=om-model]')).toBe(true);
  expect(await page.isHidden('[data-testid=om-views]')).toBe(true);
}

test('files without config.json: the page says what a model folder holds', async () => {
  await expectRefused(
    fixtureFiles('gpt2', { without: ['config.json'] }),
    'No config.json among the 2 files given (model.safetensors, tokenizer.json). A model folder holds config.json ' +
      '(which architecture, how big), its weights (.safetensors) and usually tokenizer.json: choose the whole folder, ' +
      'or select those files together.',
  );
});

test('a model of another family, and a config.json that is not JSON, are refused before any weight is read', async () => {
  const weights = fixture('gpt2', 'model.safetensors');
  await expectRefused(
    [file('config.json', JSON.stringify({ model_type: 't5', d_model: 32 })), weights],
    "This is a “t5” model (config.json's model_type); the page runs llama, mistral, qwen2, gpt2 and bert checkpoints.",
  );
  const r = await openFiles(page, [file('config.json', '{ "model_type": "gpt2", '), weights]);
  expect(r.error).toMatch(/^config\.json is not valid JSON \(.+\), so the page cannot read it\.$/);
});

test('weights the page cannot use: a broken safetensors file is named, shards must all be there, .bin is explained', async () => {
  const config = fixture('gpt2', 'config.json');
  const broken = await openFiles(page, [config, file('model.safetensors', 'this is no safetensors file at all')]);
  expect(broken.state).toBe('failed');
  expect(broken.error).toMatch(/^model\.safetensors is not a readable safetensors file: .+/);
  const sharded = 'llama-gqa-llama3-sharded';
  await expectRefused(
    fixtureFiles(sharded, { without: ['model-00002-of-00002.safetensors'] }),
    'model.safetensors.index.json names 2 shards, and model-00002-of-00002.safetensors is not among the files given: ' +
      'add it (or choose the whole folder).',
  );
  const bin = await openFiles(page, [config, file('pytorch_model.bin', 'pickle')]);
  expect(bin.error).toMatch(/^No \.safetensors weights: only pytorch_model\.bin, a format this page does not read\./);
  const none = await openFiles(page, [config]);
  expect(none.error).toBe(
    'No weights: a checkpoint holds model.safetensors, or its shards with model.safetensors.index.json.',
  );
});

test('weights of another model than config.json says: the tensor that does not fit is named', async () => {
  const r = await openFiles(page, [fixture('gpt2', 'config.json'), fixture('bert-mlm', 'model.safetensors')]);
  expect(r.state).toBe('failed');
  expect(r.error).toMatch(/^The weights do not match config\.json: .*(wte|wpe|h\.0|c_attn)/);
});

test('an address with no model: the page says it is not a model folder, and how to name a Hub model', async () => {
  const before = await loadsEnded(page);
  await page.fill('[data-testid=om-url]', '/no/model/here/');
  await page.click('[data-testid=om-open-url]');
  const r = await settled(page, before);
  expect(r).toEqual({
    state: 'failed',
    error:
      `No config.json at ${session.server.url}no/model/here/: that address is not a model folder (one holding config.json ` +
      'and its weights). For a model on the Hugging Face Hub, give its page (https://huggingface.co/owner/name).',
  });
  // The browser logs the 404 itself; nothing else went wrong.
  expect(problems.filter((p) => !p.includes('/no/model/here/config.json'))).toEqual([]);
  problems.length = 0;
});

test('a server that lets no other site read its files, and a gated model (HTTP 401), are explained', async () => {
  const closed = await startFixtureServer({ cors: false });
  const gated = await startFixtureServer({ refuse: ['gpt2/'] });
  try {
    for (const [url, message] of [
      [
        `${closed.url}gpt2/`,
        new RegExp(
          `^The browser could not fetch the model from ${closed.url}gpt2/: the server is unreachable, or it does ` +
            'not let other sites read its files \\(CORS\\)\\. ',
        ),
      ],
      [
        `${gated.url}gpt2/`,
        /^The server refused to send the model \(HTTP 401\): a gated or private model on the Hub needs an account that accepted its licence and a token, which this page does not send\. Download it and open the folder instead\.$/,
      ],
    ]) {
      const before = await loadsEnded(page);
      await page.fill('[data-testid=om-url]', url);
      await page.click('[data-testid=om-open-url]');
      const r = await settled(page, before);
      expect(r.state).toBe('failed');
      expect(r.error).toMatch(message);
    }
  } finally {
    await closed.close();
    await gated.close();
  }
  problems.length = 0; // the browser logs the blocked and refused requests itself
});

test('a slow download shows progress and memory; Cancel stops it, keeps nothing, and the page opens the next model', async () => {
  const hub = await startFixtureServer({ stall: ['gpt2/model.safetensors'] });
  try {
    const before = await loadsEnded(page);
    await page.fill('[data-testid=om-url]', `${hub.url}gpt2/`);
    await page.click('[data-testid=om-open-url]');
    // Half of model.safetensors arrives, then nothing: the page says how far it got.
    await page.waitForFunction(() =>
      /^Reading model\.safetensors: /.test(document.querySelector('[data-testid=om-status]').textContent),
    );
    const size = fs.statSync(path.join(FIXTURES, 'gpt2', 'model.safetensors')).size;
    const during = await page.evaluate(() => ({
      status: document.querySelector('[data-testid=om-status]').textContent,
      progress: document.querySelector('[data-testid=om-progress]').value,
      memory: document.querySelector('[data-testid=om-memory]').textContent,
      loading: !document.querySelector('[data-testid=om-loading]').hidden,
    }));
    expect(during.loading).toBe(true);
    expect(during.progress).toBeCloseTo((size >> 1) / size, 2);
    expect(during.status).toMatch(/^Reading model\.safetensors: [\d.]+ KiB of [\d.]+ KiB — [\d.]+ KiB so far$/);
    expect(during.memory).toMatch(/^Memory: files [\d.]+ KiB · engine memory [\d.]+ MiB \(weights 0 B, caches 0 B\)$/);
    await page.click('[data-testid=om-cancel]');
    const r = await settled(page, before);
    expect(r).toEqual({ state: 'cancelled', error: 'Loading was cancelled; nothing of that model was kept.' });
    expect(await page.isHidden('[data-testid=om-loading]')).toBe(true);
    expect(await page.textContent('[data-testid=om-memory]')).toMatch(/\(weights 0 B, caches 0 B\)$/);
  } finally {
    await hub.close();
  }
  // The page is not stuck: the same model, from files, opens and runs.
  const opened = await openFiles(page, fixtureFiles('gpt2'));
  expect(opened).toEqual({ state: 'ready', error: null });
  expect(await page.evaluate(() => window.__openModel.memory.weightBytes)).toBeGreaterThan(0);
});

test('a prompt longer than the model’s positions is refused in words, and the model still runs', async () => {
  const r = await runPrompt(page, { prompt: 'the cat sat on the mat '.repeat(8), maxNew: 4 });
  const error = await page.evaluate(() => window.__openModel.runError);
  expect(error).toMatch(
    /^The model could not run this prompt — RangeError: the prompt has \d+ tokens, more than the 32 positions this model holds\.$/,
  );
  expect(r.promptLength).toBeGreaterThan(0); // the earlier run stays drawn
  const again = await runPrompt(page, { prompt: 'hello world', maxNew: 4 });
  expect(again.newIds).toHaveLength(4);
  expect(await page.isHidden('[data-testid=om-run-error]')).toBe(true);
});

test('axe-core finds no violation on the tab with a model open, its maps drawn', async () => {
  expect(await page.isVisible('[data-testid=om-views]')).toBe(true);
  expect(await axeViolations(page)).toEqual([]);
});

test('views that cannot load: the tokens are still shown, and the page says what is missing', async () => {
  const other = await session.browser.context.newPage();
  try {
    await other.route('**/viz/index.mjs', (route) => route.abort());
    await openTab(other, session.server.url);
    await other.setInputFiles('[data-testid=om-files]', fixtureFiles('gpt2'));
    await other.waitForFunction(() => window.__openModel.runError, null, { timeout: 60000 });
    expect(await other.evaluate(() => window.__openModel.state)).toBe('ready');
    expect(await other.textContent('[data-testid=om-run-error]')).toMatch(
      /^The attention views \(wasm-attention\/viz\) could not be loaded from \/viz\/index\.mjs — TypeError: .+\.$/,
    );
    expect(await other.locator('[data-testid=om-token]').count()).toBeGreaterThan(0);
    // (the page's own tabs import the views too, so here they stay unbound: the text is read, not seen)
    expect(await other.textContent('[data-testid=om-output]')).toMatch(/^Continuation: /);
  } finally {
    await other.close();
  }
});

const SCREENSHOTS = path.join(__dirname, '..', '..', 'build', 'screenshots');

test.each([
  ['a 1366 × 768 laptop', 1366, 768],
  ['a 390 px phone', 390, 844],
])('on %s the tab fits: a sharded model opens and runs without horizontal scrolling', async (_, width, height) => {
  const other = await session.browser.context.newPage();
  const otherProblems = watchProblems(other);
  try {
    await other.setViewportSize({ width, height });
    await openTab(other, session.server.url);
    const before = await other.evaluate(() => window.__openModel.loads);
    await other.setInputFiles('[data-testid=om-files]', fixtureFiles('llama-gqa-llama3-sharded'));
    expect(await settled(other, before)).toEqual({ state: 'ready', error: null });
    const widths = await other.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      view: document.documentElement.clientWidth,
    }));
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    expect(await other.isVisible('[data-testid=om-views]')).toBe(true);
    expect(await axeViolations(other)).toEqual([]);
    expect(otherProblems).toEqual([]);
    // For the note: the tab with a model open, whole (build/ is not in git).
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await other.screenshot({ path: path.join(SCREENSHOTS, `open-model-${width}.png`), fullPage: true });
  } finally {
    await other.close();
  }
});

test('the file buttons, the address and Open are reachable by keyboard, the tab by its arrow keys', async () => {
  await page.focus('[data-testid=tab-textbook]');
  await page.keyboard.press('ArrowRight');
  expect(await page.evaluate(() => document.activeElement.dataset.testid)).toBe('tab-open');
  expect(await page.isVisible('[data-testid=panel-open]')).toBe(true);
  const order = [];
  for (let k = 0; k < 4; k++) {
    await page.keyboard.press('Tab');
    order.push(await page.evaluate(() => document.activeElement.dataset.testid));
  }
  expect(order).toEqual(['om-folder', 'om-files', 'om-url', 'om-open-url']);
});
