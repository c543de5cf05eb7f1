// Shared helpers of the browser tests: the real demo server and Debian's Chromium.
//
// The server runs as `node scripts/serve.mjs` with PORT=0 in a child process: serve.mjs is
// an ES module, and Jest (CommonJS, without --experimental-vm-modules) cannot import() one.
// This also exercises the command `npm start` ends in, including the URL it prints.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const ROOT = path.resolve(__dirname, '..', '..');
const SERVE = path.join(ROOT, 'scripts', 'serve.mjs');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Without the networking flags Chromium keeps trying to reach its update and sync services.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Starts `node <argv…>` from the repository and waits until its stdout matches `urlPattern` (the URL
 * in group 1); resolves to { url, child, stop(), output() }, or rejects naming `what` when it exits
 * first or prints nothing within timeoutMs.
 */
function startUrlChild({ argv, env = process.env, urlPattern, timeoutMs, what }) {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} printed no URL within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing its URL\nstdout: ${out}\nstderr: ${err}`));
    });
    child.stdout.on('data', () => {
      const m = urlPattern.exec(out);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ url: m[1], child, stop, output: () => ({ stdout: out, stderr: err }) });
      }
    });
  });
}

/**
 * Starts `node scripts/serve.mjs` (or with extra args / env, or another copy of the script, which
 * serves the folder above its own); resolves to { url, child, stop(), output() }.
 */
function startServer({ args = [], env = {}, timeoutMs = 15000, script = SERVE } = {}) {
  return startUrlChild({
    argv: [script, ...args],
    env: { ...process.env, PORT: '0', ...env },
    urlPattern: /Serving wasm-attention demo at (http:\/\/127\.0\.0\.1:\d+\/)/,
    timeoutMs,
    what: 'serve.mjs',
  });
}

/** Launches Chromium with a fresh, empty profile; resolves to { context, page, close() }. */
async function launchBrowser({ viewport = { width: 1280, height: 900 } } = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const close = async () => {
    await context.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, page, close };
}

/**
 * Records console errors and warnings, page errors and failed requests of a page. Playwright
 * reports the console and uncaught errors of the page's workers (nested ones too) as the page's.
 */
function watchProblems(page) {
  const problems = [];
  page.on('console', (msg) => {
    const type = msg.type();
    if (type === 'error' || type === 'warning')
      problems.push(
        `console.${type === 'warning' ? 'warn' : 'error'}: ${msg.text()} (${msg.location().url || 'no url'})`,
      );
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return problems;
}

/**
 * The demo server and a fresh Chromium on the blank test page (same origin, cross-origin isolated,
 * no page script): { server, page, problems, close() }.
 */
async function blankPageSession() {
  const server = await startServer();
  const browser = await launchBrowser();
  const problems = watchProblems(browser.page);
  await browser.page.goto(`${server.url}tests/browser/blank.html`);
  const close = async () => {
    await browser.close();
    await server.stop();
  };
  return { server, page: browser.page, problems, close };
}

/**
 * Runs fn(modules, arg) in the page, where modules maps each name to the module imported from
 * urls[name]; fn (a function or its source) travels as source, so it must use nothing of the
 * test's scope. Returns its JSON result.
 */
function runInPage(page, urls, fn, arg) {
  return page.evaluate(
    async ([source, imports, a]) => {
      const m = {};
      for (const [name, url] of Object.entries(imports)) m[name] = await import(url);
      // eslint-disable-next-line no-new-func
      return new Function('m', 'arg', `return (${source})(m, arg);`)(m, a);
    },
    [String(fn), urls, arg],
  );
}

/** Undoes the page's serialize(): { $typed, base64 } → typed arrays with the exact bytes. */
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value && typeof value === 'object') {
    if (typeof value.$typed === 'string') {
      const bytes = Buffer.from(value.base64, 'base64');
      const buffer = new ArrayBuffer(bytes.length);
      new Uint8Array(buffer).set(bytes);
      const Type = { Float32Array, Float64Array, Uint8Array, Int32Array }[value.$typed];
      if (!Type) throw new Error(`revive: unexpected typed array ${value.$typed}`);
      return new Type(buffer);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)]));
  }
  return value;
}

/** Names the first element where got and want differ by more than tol, or returns null. */
function firstMismatch(got, want, tol) {
  if (got.length !== want.length) return `length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const g = got[i];
    const w = want[i];
    const same = Number.isNaN(w) ? Number.isNaN(g) : g === w || Math.abs(g - w) <= tol;
    if (!same) return `index ${i}: got ${g}, expected ${w} (|diff| ${Math.abs(g - w)} > ${tol})`;
  }
  return null;
}

/** Throws, naming `what` and the first bad index, unless got and want agree within tol. */
function expectClose(got, want, what, tol = 1e-6) {
  const bad = firstMismatch(Array.from(got), Array.from(want), tol);
  if (bad) throw new Error(`${what}: ${bad}`);
}

/**
 * The viewport point (page.mouse coordinates) at the centre of cell (i, j) of the heatmap canvas
 * `selector`, with the canvas's box and drawn layout; scrolls it into view first.
 */
async function cellCenter(page, selector, i, j) {
  const canvas = page.locator(selector);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const layout = JSON.parse(await canvas.getAttribute('data-layout'));
  return {
    x: box.x + layout.x0 + (j + 0.5) * layout.cellWidth,
    y: box.y + layout.y0 + (i + 0.5) * layout.cellHeight,
    layout,
    box,
  };
}

/**
 * What a wasm-attention/viz heatmap inside `host` (a selector) reads out in its live line:
 * { query, queryAt, key, keyAt, weight } (positions as the page numbers them), or null.
 */
async function vizReadout(page, host) {
  const text = await page.locator(`${host} [data-testid=viz-readout]`).textContent();
  const m = /^query “(.*)” \(#(\d+)\) → key “(.*)” \(#(\d+)\): (?:weight (.+)|masked)/.exec(text);
  if (!m) return null;
  return { query: m[1], queryAt: Number(m[2]), key: m[3], keyAt: Number(m[4]), weight: m[5] ? Number(m[5]) : null };
}

/**
 * A package folder as a static host would serve it: web/, lib/ (the rules the page shares with the
 * package), viz/ (the views the page draws with), scripts/serve.mjs and the given other folders of the repository (e.g. ['dist'], never
 * models/ unless asked). Serves it and opens a new page of `browser` watched for problems:
 * { url, page, problems, close() }.
 */
async function packageFolderPage(browser, folders) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-package-'));
  for (const f of ['web', 'lib', 'viz', ...folders])
    fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(SERVE, path.join(dir, 'scripts', 'serve.mjs'));
  const server = await startServer({ script: path.join(dir, 'scripts', 'serve.mjs') });
  const page = await browser.context.newPage();
  const problems = watchProblems(page);
  const close = async () => {
    await page.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { url: server.url, page, problems, close };
}

/**
 * The demo server and a fresh Chromium whose page shows the trained-model tab, drawn:
 * { server, browser, page, problems, close() }.
 */
async function modelTabSession({ viewport } = {}) {
  const server = await startServer();
  const browser = await launchBrowser(viewport ? { viewport } : {});
  const problems = watchProblems(browser.page);
  const close = async () => {
    await browser.close();
    await server.stop();
  };
  try {
    await openModelTab(browser.page, server.url);
  } catch (e) {
    await close();
    throw e;
  }
  return { server, browser, page: browser.page, problems, close };
}

/** Opens the page on its trained-model tab and waits until the prompt's model view is drawn. */
async function openModelTab(page, url) {
  await page.goto(`${url}web/`);
  await page.waitForSelector('body[data-model=ready]', { timeout: 60000 });
  await page.waitForFunction(
    () => window.__poem.run?.done && document.querySelectorAll('[data-testid=thumb-map][data-layout]').length > 0,
  );
}

/**
 * Sets fields of the poem form by id (no events), then runs the prompt (generate: false) or
 * generates, and waits until that run has ended and is drawn.
 */
function runPoem(page, values, { generate }) {
  return page.evaluate(
    async ([v, gen]) => {
      for (const [id, value] of Object.entries(v)) {
        const node = document.getElementById(id);
        if (node.type === 'checkbox') node.checked = value;
        else node.value = value;
      }
      const before = window.__poem.run?.id ?? 0;
      if (gen) document.getElementById('poem-generate').click();
      else document.getElementById('poem-prompt').dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((resolve) => {
        const check = () =>
          window.__poem.run && window.__poem.run.id !== before && window.__poem.run.done
            ? resolve()
            : setTimeout(check, 25);
        check();
      });
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    },
    [values, generate],
  );
}

/**
 * Per canvas matching selector: its pixels' distinct colours (a blank canvas has 1) and the
 * colours at the centres of the given cells [i, j] of its drawn layout. Read from a copy: reading
 * the page's own canvases again and again makes Chromium warn (willReadFrequently) on the console.
 */
function canvasPixels(page, selector, cells = []) {
  return page.evaluate(
    ([sel, at]) =>
      Array.from(document.querySelectorAll(sel), (c) => {
        const copy = document.createElement('canvas');
        copy.width = c.width;
        copy.height = c.height;
        const ctx = copy.getContext('2d', { willReadFrequently: true });
        ctx.drawImage(c, 0, 0);
        const img = ctx.getImageData(0, 0, c.width, c.height);
        const seen = new Set();
        for (let k = 0; k < img.data.length; k += 16)
          seen.add((img.data[k] << 16) | (img.data[k + 1] << 8) | img.data[k + 2]);
        const l = c.dataset.layout ? JSON.parse(c.dataset.layout) : null;
        const dpr = c.width / c.getBoundingClientRect().width;
        const colours = at.map(([i, j]) => {
          const k =
            4 *
            (Math.floor((l.y0 + (i + 0.5) * l.cellHeight) * dpr) * img.width +
              Math.floor((l.x0 + (j + 0.5) * l.cellWidth) * dpr));
          return Array.from(img.data.slice(k, k + 3));
        });
        return { distinct: seen.size, colours };
      }),
    [selector, cells],
  );
}

/**
 * The demo page's own arguments (exact bytes) replayed through the package API in that page, so the
 * replay runs the build the page's engine runs (in Chromium the relaxed-SIMD build, which rounds
 * differently from the SIMD build a Node 20 test process has): { args, self, heads, average, info }.
 */
async function replayInPage(page) {
  return revive(
    await page.evaluate(async () => {
      const [{ createAttention }, { serialize }] = await Promise.all([
        import('/dist/index.mjs'),
        import('/web/shared/serialize.js'),
      ]);
      const attn = await createAttention({ threads: 1 });
      const { args } = window.__demo.last;
      const out = {
        args,
        self: attn.selfAttention(args.self),
        heads: attn.multiHeadAttention(args.mhaHeads),
        average: attn.multiHeadAttention(args.mhaAverage),
        info: attn.info,
      };
      attn.dispose();
      return serialize(out);
    }),
  );
}

/** axe-core's WCAG 2.1 AA and best-practice violations on the page as it is now, one line each. */
async function axeViolations(page) {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    const r = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] },
    });
    const targets = (v) =>
      v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(' '))
        .join(', ');
    return r.violations.map((v) => `${v.id}: ${v.help} — ${targets(v)}`);
  });
}

module.exports = {
  ROOT,
  axeViolations,
  startUrlChild,
  expectClose,
  cellCenter,
  vizReadout,
  startServer,
  launchBrowser,
  watchProblems,
  blankPageSession,
  runInPage,
  revive,
  firstMismatch,
  replayInPage,
  packageFolderPage,
  modelTabSession,
  openModelTab,
  runPoem,
  canvasPixels,
};
