#!/usr/bin/env node
// The viz views' drawing times in Chromium (Debian's, through playwright-core, as the browser
// tests): a 2,048 × 2,048 causal heatmap drawn from scratch, one query row appended (a token
// generated), a zoom step and a hover; the head view and a 2 × 4-head model view at 2,048 tokens.
// Each row: the median and range of --reps runs in fresh pages. The target is < 200 ms for a whole
// 2,048² view (issue 20); timings are noisy on a shared machine: compare within one run.
//   node bench/viz.mjs [--reps=5] [--tokens=2048]
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { blankPageSession, runInPage } = require('../tests/browser/harness.js');

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const REPS = arg('reps', 5);
const TOKENS = arg('tokens', 2048);
const MODULES = { viz: '/viz/index.mjs', t: '/tests/browser/viz-page.mjs' };

async function measureOnce(page, T) {
  return runInPage(
    page,
    MODULES,
    async (m, n) => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const full = m.t.causalMap(n, 11);
      const toks = m.t.tokens(n);
      const shorter = m.t.shorter(full, n);
      const out = {};
      await frame();
      let t = performance.now();
      const map = m.viz.createHeatmap(m.t.mount(900), {
        weights: shorter,
        queryTokens: toks.slice(0, -1),
        causal: true,
      });
      out['heatmap: create and draw'] = performance.now() - t;
      t = performance.now();
      map.update({ weights: full, queryTokens: toks });
      out['heatmap: one row appended'] = performance.now() - t;
      const canvas = document.querySelector('[data-testid=viz-heatmap-canvas]');
      canvas.focus();
      t = performance.now();
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key: '+', bubbles: true }));
      out['heatmap: zoom step'] = performance.now() - t;
      t = performance.now();
      // Zoomed to ≥ 1 device pixel per cell: the full-resolution level's rows in view are coloured.
      while (JSON.parse(canvas.dataset.layout).level > 1)
        canvas.dispatchEvent(new KeyboardEvent('keydown', { key: '+', bubbles: true }));
      out['heatmap: zoomed to ≥ 1 px cells (rows in view coloured)'] = performance.now() - t;
      const box = canvas.getBoundingClientRect();
      t = performance.now();
      canvas.dispatchEvent(
        new PointerEvent('pointermove', { clientX: box.left + box.width / 2, clientY: box.top + box.height / 2 }),
      );
      out['heatmap: hover'] = performance.now() - t;
      map.dispose();
      const attention = [new Float32Array(4 * n * n), new Float32Array(4 * n * n)];
      for (const layer of attention) for (let h = 0; h < 4; h++) layer.set(full, h * n * n);
      t = performance.now();
      const heads = m.viz.createHeadView(m.t.mount(700), { attention, tokens: toks });
      out['head view: create and draw'] = performance.now() - t;
      heads.dispose();
      t = performance.now();
      const model = m.viz.createModelView(m.t.mount(900), { attention, tokens: toks, numKvHeads: 2 });
      out['model view (2 × 4 heads): create and draw'] = performance.now() - t;
      model.dispose();
      return out;
    },
    T,
  );
}

const session = await blankPageSession();
const rows = {};
try {
  for (let r = 0; r < REPS; r++) {
    await session.page.goto(`${session.server.url}tests/browser/blank.html`);
    for (const [k, v] of Object.entries(await measureOnce(session.page, TOKENS))) (rows[k] ??= []).push(v);
  }
} finally {
  await session.close();
}
console.log(`viz drawing in Chromium, ${TOKENS} × ${TOKENS} tokens, ${REPS} runs (ms: median [min … max])`);
for (const [name, times] of Object.entries(rows)) {
  const s = [...times].sort((a, b) => a - b);
  const f = (v) => v.toFixed(1);
  console.log(`  ${name.padEnd(44)} ${f(s[Math.floor(s.length / 2)]).padStart(7)}  [${f(s[0])} … ${f(s.at(-1))}]`);
}
