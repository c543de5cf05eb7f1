// The heads the model learnt, named on the model view itself: each thumbnail of a head that
// heads.json names carries a short label (and the names in its accessible name), visible on a
// 1366×768 laptop screen without scrolling while the poem is written, and at 390 px, where its
// text is still at least 11 px and the whole label stays inside its map.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, axeViolations, modelTabSession } = require('./harness');

const HEADS_JSON = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'tang-poems', 'heads.json'), 'utf8'));
const NAMED = new Set([...HEADS_JSON.heads, ...HEADS_JSON.marks].map((h) => `${h.layer}/${h.head}`));

/** Every thumbnail label: its head, text, box in the viewport, the box of its map, its accessible name. */
const marks = (page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('#model-grid [data-testid=thumb-badge]'), (b) => {
      const cell = b.closest('[data-testid=thumb]');
      const box = b.getBoundingClientRect();
      const map = cell.querySelector('canvas').getBoundingClientRect();
      return {
        head: `${cell.dataset.layer}/${cell.dataset.head}`,
        text: b.textContent,
        label: cell.getAttribute('aria-label'),
        fontPx: parseFloat(getComputedStyle(b).fontSize),
        // Wider content than box: the text is cut (ellipsis) rather than read.
        clipped: b.scrollWidth > b.clientWidth + 0.5 || b.scrollHeight > b.clientHeight + 0.5,
        box: { top: box.top, bottom: box.bottom, left: box.left, right: box.right },
        map: { top: map.top, bottom: map.bottom, left: map.left, right: map.right },
      };
    }),
  );

/** Starts a 60-character generation and waits until it has written 12 characters, still writing. */
async function writing(page) {
  const before = await page.evaluate(() => {
    document.getElementById('poem-max-new').value = '60';
    document.getElementById('poem-stop-at-end').checked = false;
    const id = window.__poem.run.id;
    document.getElementById('poem-generate').click();
    return id;
  });
  await page.waitForFunction(
    (id) => {
      const r = window.__poem.run;
      return r && r.id !== id && !r.done && r.n - r.promptLength >= 12;
    },
    before,
    { timeout: 60000 },
  );
}

for (const viewport of [
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
]) {
  test(`at ${viewport.width} px every named head is marked on its thumbnail${viewport.width > 600 ? ', in view while the poem is written' : ''}`, async () => {
    const session = await modelTabSession({ viewport });
    const { page, problems } = session;
    try {
      await page.waitForSelector('#model-grid [data-testid=thumb-badge]');
      const heads = await page.evaluate(() => window.__poem.heads.map((h) => ({ ...h })));
      await writing(page);
      const seen = await marks(page);
      // One label per named head, on that head's thumbnail, with every name of it.
      expect(new Set(seen.map((m) => m.head))).toEqual(NAMED);
      expect(seen).toHaveLength(NAMED.size);
      for (const m of seen) {
        const mine = heads.filter((h) => `${h.layer}/${h.head}` === m.head);
        expect([m.head, m.label]).toEqual([
          m.head,
          expect.stringContaining(`learnt: ${mine.map((h) => h.name).join('; ')}`),
        ]);
        // The label sits on its map, inside it.
        expect([m.head, m.box.left >= m.map.left - 1, m.box.right <= m.map.right + 1]).toEqual([m.head, true, true]);
        expect([m.head, m.box.top >= m.map.top - 1, m.box.bottom <= m.map.bottom + 1]).toEqual([m.head, true, true]);
        // Readable on a phone too (9 px was not), and whole: not cut to fit.
        expect([m.head, m.text, m.fontPx >= 11, m.clipped]).toEqual([m.head, m.text, true, false]);
      }
      if (viewport.width > 600) {
        // Without scrolling: the page is at its top and every label is inside the window.
        expect(await page.evaluate(() => window.scrollY)).toBe(0);
        for (const m of seen) expect([m.head, m.box.bottom <= viewport.height]).toEqual([m.head, true]);
        // …and beside them the poem: its first generated character is in the window too.
        const firstNew = await page.evaluate(() => {
          const chip = document.querySelector(
            `[data-testid=poem-token][data-index="${window.__poem.run.promptLength}"]`,
          );
          return chip.getBoundingClientRect().bottom;
        });
        expect(firstNew).toBeLessThanOrEqual(viewport.height);
      }
      // Still there after the grid is built anew for the next run.
      await page.waitForFunction(() => window.__poem.run.done, null, { timeout: 60000 });
      expect(new Set((await marks(page)).map((m) => m.head))).toEqual(NAMED);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await session.close();
    }
  });
}
