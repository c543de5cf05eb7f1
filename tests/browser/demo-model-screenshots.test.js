// Pictures of what the trained model's heads learned, written by the page itself in Chromium:
// one PNG per head listed in models/tang-poems/heads.json (opened large on its prompt), the
// whole model view, and the page on a 390 px phone (which must not scroll sideways).
// They land in build/screenshots/ (git-ignored).
const fs = require('node:fs');
const path = require('node:path');
const {
  ROOT,
  launchBrowser,
  watchProblems,
  modelTabSession,
  openModelTab,
  runPoem,
  canvasPixels,
} = require('./harness');

const OUT = path.join(ROOT, 'build', 'screenshots');
const HEADS_FILE = path.join(ROOT, 'models', 'tang-poems', 'heads.json');
// Until the heads are named, the list is empty and only the default prompt's model view is shot.
const HEADS = fs.existsSync(HEADS_FILE)
  ? JSON.parse(fs.readFileSync(HEADS_FILE, 'utf8'))
  : { prompt: '床前明月光，', heads: [] };

/** 'same position in the previous line' → 'same-position-in-the-previous-line'. */
const slug = (text) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'head';

let session;
let server;
let page;
let problems;

/** Runs a prompt (no generation) or generates from it; waits until it is drawn. */
const runPrompt = (p, prompt, { generate = false } = {}) => runPoem(p, { 'poem-prompt': prompt }, { generate });

async function openHead(p, layer, head) {
  await p.click(`[data-testid=thumb][data-layer="${layer}"][data-head="${head}"]`);
  await p.waitForFunction(
    ([l, h]) => window.__poem.stepsShown?.layer === l && window.__poem.stepsShown?.head === h,
    [layer, head],
  );
}

const distinct = async (p, selector) => (await canvasPixels(p, selector)).map((c) => c.distinct);

beforeAll(async () => {
  fs.rmSync(path.join(OUT, 'heads'), { recursive: true, force: true }); // no picture of a head no longer listed
  fs.mkdirSync(path.join(OUT, 'heads'), { recursive: true });
  session = await modelTabSession({ viewport: { width: 1280, height: 1000 } });
  ({ server, page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

test('heads.json names real heads, each with a pattern', () => {
  expect(typeof HEADS.prompt).toBe('string');
  for (const h of HEADS.heads) {
    expect([
      h,
      Number.isInteger(h.layer) && Number.isInteger(h.head) && typeof h.pattern === 'string' && h.pattern.length > 0,
    ]).toEqual([h, true]);
  }
});

test('each learned head, opened large on its prompt, is written as a PNG', async () => {
  const written = [];
  for (const { layer, head, pattern } of HEADS.heads) {
    await runPrompt(page, HEADS.prompt);
    // The prompt field keeps the poem's line breaks: the model reads exactly heads.json's prompt.
    expect(await page.evaluate(() => window.__poem.run.texts.slice(1).join(''))).toBe(HEADS.prompt);
    await openHead(page, layer, head);
    const [drawn] = await distinct(page, '[data-testid=head-map]');
    expect([layer, head, drawn > 4]).toEqual([layer, head, true]);
    const file = path.join(OUT, 'heads', `L${layer}H${head}-${slug(pattern)}.png`);
    await page.locator('[data-testid=head-section]').screenshot({ path: file });
    expect(fs.statSync(file).size).toBeGreaterThan(5000);
    written.push(file);
  }
  expect(written).toHaveLength(HEADS.heads.length);
});

test('the whole model view of the default prompt’s poem is written as a PNG', async () => {
  await runPrompt(page, HEADS.prompt, { generate: true });
  const drawn = await distinct(page, '[data-testid=thumb-map]');
  expect(drawn.length).toBeGreaterThan(0);
  drawn.forEach((n, k) => expect([k, n > 4]).toEqual([k, true]));
  const file = path.join(OUT, 'model-view.png');
  await page.locator('#model-view-section').screenshot({ path: file });
  expect(fs.statSync(file).size).toBeGreaterThan(10000);
});

test('on a 390 px phone the model tab fits (no horizontal scroll), generated poem and open head included', async () => {
  const phone = await launchBrowser({ viewport: { width: 390, height: 844 } });
  const seen = watchProblems(phone.page);
  try {
    await openModelTab(phone.page, server.url);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await runPrompt(phone.page, HEADS.prompt, { generate: true });
    await openHead(phone.page, 0, 0);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    const [drawn] = await distinct(phone.page, '[data-testid=head-map]');
    expect(drawn).toBeGreaterThan(4);
    const file = path.join(OUT, 'model-view-390.png');
    await phone.page.screenshot({ path: file, fullPage: true });
    expect(fs.statSync(file).size).toBeGreaterThan(10000);
  } finally {
    await phone.close();
  }
  expect(seen).toEqual([]);
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
