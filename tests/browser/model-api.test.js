// loadModel in Chromium, from the package's browser entry served as static files (no bundler): a URL
// path relative to the page, on the main thread with two threads and in a module Web Worker; the
// tokenizer arrives by its relative import (dist/vendor/tokenizers.mjs) only when a model has one.
const fs = require('fs');
const path = require('path');
const { blankPageSession, runInPage } = require('./harness');

const FIXTURE = 'mistral-window';
const expected = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'models', FIXTURE, 'expected.json'), 'utf8'),
);

let session;
let page;
let problems;

beforeAll(async () => {
  session = await blankPageSession();
  ({ page, problems } = session);
});

afterAll(async () => {
  if (session) await session.close();
});

// Runs in the page or the worker: greedy tokens and text of the fixture, which files were fetched.
const RUN = `async ({ createAttention, loadModel }, { folder, prompt, threads }) => {
  const attn = await createAttention({ threads });
  const resources = () => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);
  const before = resources().filter((p) => /tokenizer|load-model/.test(p));
  const model = await loadModel(attn, folder);
  const { ids, text } = await model.generate(prompt, { maxNewTokens: 6, stopAtEos: false });
  const after = resources().filter((p) => /tokenizer|load-model/.test(p));
  const result = { ids: Array.from(ids), text, decoded: model.decode(ids), threads: attn.info.threads, before, after };
  attn.dispose();
  return result;
}`;

test('a page: a URL path relative to it, two threads, the reference’s greedy tokens', async () => {
  const got = await runInPage(page, { entry: '/dist/index.mjs' }, `async (m, arg) => (${RUN})(m.entry, arg)`, {
    folder: `../fixtures/models/${FIXTURE}/`,
    prompt: expected.prompt,
    threads: 2,
  });
  expect(got.ids).toEqual(expected.greedy);
  expect(got.text).toBe(got.decoded);
  expect(got.threads).toBe(2);
  expect(got.before).toEqual([]); // createAttention alone fetched no model code
  expect(got.after).toEqual(expect.arrayContaining(['/dist/load-model.mjs', '/dist/vendor/tokenizers.mjs']));
  expect(problems).toEqual([]);
});

test('a module Web Worker: the same from an absolute URL without its trailing slash', async () => {
  const got = await page.evaluate(
    async ([run, arg]) => {
      const source =
        `import * as entry from '${location.origin}/dist/index.mjs';\n` +
        `onmessage = async ({ data }) => { try { postMessage({ ok: await (${run})(entry, data) }); } ` +
        'catch (e) { postMessage({ error: String(e && e.stack || e) }); } };';
      // A blob worker's base is its blob: URL, so the folder is given absolute here.
      const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), {
        type: 'module',
      });
      const reply = await new Promise((resolve) => {
        worker.onmessage = ({ data }) => resolve(data);
        worker.onerror = (e) => resolve({ error: e.message });
        worker.postMessage({ ...arg, folder: new URL(arg.folder, location.href).href });
      });
      worker.terminate();
      return reply;
    },
    [RUN, { folder: `../fixtures/models/${FIXTURE}`, prompt: expected.prompt, threads: 1 }],
  );
  expect(got.error).toBeUndefined();
  expect(got.ok.ids).toEqual(expected.greedy);
  expect(problems).toEqual([]);
});

test('a module Web Worker reads a message between tokens: a page’s stop ends generate early', async () => {
  const got = await page.evaluate(
    async ([folder, prompt]) => {
      const source =
        `import { createAttention, loadModel } from '${location.origin}/dist/index.mjs';\n` +
        'let stopped = false;\n' +
        "onmessage = async ({ data }) => { if (data === 'stop') { stopped = true; return; }\n" +
        '  const attn = await createAttention({ threads: 1 });\n' +
        '  const model = await loadModel(attn, data.folder);\n' +
        '  const { ids } = await model.generate(data.prompt, { maxNewTokens: 50, stopAtEos: false,\n' +
        '    onToken: () => { postMessage({ token: true }); return !stopped; } });\n' +
        '  postMessage({ done: ids.length });\n' +
        '  attn.dispose(); };';
      const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), {
        type: 'module',
      });
      const newTokens = await new Promise((resolve) => {
        worker.onmessage = ({ data }) => {
          // The stop is posted when the first token arrives; the worker must see it before its 50th.
          if (data.token && !worker.stopSent) {
            worker.stopSent = true;
            worker.postMessage('stop');
          }
          if (data.done !== undefined) resolve(data.done);
        };
        worker.onerror = (e) => resolve({ error: e.message });
        worker.postMessage({ folder: new URL(folder, location.href).href, prompt });
      });
      worker.terminate();
      return newTokens;
    },
    [`../fixtures/models/${FIXTURE}`, expected.prompt],
  );
  expect(got).toBeGreaterThan(0);
  expect(got).toBeLessThan(50);
  expect(problems).toEqual([]);
});
