// The installed package's demo, offline: `npx wasm-attention` in a project that installed the
// package serves a page whose poem model loads (it opened on "model … HTTP 404" before the model
// was shipped) and writes a poem.
const { launchBrowser, startUrlChild, watchProblems, runPoem } = require('./harness');
const { installPackageCopy } = require('./installed-package');

let installed;
let server;
let browser;

beforeAll(async () => {
  installed = installPackageCopy();
  server = await startUrlChild({
    argv: [installed.bin, '--port', '0'],
    urlPattern: /Serving wasm-attention demo at (http:\/\/127\.0\.0\.1:\d+\/)/,
    timeoutMs: 15000,
    what: 'npx wasm-attention',
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  installed?.remove();
});

test('the installed package’s page loads the shipped poem model and continues a poem, without a failed request', async () => {
  const page = browser.page;
  const problems = watchProblems(page);
  await page.goto(`${server.url}web/`);
  await page.waitForSelector('body[data-model=ready]', { timeout: 60000 });
  await page.waitForFunction(() => window.__poem.run?.done);
  await runPoem(page, { 'poem-max-new': '7' }, { generate: true });
  const text = await page.evaluate(() => window.__poem.run.texts.join(''));
  expect(text).toBe('<s>床前明月光，疑是地上霜。\n');
  expect(await page.locator('[data-testid=poem-error]').isHidden()).toBe(true);
  expect(problems).toEqual([]);
});
