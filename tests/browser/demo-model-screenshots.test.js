// Pictures of what the trained model's heads learned, written by the page itself in Chromium:
// one PNG per head listed in models/tang-poems/heads.json (opened large on its prompt), the
// whole model view, and the page on a 390 px phone (which must not scroll sideways).
// They land in build/screenshots/ (git-ignored).
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, startServer, launchBrowser, watchProblems } = require('./harness');

const OUT = path.join(ROOT, 'build', 'screenshots');
const HEADS_FILE = path.join(ROOT, 'models', 'tang-poems', 'heads.json');
// Until the heads are named, the list is empty and only the default prompt's model view is shot.
const HEADS = fs.existsSync(HEADS_FILE) ? JSON.parse(fs.readFileSync(HEADS_FILE, 'utf8')) : { prompt: '床前明月光，', heads: [] };

/** 'same position in the previous line' → 'same-position-in-the-previous-line'. */
const slug = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'head';

let server;
let browser;
let page;
let problems;

async function openModel(p) {
  await p.goto(`${server.url}web/`);
  await p.waitForSelector('body[data-model=ready]', { timeout: 60000 });
  await p.waitForFunction(() => window.__poem.run?.done);
}

/** Runs a prompt (no generation) or generates from it, and waits until it is drawn. */
async function runPrompt(p, prompt, { generate = false } = {}) {
  await p.evaluate(async ([text, gen]) => {
    const before = window.__poem.run?.id ?? 0;
    document.getElementById('poem-prompt').value = text;
    if (gen) document.getElementById('poem-generate').click();
    else document.getElementById('poem-prompt').dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((resolve) => {
      const check = () => (window.__poem.run && window.__poem.run.id !== before && window.__poem.run.done ? resolve() : setTimeout(check, 25));
      check();
    });
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }, [prompt, generate]);
}

async function openHead(p, layer, head) {
  await p.click(`[data-testid=thumb][data-layer="${layer}"][data-head="${head}"]`);
  await p.waitForFunction(([l, h]) => window.__poem.stepsShown?.layer === l && window.__poem.stepsShown?.head === h, [layer, head]);
}

/** Distinct colours on a canvas (read from a copy: no readback warnings on the page's canvases). */
function colours(p, selector) {
  return p.evaluate((sel) => Array.from(document.querySelectorAll(sel), (c) => {
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(c, 0, 0);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let k = 0; k < px.length; k += 16) seen.add((px[k] << 16) | (px[k + 1] << 8) | px[k + 2]);
    return seen.size;
  }), selector);
}

beforeAll(async () => {
  fs.mkdirSync(path.join(OUT, 'heads'), { recursive: true });
  server = await startServer();
  browser = await launchBrowser({ viewport: { width: 1280, height: 1000 } });
  page = browser.page;
  problems = watchProblems(page);
  await openModel(page);
});

afterAll(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

test('heads.json names real heads, each with a pattern', () => {
  expect(typeof HEADS.prompt).toBe('string');
  for (const h of HEADS.heads) {
    expect([h, Number.isInteger(h.layer) && Number.isInteger(h.head) && typeof h.pattern === 'string' && h.pattern.length > 0]).toEqual([h, true]);
  }
});

test('each learned head, opened large on its prompt, is written as a PNG', async () => {
  const written = [];
  for (const { layer, head, pattern } of HEADS.heads) {
    await runPrompt(page, HEADS.prompt);
    await openHead(page, layer, head);
    const [drawn] = await colours(page, '[data-testid=head-map]');
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
  const drawn = await colours(page, '[data-testid=thumb-map]');
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
    await openModel(phone.page);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await runPrompt(phone.page, HEADS.prompt, { generate: true });
    await openHead(phone.page, 0, 0);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    const [drawn] = await colours(phone.page, '[data-testid=head-map]');
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
