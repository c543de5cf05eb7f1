// "Open a model" in Chromium: the fixture checkpoints opened as a user would (several files in the
// file input, a folder, a drop of files, a drop of a folder, a URL on another origin), each model's
// greedy continuation equal to what loadModel + generate give in Node, bert's encoding, every layer ×
// head drawn, a picked head's map, a checkpoint without its tokenizer (token ids typed).
const fs = require('node:fs');
const path = require('node:path');
const { runInPage } = require('./harness');
const {
  FIXTURES,
  fixtureFiles,
  expectedOf,
  nodeResult,
  startFixtureServer,
  loadsEnded,
  settled,
  runPrompt,
  runSettled,
  writeRandomGpt2,
  tabSession,
  fixtureUrls,
  openFiles,
} = require('./open-model-harness');

const session = tabSession();
let page;
let problems;
beforeAll(() => {
  ({ page, problems } = session);
});

/** The thumbnails drawn, as [layer, head] pairs. */
const thumbs = () =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid=om-model-view] [data-testid=thumb]'), (t) => [
      Number(t.dataset.layer),
      Number(t.dataset.head),
    ]),
  );

// The heatmap of the picked head and every thumbnail: the maps that mark a pointed-at row.
const MAPS =
  '[data-testid=om-heatmap] [data-testid=viz-heatmap-canvas], [data-testid=om-model-view] [data-testid=thumb-map]';

/** Every layer × head, in order. */
const everyHead = ({ numLayers, numHeads }) =>
  Array.from({ length: numLayers * numHeads }, (_, k) => [Math.floor(k / numHeads), k % numHeads]);

/** Each row of each head sums to 1 over the keys it may see, and is 0 after them (a decoder). */
async function expectRowsAreDistributions(causal) {
  const bad = await page.evaluate((isCausal) => {
    const t = window.__openModel;
    const { numLayers, numHeads } = t.config;
    const n = t.run.rows;
    const out = [];
    for (let l = 0; l < numLayers; l++)
      for (let h = 0; h < numHeads; h++) {
        const m = t.matrix(l, h);
        for (let i = 0; i < n; i++) {
          const row = m.slice(i * n, (i + 1) * n);
          const sum = row.reduce((a, b) => a + b, 0);
          const after = isCausal ? row.slice(i + 1).some((v) => v !== 0) : false;
          if (Math.abs(sum - 1) > 1e-4 || after) out.push({ l, h, i, sum, after });
        }
      }
    return out;
  }, causal);
  expect(bad).toEqual([]);
}

test('several files in the file input: gpt2 opens, and its greedy continuation is what loadModel + generate give in Node', async () => {
  const { prompt } = expectedOf('gpt2');
  const [opened, want] = await Promise.all([openFiles(page, fixtureFiles('gpt2')), nodeResult('gpt2', prompt)]);
  expect(opened).toEqual({ state: 'ready', error: null });
  const run = await runPrompt(page, { prompt, maxNew: 6 });
  expect(run.ids.slice(0, run.promptLength)).toEqual(want.ids);
  expect(run.newIds).toEqual(want.newIds);
  expect(run.text).toBe(want.text);
  expect(await page.textContent('[data-testid=om-output]')).toBe(`Continuation: ${want.text}`);
  // One chip per token, the generated ones marked.
  const chips = await page.$$eval('[data-testid=om-token]', (nodes) =>
    nodes.map((n) => [Number(n.dataset.id), n.classList.contains('generated')]),
  );
  expect(chips).toEqual([...want.ids.map((id) => [id, false]), ...want.newIds.map((id) => [id, true])]);
  // Every position's rows are in, every layer × head drawn.
  expect(run.rows).toBe(want.ids.length + want.newIds.length);
  const config = await page.evaluate(() => window.__openModel.config);
  expect(await thumbs()).toEqual(everyHead(config));
  await expectRowsAreDistributions(true);
  // What was read and what the engine holds, in words.
  const sizes = fixtureFiles('gpt2').filter((f) => !f.endsWith('config.json'));
  const files = await page.evaluate(() => window.__openModel.files);
  expect(Object.fromEntries(files.map((f) => [f.name, f.bytes]))).toEqual(
    Object.fromEntries(sizes.map((f) => [path.basename(f), fs.statSync(f).size])),
  );
  const memory = await page.textContent('[data-testid=om-memory]');
  expect(memory).toMatch(/^Memory: files [\d.]+ KiB · engine memory [\d.]+ MiB \(weights [\d.]+ KiB, caches /);
  expect(await page.evaluate(() => window.__openModel.memory.weightBytes)).toBeGreaterThan(0);
  expect(await page.textContent('[data-testid=om-facts]')).toContain('gpt2, a decoder');
});

test('sampling with a temperature, top-k and a seed draws the tokens generate draws in Node with them', async () => {
  const { prompt } = expectedOf('gpt2');
  const sampling = { temperature: 1.3, topK: 50, seed: 7 };
  const [want, greedy] = await Promise.all([
    nodeResult('gpt2', prompt, { maxNewTokens: 12, sampling }),
    nodeResult('gpt2', prompt, { maxNewTokens: 12 }),
  ]);
  expect(want.newIds).not.toEqual(greedy.newIds); // the sampling options change what is drawn
  const run = await runPrompt(page, { prompt, maxNew: 12, sampling });
  expect(run.newIds).toEqual(want.newIds);
  expect(run.text).toBe(want.text);
  const again = await runPrompt(page, { prompt, maxNew: 12 });
  expect(again.newIds).toEqual(greedy.newIds);
});

test('picking a head draws that head: its weights in the heatmap, its layer in the head view; a token pointed at marks its row in every map', async () => {
  const first = await page.evaluate(() => window.__openModel.head);
  expect([first.layer, first.head]).toEqual([0, 0]);
  await page.click('[data-testid=om-model-view] [data-testid=thumb][data-layer="1"][data-head="2"]');
  await page.waitForFunction(() => window.__openModel.head?.layer === 1 && window.__openModel.head?.head === 2);
  const r = await page.evaluate(() => ({ head: window.__openModel.head, matrix: window.__openModel.matrix(1, 2) }));
  expect(r.head.weights).toEqual(r.matrix);
  expect(r.head.weights).not.toEqual(first.weights);
  expect(await page.textContent('[data-testid=om-head-title]')).toBe(
    'Layer 2, head 3: weights, query (row) → key (column)',
  );
  // The heatmap holds a row and a column per token; the head view shows layer 1.
  const n = await page.evaluate(() => window.__openModel.run.rows);
  const layout = JSON.parse(
    await page.getAttribute('[data-testid=om-heatmap] [data-testid=viz-heatmap-canvas]', 'data-layout'),
  );
  expect([layout.rows, layout.cols]).toEqual([n, n]);
  expect(await page.getAttribute('[data-testid=om-head-view] [data-testid=viz-head-canvas]', 'aria-label')).toMatch(
    new RegExp(`^Head view of layer 2: ${n} tokens`),
  );
  expect(await page.getAttribute('[data-testid=thumb][data-layer="1"][data-head="2"]', 'aria-selected')).toBe('true');
  // Pointing at a token marks its row in the heatmap and in every thumbnail.
  const highlighted = () =>
    page.evaluate(
      (MAPS) => Array.from(document.querySelectorAll(MAPS), (c) => JSON.parse(c.dataset.layout).highlightRow),
      MAPS,
    );
  await page.hover('[data-testid=om-token][data-position="3"]');
  await page.waitForFunction(
    (MAPS) => Array.from(document.querySelectorAll(MAPS)).every((c) => JSON.parse(c.dataset.layout).highlightRow === 3),
    MAPS,
  );
  expect(await highlighted()).toEqual(Array(1 + 2 * 4).fill(3));
  await page.mouse.move(0, 0);
  await page.waitForFunction(
    (MAPS) =>
      Array.from(document.querySelectorAll(MAPS)).every((c) => JSON.parse(c.dataset.layout).highlightRow === -1),
    MAPS,
  );
});

test('a sharded llama (two shards and their index) dropped as files: greedy tokens as in Node', async () => {
  const name = 'llama-gqa-llama3-sharded';
  const { prompt } = expectedOf(name);
  const want = await nodeResult(name, prompt);
  const before = await loadsEnded(page);
  // A drop of files made by script: the page reads them from the DataTransfer.
  const urls = fixtureUrls(name);
  await page.evaluate(async (list) => {
    const dt = new DataTransfer();
    for (const u of list) dt.items.add(new File([await (await fetch(u)).blob()], u.split('/').pop()));
    const drop = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
    document.querySelector('[data-testid=om-drop]').dispatchEvent(drop);
  }, urls);
  expect(await settled(page, before)).toEqual({ state: 'ready', error: null });
  const run = await runPrompt(page, { prompt, maxNew: 6 });
  expect(run.ids.slice(0, run.promptLength)).toEqual(want.ids);
  expect(run.newIds).toEqual(want.newIds);
  const config = await page.evaluate(() => window.__openModel.config);
  expect([config.numHeads, config.numKvHeads]).toEqual([4, 2]);
  expect(await thumbs()).toEqual(everyHead(config));
  const files = await page.evaluate(() => window.__openModel.files.map((f) => f.name).sort());
  expect(files).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'tokenizer.json']);
});

test('weights stored as int8 (the dtype chosen before opening): fewer bytes in the engine, tokens as loadModel gives in Node', async () => {
  const name = 'llama-gqa-llama3-sharded';
  const { prompt } = expectedOf(name);
  const f32 = await page.evaluate(() => window.__openModel.memory.weightBytes); // the model just opened, in f32
  const want = await nodeResult(name, prompt, { dtype: 'int8' });
  await page.selectOption('[data-testid=om-dtype]', 'int8');
  try {
    expect(await openFiles(page, fixtureFiles(name))).toEqual({ state: 'ready', error: null });
    expect(await page.textContent('[data-testid=om-facts]')).toContain('Weight matrices stored as int8 in the engine.');
    const int8 = await page.evaluate(() => window.__openModel.memory.weightBytes);
    expect(int8).toBeLessThan(0.6 * f32);
    const run = await runPrompt(page, { prompt, maxNew: 6 });
    expect(run.newIds).toEqual(want.newIds);
  } finally {
    await page.selectOption('[data-testid=om-dtype]', 'f32');
  }
});

test('a folder dropped (walked through its entries, a subfolder too): mistral opens from the folder holding config.json', async () => {
  const name = 'mistral-window';
  const { prompt } = expectedOf(name);
  const want = await nodeResult(name, prompt);
  const before = await loadsEnded(page);
  const urls = fixtureUrls(name);
  // FileSystemEntry objects as Chromium gives them for a dropped folder (a drop made by script has
  // none): a folder with the checkpoint, a subfolder, and readEntries answering in two batches.
  await page.evaluate(
    async ([list, folder]) => {
      const file = (name, blob) => ({
        isFile: true,
        isDirectory: false,
        name,
        file: (ok) => ok(new File([blob], name)),
      });
      const dir = (name, children) => ({
        isFile: false,
        isDirectory: true,
        name,
        createReader() {
          const batches = [children.slice(0, 2), children.slice(2), []];
          return { readEntries: (ok) => setTimeout(() => ok(batches.shift() ?? [])) };
        },
      });
      const files = [];
      for (const u of list) files.push(file(u.split('/').pop(), await (await fetch(u)).blob()));
      files.push(dir('onnx', [file('model.onnx', new Blob(['not read']))]));
      const root = dir(folder, files);
      const event = new Event('drop', { bubbles: true, cancelable: true });
      Object.defineProperty(event, 'dataTransfer', {
        value: { types: ['Files'], files: [], items: [{ kind: 'file', webkitGetAsEntry: () => root }] },
      });
      document.querySelector('[data-testid=om-drop]').dispatchEvent(event);
    },
    [urls, name],
  );
  expect(await settled(page, before)).toEqual({ state: 'ready', error: null });
  expect(await page.textContent('[data-testid=om-status]')).toContain(`the folder ${name}`);
  const run = await runPrompt(page, { prompt, maxNew: 6 });
  expect(run.newIds).toEqual(want.newIds);
  await expectRowsAreDistributions(true);
  // The sliding window of 4: query i sees no key j with i − j ≥ 4, in every head of every layer.
  const outside = await page.evaluate(() => {
    const t = window.__openModel;
    const n = t.run.rows;
    let count = 0;
    for (let l = 0; l < t.config.numLayers; l++)
      for (let h = 0; h < t.config.numHeads; h++) {
        const m = t.matrix(l, h);
        for (let i = 0; i < n; i++) for (let j = 0; j <= i - 4; j++) count += m[i * n + j] !== 0;
      }
    return count;
  });
  expect(outside).toBe(0);
});

test('a folder in the folder input: bert shows its encoding and the masked-LM head’s best tokens', async () => {
  const name = 'bert-mlm';
  const prompt = 'hello world, the [MASK] sat';
  const want = await nodeResult(name, prompt);
  const opened = await openFiles(page, path.join(FIXTURES, name), '[data-testid=om-folder]');
  expect(opened).toEqual({ state: 'ready', error: null });
  expect(await page.textContent('[data-testid=om-run]')).toBe('Encode');
  expect(await page.isHidden('[data-testid=om-max-new]')).toBe(true);
  const run = await runPrompt(page, { prompt });
  expect(run.ids).toEqual(want.ids);
  expect(run.rows).toBe(want.ids.length);
  const shown = await page.$$eval('[data-testid=om-prediction]', (nodes) => nodes.map((n) => Number(n.dataset.id)));
  expect(shown).toHaveLength(want.ids.length);
  want.best.forEach((id, i) => {
    if (id !== null) expect([i, shown[i]]).toEqual([i, id]);
  });
  expect(want.best.filter((id) => id !== null).length).toBeGreaterThan(want.ids.length / 2);
  expect(await page.textContent('[data-testid=om-facts]')).toContain('bert, an encoder');
  const config = await page.evaluate(() => window.__openModel.config);
  expect(await thumbs()).toEqual(everyHead(config));
  // Bidirectional: rows are distributions with weight after the query too.
  await expectRowsAreDistributions(false);
  const later = await page.evaluate(() => window.__openModel.matrix(0, 0)[1]);
  expect(later).toBeGreaterThan(0);
});

test('a URL on another origin (as the Hub serves a model folder): qwen2 opens with progress, greedy as in Node', async () => {
  const name = 'qwen2-bias-tied-bf16';
  const hub = await startFixtureServer();
  try {
    const { prompt } = expectedOf(name);
    const want = await nodeResult(name, prompt);
    const before = await loadsEnded(page);
    await page.fill('[data-testid=om-url]', `${hub.url}${name}/config.json`); // a file's URL: its folder is meant
    await page.click('[data-testid=om-open-url]');
    expect(await settled(page, before)).toEqual({ state: 'ready', error: null });
    expect(await page.textContent('[data-testid=om-status]')).toMatch(
      /^Opened http:\/\/127\.0\.0\.1:\d+\/qwen2-bias-tied-bf16\/ in \d+ ms\.$/,
    );
    const run = await runPrompt(page, { prompt, maxNew: 6 });
    expect(run.newIds).toEqual(want.newIds);
    const files = await page.evaluate(() => window.__openModel.files);
    expect(files.map((f) => f.name)).toEqual(['config.json', 'tokenizer.json', 'model.safetensors']);
    for (const f of files)
      expect([f.name, f.bytes]).toEqual([f.name, fs.statSync(path.join(FIXTURES, name, f.name)).size]);
  } finally {
    await hub.close();
  }
});

test('without tokenizer.json the page asks for token ids, says why, and generates from them as Node does', async () => {
  const name = 'llama-bias-partial-linear-f16';
  const { ids } = expectedOf(name);
  const want = await nodeResult(name, ids);
  const opened = await openFiles(page, fixtureFiles(name, { without: ['tokenizer.json'] }));
  expect(opened).toEqual({ state: 'ready', error: null });
  expect(await page.textContent('[data-testid=om-prompt-label]')).toMatch(/^Token ids/);
  expect(await page.textContent('[data-testid=om-prompt-help]')).toMatch(
    /came without tokenizer\.json, so the page cannot turn text into tokens .* Type token ids instead/,
  );
  const vocab = await page.evaluate(() => window.__openModel.config.vocabSize);
  await page.fill('[data-testid=om-prompt]', `${ids.slice(0, 2).join(' ')} ${vocab}`);
  await page.click('[data-testid=om-run]');
  await page.waitForFunction(() => window.__openModel.runError);
  expect(await page.textContent('[data-testid=om-run-error]')).toBe(
    `“${vocab}” is not a token id of this model: ids are whole numbers from 0 to ${vocab - 1}.`,
  );
  const run = await runPrompt(page, { prompt: ids.join(', '), maxNew: 6 });
  expect(run.ids.slice(0, run.promptLength)).toEqual(ids);
  expect(run.newIds).toEqual(want.newIds);
  expect(run.labels).toEqual([...ids, ...want.newIds].map((id) => `#${id}`));
  expect(await page.isHidden('[data-testid=om-run-error]')).toBe(true);
});

test('Hugging Face addresses become the folder loadModel reads; what is no web address is refused in words', async () => {
  const r = await runInPage(page, { files: '/web/open-model/files.js' }, ({ files: { checkpointUrl } }) =>
    [
      'https://huggingface.co/HuggingFaceTB/SmolLM2-135M',
      'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/tree/main',
      'https://huggingface.co/gpt2/blob/refs%2Fpr%2F1/config.json',
      'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/v1/model.safetensors?download=true',
      'https://huggingface.co/gpt2',
      'models/x',
      'file:///tmp/model/',
      '   ',
    ].map((u) => checkpointUrl(u, 'http://127.0.0.1:8080/web/')),
  );
  expect(r).toEqual([
    { url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/' },
    { url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/' },
    { url: 'https://huggingface.co/gpt2/resolve/refs%2Fpr%2F1/' },
    { url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/v1/' },
    { url: 'https://huggingface.co/gpt2/resolve/main/' },
    { url: 'http://127.0.0.1:8080/web/models/x/' },
    {
      problem:
        '“file:///tmp/model/” is not a web address (http or https); for files on this computer use the file picker.',
    },
    { problem: 'Type the URL of a model folder first.' },
  ]);
});

test('a checkpoint made by this test (gpt2, 4 layers, 15 MB, no tokenizer): Stop ends a long generation, every token drawn', async () => {
  const dir = writeRandomGpt2({ layers: 4, hidden: 256, heads: 4, vocab: 2048, positions: 512, seed: 3 });
  try {
    const opened = await openFiles(page, [path.join(dir, 'config.json'), path.join(dir, 'model.safetensors')]);
    expect(opened).toEqual({ state: 'ready', error: null });
    expect(await page.textContent('[data-testid=om-facts]')).toContain('4 layers × 4 heads');
    const before = await page.evaluate(() => window.__openModel.run?.id ?? 0);
    await page.fill('[data-testid=om-prompt]', '5 6 7');
    await page.fill('[data-testid=om-max-new]', '256');
    await page.click('[data-testid=om-run]');
    // Stop, clicked in the page as soon as three new tokens are there (no round trip to the test).
    await page.evaluate(
      (b) =>
        new Promise((resolve) => {
          const check = () => {
            const r = window.__openModel.run;
            if (!(r && r.id > b && r.ids.length >= r.promptLength + 3)) return setTimeout(check, 0);
            document.querySelector('[data-testid=om-stop]').click();
            return resolve();
          };
          check();
        }),
      before,
    );
    await runSettled(page, before);
    const run = await page.evaluate(() => window.__openModel.run);
    expect(run.reason).toBe('stopped');
    expect(run.newIds.length).toBeGreaterThanOrEqual(3);
    expect(run.newIds.length).toBeLessThan(256);
    expect(run.rows).toBe(run.ids.length);
    expect(await page.textContent('[data-testid=om-run-status]')).toMatch(/^\d+ new tokens?: stopped, /);
    expect(await thumbs()).toEqual(everyHead({ numLayers: 4, numHeads: 4 }));
    await expectRowsAreDistributions(true);
    // The tokens before the stop are those generate gives in Node.
    const want = await nodeResult(dir, [5, 6, 7], { maxNewTokens: run.newIds.length });
    expect(run.newIds).toEqual(want.newIds);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no console error, failed request or page error while opening and running the models', () => {
  expect(problems).toEqual([]);
});
