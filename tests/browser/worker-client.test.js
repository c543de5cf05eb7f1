// How the page's two workers fail, in Chromium: startEngine (web/shared/engine.js) and
// startOpenModelWorker (web/open-model/client.js) given stand-in workers (blob: modules) that
// cannot start, report a failed init, or die with requests waiting. The real workers never do
// so on their own, so nothing else reaches these paths.
const { blankPageSession, runInPage } = require('./harness');

const MODULES = { engine: '/web/shared/engine.js', open: '/web/open-model/client.js' };

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

/**
 * Runs start({ url }) for each worker source (null: a URL no worker can be made from) with both
 * clients; each outcome is { resolved } or { error: 'Name: message' }.
 */
const startWith = (sources) =>
  runInPage(
    page,
    MODULES,
    async (m, list) => {
      const text = (e) => `${e.name}: ${e.message}`;
      const urlOf = (src) =>
        src === null ? 'http://[' : URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      const out = {};
      for (const [which, start] of [
        ['engine', m.engine.startEngine],
        ['open', m.open.startOpenModelWorker],
      ]) {
        out[which] = [];
        for (const src of list) {
          out[which].push(
            await start({ url: urlOf(src) }).then(
              (client) => ({ resolved: Object.keys(client) }),
              (e) => ({ error: text(e), range: e instanceof RangeError }),
            ),
          );
        }
      }
      return out;
    },
    sources,
  );

test('a worker that cannot be made, that reports a failed init, or whose script throws: the start rejects', async () => {
  const r = await startWith([
    null,
    `onmessage = ({ data }) => {
       if (data.type === 'init') postMessage({ type: 'failed', error: { name: 'RangeError', message: 'no engine here' } });
     };`,
    `throw new Error('the script broke');`,
  ]);
  for (const which of ['engine', 'open']) {
    expect(r[which][0].error).toMatch(/^SyntaxError: .*Worker.*/);
    expect(r[which][1]).toEqual({ error: 'RangeError: no engine here', range: true });
  }
  expect(r.engine[2].error).toMatch(/^Error: the engine worker stopped: .*the script broke/);
  expect(r.open[2].error).toMatch(/^Error: the worker of "Open a model" stopped: .*the script broke/);
});

test('a worker that dies after ready: every waiting request fails with the reason, later ones too', async () => {
  // Ready at once; the first request of any kind kills it (an uncaught error in the worker).
  const source = `onmessage = ({ data }) => {
    if (data.type === 'init') postMessage({ type: 'ready', info: { threads: 1 }, note: 'stand-in' });
    else setTimeout(() => { throw new Error('died at ' + data.type); }, 50);
  };`;
  const r = await runInPage(
    page,
    MODULES,
    async (m, src) => {
      const url = () => URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      const text = (e) => `${e.name}: ${e.message}`;
      const settle = (p) => p.then(() => 'resolved', text);

      const engine = await m.engine.startEngine({ url: url() });
      const run = settle(engine.run([]));
      const engineOut = { info: engine.info, note: engine.note, run: await run };
      engineOut.later = await settle(engine.run([]));

      // The model worker: a paced run (the poem tab's), a load and head steps waiting on it.
      const open = await m.open.startOpenModelWorker({ url: url() });
      const events = [];
      const onEvent = (msg) => events.push({ type: msg.type, id: msg.id, error: text(msg.error) });
      const running = open.run({ text: 'x', paced: true }, onEvent);
      const { done } = open.load({ url: '/nowhere/', withSteps: true });
      const steps = settle(open.headSteps({ run: running, layer: 0, head: 0, query: 0 }));
      const openOut = { info: open.info, note: open.note, load: await settle(done), steps: await steps };
      openOut.later = await settle(open.load({ url: '/nowhere/' }).done);
      openOut.laterSteps = await settle(open.headSteps({ run: running, layer: 0, head: 0, query: 0 }));
      const laterRunning = open.run({ text: 'y', paced: true }, onEvent);
      await new Promise((r) => setTimeout(r, 0));
      Object.assign(openOut, { events, running, laterRunning });
      open.terminate(); // already broken: the first reason stays
      openOut.afterTerminate = await settle(open.load({ url: '/nowhere/' }).done);
      return { engine: engineOut, open: openOut };
    },
    source,
  );
  const died = (what, type) => new RegExp(`^Error: ${what} stopped: .*died at ${type}`);
  expect(r.engine.info).toEqual({ threads: 1 });
  expect(r.engine.note).toBe('stand-in');
  // The first request posted killed it: every waiter gets that one reason, and so does what comes later.
  expect(r.engine.run).toMatch(died('the engine worker', 'run'));
  expect(r.engine.later).toBe(r.engine.run);
  expect(r.open.info).toEqual({ threads: 1 });
  expect(r.open.load).toMatch(died('the worker of "Open a model"', 'run'));
  expect(r.open.steps).toBe(r.open.load);
  expect(r.open.later).toBe(r.open.load);
  expect(r.open.laterSteps).toBe(r.open.load);
  // The run waiting, and one asked after: each ends with run-failed and the reason (told after
  // run() returned its id).
  expect(r.open.events).toEqual([
    { type: 'run-failed', id: r.open.running, error: r.open.load },
    { type: 'run-failed', id: r.open.laterRunning, error: r.open.load },
  ]);
  expect(r.open.afterTerminate).toBe(r.open.load);
});

test('terminate(): the client says so to what waits and to what comes after', async () => {
  const source = `onmessage = ({ data }) => {
    if (data.type === 'init') postMessage({ type: 'ready', info: {}, note: '' });
  };`;
  const r = await runInPage(
    page,
    MODULES,
    async (m, src) => {
      const url = () => URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      const settle = (p) =>
        p.then(
          () => 'resolved',
          (e) => `${e.name}: ${e.message}`,
        );
      const engine = await m.engine.startEngine({ url: url() });
      const waiting = settle(engine.run([]));
      engine.terminate();
      const open = await m.open.startOpenModelWorker({ url: url() });
      const loading = settle(open.load({ url: '/nowhere/' }).done);
      const events = [];
      open.run({ text: 'x' }, (msg) => events.push(msg.type));
      open.terminate();
      return { waiting: await waiting, after: await settle(engine.run([])), loading: await loading, events };
    },
    source,
  );
  expect(r).toEqual({
    waiting: 'Error: the engine worker was terminated',
    after: 'Error: the engine worker was terminated',
    loading: 'Error: the worker of "Open a model" was terminated',
    events: ['run-failed'],
  });
});

test('only the deliberate failures were reported', () => {
  // The scripts that throw are reported as the page's errors; nothing else may be.
  expect(problems.filter((p) => !/the script broke|died at/.test(p))).toEqual([]);
});
