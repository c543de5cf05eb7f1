// "Open a model" → the K/V cache choice in Chromium: each run's session stores K and V as chosen
// (f32, f16, bf16), its greedy tokens those loadModel + generate give in Node with the same kvDtype,
// its caches the bytes that dtype takes, said in the memory line; an encoder, which keeps no cache,
// has the choice disabled and says why.
const { fixtureFiles, expectedOf, nodeResult, runPrompt, tabSession, openFiles } = require('./open-model-harness');

const session = tabSession();
let page;
let problems;
beforeAll(() => {
  ({ page, problems } = session);
});

/** A greedy run with the K/V cache stored as `kvDtype`: the run, the engine's memory, the memory line. */
async function runWith(prompt, kvDtype, maxNew) {
  await page.selectOption('[data-testid=om-kv-dtype]', kvDtype);
  const run = await runPrompt(page, { prompt, maxNew });
  return {
    run,
    memory: await page.evaluate(() => window.__openModel.memory),
    line: await page.textContent('[data-testid=om-memory]'),
  };
}

test('f32 is the default; f16 and bf16 caches hold half the bytes, and generate the tokens Node generates with them', async () => {
  const name = 'llama-gqa-llama3-sharded';
  const { prompt } = expectedOf(name);
  const maxNew = 12;
  const [opened, want16, wantB16] = await Promise.all([
    openFiles(page, fixtureFiles(name)),
    nodeResult(name, prompt, { maxNewTokens: maxNew, kvDtype: 'f16' }),
    nodeResult(name, prompt, { maxNewTokens: maxNew, kvDtype: 'bf16' }),
  ]);
  expect(opened).toEqual({ state: 'ready', error: null });
  expect(await page.inputValue('[data-testid=om-kv-dtype]')).toBe('f32');
  expect(await page.isEnabled('[data-testid=om-kv-dtype]')).toBe(true);

  const f32 = await runWith(prompt, 'f32', maxNew);
  expect(f32.line).toMatch(/, caches [\d.]+ KiB, K\/V as f32\)$/);
  expect(f32.memory.cacheBytes).toBeGreaterThan(0);

  const f16 = await runWith(prompt, 'f16', maxNew);
  expect(await page.evaluate(() => window.__openModel.runError)).toBeNull();
  expect(f16.run.newIds).toHaveLength(want16.newIds.length);
  expect(f16.run.newIds).toEqual(want16.newIds);
  expect(f16.run.text).toBe(want16.text);
  expect(f16.line).toMatch(/, K\/V as f16\)$/);
  // The same session (prompt and new tokens) in 2-byte elements: the choice reached createSession.
  expect(f16.memory.cacheBytes).toBeLessThan(f32.memory.cacheBytes);
  expect(f16.memory.cacheBytes).toBeGreaterThanOrEqual(f32.memory.cacheBytes / 2 - 4096);

  const bf16 = await runWith(prompt, 'bf16', maxNew);
  expect(bf16.run.newIds).toEqual(wantB16.newIds);
  expect(bf16.line).toMatch(/, K\/V as bf16\)$/);
  expect(bf16.memory.cacheBytes).toBe(f16.memory.cacheBytes);
});

test('an encoder keeps no K/V cache: the choice is disabled, and the facts say why; the next decoder has it again', async () => {
  expect(await openFiles(page, fixtureFiles('bert-mlm'))).toEqual({ state: 'ready', error: null });
  expect(await page.isDisabled('[data-testid=om-kv-dtype]')).toBe(true);
  expect(await page.textContent('[data-testid=om-facts]')).toContain(
    'No K/V cache: it encodes the whole text at once, so the K/V choice does not apply.',
  );
  expect(await page.textContent('[data-testid=om-memory]')).not.toContain('K/V as');

  expect(await openFiles(page, fixtureFiles('gpt2'))).toEqual({ state: 'ready', error: null });
  expect(await page.isEnabled('[data-testid=om-kv-dtype]')).toBe(true);
  expect(await page.textContent('[data-testid=om-facts]')).not.toContain('No K/V cache');
  const { prompt } = expectedOf('gpt2');
  const want = await nodeResult('gpt2', prompt, { maxNewTokens: 6, kvDtype: 'f16' });
  const { run } = await runWith(prompt, 'f16', 6);
  expect(run.newIds).toEqual(want.newIds);
});

test('no console error, failed request or page error with the K/V choices', () => {
  expect(problems).toEqual([]);
});
