// What the "Open a model" browser tests share: the fixture checkpoints' files as the page would be
// given them, what the package computes for them in Node (the expected tokens, never written down),
// a second server on another origin (as the Hub is), and the page's tab driven like a user does.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { createAttention, loadModel } = require('wasm-attention');
const { startServer, launchBrowser, watchProblems } = require('./harness');

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'models');
// The fixture folders also hold the float64 references: not part of a checkpoint.
const NOT_CHECKPOINT = new Set(['expected.json', 'reference.f32']);

/** Absolute paths of a fixture checkpoint's files (without the named ones). */
function fixtureFiles(name, { without = [] } = {}) {
  return fs
    .readdirSync(path.join(FIXTURES, name))
    .filter((f) => !NOT_CHECKPOINT.has(f) && !without.includes(f))
    .map((f) => path.join(FIXTURES, name, f));
}

const expectedOf = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name, 'expected.json'), 'utf8'));

/**
 * What the package gives in Node for a fixture: its greedy continuation (loadModel + generate), or for
 * an encoder the ids, and each position's best token where its best two logits are > 1e-3 apart.
 * kvDtype: the decoder's K/V cache stored so (createSession's kvDtype), as the page's runs do.
 */
async function nodeResult(name, prompt, { maxNewTokens = 6, sampling = {}, dtype = 'f32', kvDtype = null } = {}) {
  const attn = await createAttention({ threads: 1 });
  try {
    const model = await loadModel(attn, path.isAbsolute(name) ? name : path.join(FIXTURES, name), { dtype });
    if (!model.config.causal) {
      const ids = model.encode(prompt);
      const { logits } = model.forward(ids, { logits: 'all' });
      const V = model.config.vocabSize;
      const best = Array.from(ids, (_, i) => {
        const row = Array.from(logits.subarray(i * V, (i + 1) * V));
        const order = row.map((v, id) => [v, id]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
        return order[0][0] - order[1][0] > 1e-3 ? order[0][1] : null;
      });
      return { ids: Array.from(ids), best };
    }
    const ids = typeof prompt === 'string' ? model.encode(prompt) : Int32Array.from(prompt);
    // kvDtype: generate's own session would store K and V as f32
    const session = kvDtype ? { session: model.createSession({ kvDtype }) } : {};
    const out = await model.generate(ids, { maxNewTokens, ...sampling, ...session });
    return { ids: Array.from(ids), newIds: Array.from(out.ids), text: out.text };
  } finally {
    attn.dispose();
  }
}

/** A .safetensors file of float32 tensors: { name: { shape, data: Float32Array } }. */
function safetensorsBytes(tensors) {
  const header = {};
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]); // data 8-byte aligned
  const out = Buffer.alloc(8 + json.length + offset);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  let at = 8 + json.length;
  for (const { data } of Object.values(tensors)) {
    Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(out, at);
    at += data.byteLength;
  }
  return out;
}

/**
 * Writes a random gpt2 checkpoint (config.json and model.safetensors, no tokenizer) into a new
 * folder; returns its path. Weights uniform in ±scale from a seeded generator, norms at 1 and 0.
 */
function writeRandomGpt2({ layers, hidden, heads, vocab, positions, seed = 1, scale = 0.08 }) {
  let state = seed >>> 0;
  const random = (n, s = scale) =>
    Float32Array.from({ length: n }, () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return (state / 2 ** 32 - 0.5) * 2 * s;
    });
  const filled = (n, v) => new Float32Array(n).fill(v);
  const E = hidden;
  const t = (shape, data) => ({ shape, data });
  const tensors = {
    'wte.weight': t([vocab, E], random(vocab * E, 0.5)),
    'wpe.weight': t([positions, E], random(positions * E)),
  };
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}.`;
    Object.assign(tensors, {
      [`${p}ln_1.weight`]: t([E], filled(E, 1)),
      [`${p}ln_1.bias`]: t([E], filled(E, 0)),
      [`${p}attn.c_attn.weight`]: t([E, 3 * E], random(E * 3 * E)),
      [`${p}attn.c_attn.bias`]: t([3 * E], random(3 * E)),
      [`${p}attn.c_proj.weight`]: t([E, E], random(E * E)),
      [`${p}attn.c_proj.bias`]: t([E], random(E)),
      [`${p}ln_2.weight`]: t([E], filled(E, 1)),
      [`${p}ln_2.bias`]: t([E], filled(E, 0)),
      [`${p}mlp.c_fc.weight`]: t([E, 4 * E], random(E * 4 * E)),
      [`${p}mlp.c_fc.bias`]: t([4 * E], random(4 * E)),
      [`${p}mlp.c_proj.weight`]: t([4 * E, E], random(4 * E * E)),
      [`${p}mlp.c_proj.bias`]: t([E], random(E)),
    });
  }
  tensors['ln_f.weight'] = t([E], filled(E, 1));
  tensors['ln_f.bias'] = t([E], filled(E, 0));
  const config = {
    model_type: 'gpt2',
    n_embd: E,
    n_head: heads,
    n_layer: layers,
    n_positions: positions,
    vocab_size: vocab,
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-model-gpt2-'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensorsBytes(tensors));
  return dir;
}

/**
 * A server on another origin (127.0.0.1 vs localhost would do; another port is enough), serving the
 * fixture folders with CORS as the Hub does. A file listed in `stall` sends half its bytes, then
 * waits until the request is aborted: loading progress and cancel can be seen. Without `cors` the
 * browser may not read what it sends; a path starting with one in `refuse` answers 401 (a gated model).
 */
function startFixtureServer({ stall = [], cors = true, refuse = [] } = {}) {
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const headers = cors ? { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' } : {};
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '');
    if (refuse.some((prefix) => rel.startsWith(prefix))) {
      res.writeHead(401, headers).end('a token is needed');
      return;
    }
    const file = path.join(FIXTURES, rel);
    if (!file.startsWith(FIXTURES + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    const bytes = fs.readFileSync(file);
    res.writeHead(200, { ...headers, 'Content-Length': bytes.length, 'Content-Type': 'application/octet-stream' });
    if (stall.includes(rel)) res.write(bytes.subarray(0, bytes.length >> 1));
    else res.end(bytes);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/`,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(done);
          }),
      });
    });
  });
}

/** The fixture's files as the demo server serves them (URL paths), for drops made in the page. */
const fixtureUrls = (name) => fixtureFiles(name).map((f) => `/tests/fixtures/models/${name}/${path.basename(f)}`);

/** Opens the page on the "Open a model" tab. */
async function openTab(page, url) {
  await page.goto(`${url}web/#open`);
  await page.waitForFunction(() => window.__openModel && window.__openModel.state === 'idle');
}

/**
 * The demo server and a Chromium page on the tab, watched for problems, for a whole test file:
 * call in its top level; the returned object's fields are filled before its first test.
 */
function tabSession() {
  const session = { server: null, browser: null, page: null, problems: null };
  beforeAll(async () => {
    session.server = await startServer();
    session.browser = await launchBrowser();
    session.page = session.browser.page;
    session.problems = watchProblems(session.page);
    await openTab(session.page, session.server.url);
  });
  afterAll(async () => {
    await session.browser?.close();
    await session.server?.stop();
  });
  return session;
}

/** How many attempts to open a model have ended so far: give it to settled() before the next. */
const loadsEnded = (page) => page.evaluate(() => window.__openModel.loads);

/**
 * Waits until the attempt after `loads` ended ones has ended: refused, failed or cancelled, or opened
 * and, when the model has a tokenizer, its first run drawn. Resolves to { state, error }.
 */
function settled(page, loads) {
  return page
    .waitForFunction(
      (before) => {
        const t = window.__openModel;
        if (t.loads <= before) return false;
        if (t.state !== 'ready') return { state: t.state, error: t.error };
        const tokenizer = document.querySelector('[data-testid=om-prompt-help]').hidden;
        const r = t.run;
        const drawn = r && r.done && document.getElementById('panel-open').dataset.drawn === String(r.id);
        return !tokenizer || drawn ? { state: t.state, error: t.error } : false;
      },
      loads,
      { timeout: 60000 },
    )
    .then((h) => h.jsonValue());
}

/** Gives files to the tab's file input (as a user choosing several); { state, error } once it ended. */
async function openFiles(page, files, selector = '[data-testid=om-files]') {
  const before = await loadsEnded(page);
  await page.setInputFiles(selector, files);
  return settled(page, before);
}

/** Waits until the run after run `before` has ended and is drawn (or has failed). */
function runSettled(page, before) {
  return page.waitForFunction(
    (b) => {
      const t = window.__openModel;
      const r = t.run;
      if (t.runError) return true;
      return r && r.id > b && r.done && document.getElementById('panel-open').dataset.drawn === String(r.id);
    },
    before,
    { timeout: 60000 },
  );
}

/**
 * Types a prompt (text or ids), the number of new tokens and the decoding (greedy unless
 * { temperature, topK, seed } are given), runs it, and waits until it is drawn.
 */
async function runPrompt(page, { prompt, maxNew = 6, sampling = null }) {
  const before = await page.evaluate(() => window.__openModel.run?.id ?? 0);
  await page.fill('[data-testid=om-prompt]', prompt);
  if (await page.isVisible('[data-testid=om-decoding]')) {
    await page.selectOption('[data-testid=om-decoding]', sampling ? 'sample' : 'greedy');
    if (sampling) {
      await page.fill('[data-testid=om-temperature]', String(sampling.temperature));
      await page.fill('[data-testid=om-top-k]', String(sampling.topK));
      await page.fill('[data-testid=om-seed]', String(sampling.seed));
    }
  }
  if (await page.isVisible('[data-testid=om-max-new]')) await page.fill('[data-testid=om-max-new]', String(maxNew));
  await page.click('[data-testid=om-run]');
  await runSettled(page, before);
  return page.evaluate(() => window.__openModel.run);
}

module.exports = {
  tabSession,
  fixtureUrls,
  writeRandomGpt2,
  FIXTURES,
  fixtureFiles,
  expectedOf,
  nodeResult,
  startFixtureServer,
  openTab,
  loadsEnded,
  settled,
  openFiles,
  runSettled,
  runPrompt,
};
