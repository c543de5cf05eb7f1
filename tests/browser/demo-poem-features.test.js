// The trained-model tab's features in Chromium: head badges from heads.json, the
// guided tour of the clearest heads (keyboard, skippable), "recited from the anthology", the
// exports (JSON of every head, CSV of the opened one), axe-core at 1366×768 and 390 px.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, axeViolations, modelTabSession, runPoem } = require('./harness');

const HEADS_JSON = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'tang-poems', 'heads.json'), 'utf8'));
// A badge per look-back band (heads) and per head with a large share on the latest mark (marks).
const HEADS = [...HEADS_JSON.heads, ...HEADS_JSON.marks];

let session;
let page;
let problems;

beforeAll(async () => {
  session = await modelTabSession({ viewport: { width: 1366, height: 768 } });
  ({ page, problems } = session);
  await page.waitForSelector('[data-testid=head-badge]');
});

afterAll(async () => {
  if (session) await session.close();
});

const GREEDY = {
  'poem-prompt': '床前明月光，',
  'poem-max-new': '13',
  'poem-decoding': 'greedy',
  'poem-stop-at-end': false,
};

test('a badge per head heads.json names, strongest first, in the page’s words; a click or Enter opens that head', async () => {
  const badges = await page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid=head-badge]'), (b) => ({
      layer: Number(b.dataset.layer),
      head: Number(b.dataset.head),
      text: b.textContent,
    })),
  );
  expect(badges).toHaveLength(HEADS.length);
  const byShare = [...HEADS].sort((a, b) => b.score - a.score);
  expect(badges.map((b) => [b.layer, b.head])).toEqual(byShare.map((h) => [h.layer, h.head]));
  expect(badges[0].text).toBe(
    `L4 H1 one half-line back (five-character verse) ${Math.round(100 * byShare[0].score)} %`,
  );
  expect(badges.filter((b) => /the previous characters/.test(b.text)).map((b) => [b.layer, b.head])).toEqual(
    expect.arrayContaining([
      [2, 0],
      [2, 1],
      [1, 3],
    ]),
  );
  expect(badges.some((b) => /seven-character verse/.test(b.text))).toBe(true);
  // Layer 4's head 3 has two: its band and the latest punctuation mark.
  expect(badges.filter((b) => b.layer === 3 && b.head === 2).map((b) => b.text)).toEqual([
    'L4 H3 2–4 characters back 46 %',
    'L4 H3 the latest punctuation mark 37 %',
  ]);
  await page.click('[data-testid=head-badge][data-layer="2"][data-head="3"]');
  await page.waitForFunction(() => window.__poem.stepsShown?.layer === 2 && window.__poem.stepsShown?.head === 3);
  expect(await page.evaluate(() => window.__poem.ui.open)).toEqual({ layer: 2, head: 3 });
  await page.focus('[data-testid=head-badge][data-layer="3"][data-head="0"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__poem.ui.open?.layer === 3 && window.__poem.ui.open?.head === 0);
  // The opened head's badge is marked with the next drawing.
  await page.waitForFunction(() =>
    document.querySelector('[data-testid=head-badge][data-layer="3"][data-head="0"]').classList.contains('open'),
  );
  expect(await page.locator('[data-testid=head-badge].open').count()).toBe(1);
});

test('the tour: opens the clearest heads one by one, says where the latest token looks, by keyboard, and ends on Escape', async () => {
  await runPoem(page, GREEDY, { generate: true });
  await page.focus('[data-testid=poem-tour-start]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=poem-tour]:not([hidden])');
  const step = () =>
    page.evaluate(() => {
      const open = window.__poem.ui.open;
      const run = window.__poem.run;
      const m = window.__poem.matrix(open.layer, open.head);
      const q = run.n - 1;
      let key = 0;
      for (let j = 1; j <= q; j++) if (m[q * run.n + j] > m[q * run.n + key]) key = j;
      return {
        step: window.__poem.tourStep(),
        open,
        query: window.__poem.ui.query,
        focus: document.activeElement.id,
        heading: document.getElementById('poem-tour-heading').textContent,
        text: document.querySelector('[data-testid=poem-tour-text]').textContent,
        want: { key, back: q - key, weight: m[q * run.n + key].toFixed(2), token: run.texts[key] },
        n: run.n,
      };
    });
  const first = await step();
  expect(first.step).toBe(0);
  expect(first.open).toEqual({ layer: 3, head: 0 });
  expect(first.query).toBe(first.n - 1);
  expect(first.focus).toBe('poem-tour-heading');
  expect(first.heading).toBe('Tour 1 of 3: one half-line back (five-character verse)');
  expect(first.text).toContain(`puts its largest weight, ${first.want.weight}, on`);
  expect(first.text).toContain(first.want.back === 0 ? 'itself' : `${first.want.back} token`);
  // Next by the arrow key; the next stop is another kind of head.
  await page.keyboard.press('ArrowRight');
  const second = await step();
  expect(second.step).toBe(1);
  expect(second.heading).toBe('Tour 2 of 3: the previous characters');
  expect(second.open).toEqual({ layer: 2, head: 0 });
  expect(second.text).toContain(`puts its largest weight, ${second.want.weight}, on`);
  await page.keyboard.press('ArrowRight');
  const third = await step();
  expect(third.heading).toBe('Tour 3 of 3: the latest punctuation mark');
  expect(third.open).toEqual({ layer: 3, head: 2 });
  expect(third.text).toContain('puts 37 % of its weight on the latest punctuation mark or line break');
  await page.keyboard.press('ArrowLeft');
  expect((await step()).step).toBe(1);
  // Tab reaches its buttons; Escape skips the rest and gives the focus back.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement.dataset.testid)).toBe('poem-tour-back');
  expect(await axeViolations(page)).toEqual([]);
  await page.keyboard.press('Escape');
  expect(await page.locator('[data-testid=poem-tour]').isHidden()).toBe(true);
  expect(await page.evaluate(() => [window.__poem.tourStep(), document.activeElement.id])).toEqual([
    -1,
    'poem-tour-start',
  ]);
  // End tour is a click away at every step.
  await page.click('[data-testid=poem-tour-start]');
  await page.click('[data-testid=poem-tour-end]');
  expect(await page.locator('[data-testid=poem-tour]').isHidden()).toBe(true);
});

test('lines the model recites from the anthology are marked, and the page says it recites', async () => {
  await runPoem(page, GREEDY, { generate: true });
  const r = await page.evaluate(() => ({
    text: window.__poem.run.texts.join(''),
    recited: window.__poem.recited,
    chips: Array.from(document.querySelectorAll('[data-testid=poem-token].recited'), (c) => Number(c.dataset.index)),
    note: document.querySelector('[data-testid=poem-recited]').textContent,
    plain: document.querySelector('[data-testid=poem-recites-note]').textContent,
  }));
  expect(r.text).toBe('<s>床前明月光，疑是地上霜。\n举头望明月，');
  // The prompt's own line is typed, not recited; the two generated half-lines are the anthology's.
  expect(r.recited).toEqual([
    { start: 7, end: 12, text: '疑是地上霜' },
    { start: 14, end: 19, text: '举头望明月' },
  ]);
  expect(r.chips).toEqual([7, 8, 9, 10, 11, 14, 15, 16, 17, 18]);
  expect(r.note).toBe('Recited from the anthology (underlined in green): 疑是地上霜, 举头望明月.');
  expect(r.plain).toMatch(/recites\s+the rest, even when sampling/);
  // Verse that is not the anthology's is not marked (the page's own function, on made-up lines).
  const made = await page.evaluate(async () => {
    const { recitedSegments, readRecited } = await import('/web/poem/recited.js');
    const set = readRecited(await (await fetch('/models/tang-poems/recited.json')).json());
    const texts = (s) => ['<s>', ...Array.from(s)];
    return {
      own: recitedSegments(texts('床前明月光，春风明月光。'), 7, set),
      prompt: recitedSegments(texts('床前明月光，'), 7, set),
      quiet: recitedSegments(texts('春眠不觉晓，处处闻啼鸟。'), 1, set).map((g) => g.text),
    };
  });
  expect(made).toEqual({ own: [], prompt: [], quiet: ['春眠不觉晓', '处处闻啼鸟'] });
});

test('export: every head of the run as JSON, the opened head as CSV, equal to the maps drawn', async () => {
  await runPoem(page, GREEDY, { generate: true });
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=poem-export-json]')]);
  expect(json.suggestedFilename()).toBe('poem-attention.json');
  const doc = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
  const run = await page.evaluate(() => window.__poem.run);
  expect(doc.format).toBe('wasm-attention-demo-model/1');
  expect(doc.tokens).toEqual(run.texts);
  expect(doc.ids).toEqual(run.ids);
  expect(doc.kvHeads).toEqual([0, 0, 1, 1]);
  expect(doc.attention).toHaveLength(4);
  for (const [l, h] of [
    [0, 0],
    [3, 0],
    [2, 3],
  ]) {
    const drawn = await page.evaluate(([a, b]) => window.__poem.matrix(a, b), [l, h]);
    expect(doc.attention[l][h].flat()).toEqual(drawn);
  }
  for (const row of doc.attention[1][2]) expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);

  await page.click('[data-testid=head-badge][data-layer="3"][data-head="0"]');
  await page.waitForFunction(() => !document.querySelector('[data-testid=poem-export-csv]').disabled);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=poem-export-csv]')]);
  expect(csv.suggestedFilename()).toBe('poem-layer4-head1.csv');
  const lines = fs
    .readFileSync(await csv.path(), 'utf8')
    .trimEnd()
    .split('\r\n');
  expect(lines).toHaveLength(run.n + 1);
  expect(lines[0].split(',').slice(0, 4)).toEqual(['query \\ key', '1 ⟨s⟩', '2 床', '3 前']);
  const drawn = await page.evaluate(() => window.__poem.matrix(3, 0));
  lines.slice(1).forEach((line, i) => {
    const cells = line.split(',');
    expect(cells[0]).toBe(`${i + 1} ${run.texts[i] === '<s>' ? '⟨s⟩' : run.texts[i] === '\n' ? '↵' : run.texts[i]}`);
    expect(cells.slice(1).map(Number)).toEqual(drawn.slice(i * run.n, (i + 1) * run.n));
  });
});

test('axe-core finds no violation with the badges, at 1366×768 and at 390 px; nothing overflows the phone', async () => {
  expect(await axeViolations(page)).toEqual([]);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  expect(await axeViolations(page)).toEqual([]);
  const wide = await page.evaluate(() =>
    Array.from(
      document.querySelectorAll('#poem-heads-section, #poem-export-section, [data-testid=head-badge]'),
      (e) => [e.id || e.textContent, e.getBoundingClientRect().right <= window.innerWidth + 0.5],
    ).filter(([, fits]) => !fits),
  );
  expect(wide).toEqual([]);
  await page.click('[data-testid=poem-tour-start]');
  const tour = await page.locator('[data-testid=poem-tour]').boundingBox();
  expect(tour.x).toBeGreaterThanOrEqual(0);
  expect(tour.x + tour.width).toBeLessThanOrEqual(390);
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1366, height: 768 });
});

test('no console errors or warnings, page errors or failed requests', () => {
  expect(problems).toEqual([]);
});
