// Wiring of the demo page: controls → inputs → engine → views.
// All attention arithmetic happens in the WebAssembly engine, which runs in a Web Worker
// (engine-worker.js, reached through engine.js); this file only prepares inputs (tokens,
// embeddings, weights), sends them to the worker and hands the numbers it returns to the views.
import { tokenize } from './tokenize.js';
import { embed } from './embeddings.js';
import { multiHeadWeights, selfAttentionWeights } from './weights.js';
import { cellAt, drawHeatmap, drawLegend } from './heatmap.js';
import { drawBars } from './bars.js';
import { viridis } from './colormap.js';
import { renderSteps } from './steps.js';
import { buildExport, downloadJSON, downloadPNG } from './export.js';
import { startEngine } from './engine.js';
import { el } from './dom.js';

// The package, as a static host of the package folder serves it (web/ next to dist/);
// engine-worker.js imports it from there.
const ENGINE_URL = '../dist/index.mjs';
const LIMITS = { dModel: 1024, heads: 64, tokens: 128 };
const DEBOUNCE_MS = 150;

const $ = (id) => document.getElementById(id);
const form = $('controls');

const state = {
  engine: null, // { info, note, run(groups) } of engine.js
  run: null, // the last computation that produced weights
  generation: 0, // bumped by every compute(); only the newest one's reply is shown
  busy: false, // a request is with the worker
  wanted: null, // the newest request not yet sent (at most one waits)
  idle: [], // resolvers of demo.settled()
  selection: { query: 0, bars: 'self', source: 'self' },
  weightCache: new Map(),
  maps: new WeakMap(), // canvas → { layout, matrix, n, label, key }
  timer: 0,
};

// What the browser test (and a curious reader, in the console) can inspect.
const demo = {
  ready: false,
  computeCount: 0,
  info: null,
  last: null,
  recompute: () => compute(),
  /** True while a request is with the engine worker. */
  get busy() {
    return state.busy;
  },
  /** Resolves once no request is with the worker or waiting for it. */
  settled: () => new Promise((resolve) => {
    if (!state.busy && !state.wanted) resolve();
    else state.idle.push(resolve);
  }),
  serialize: () => serialize(demo.last),
  serializeArgs: () => serialize(demo.last?.args ?? null),
};
window.__demo = demo;

// ---------- small helpers ----------

function numberField(id) {
  const raw = $(id).value.trim();
  return raw === '' ? NaN : Number(raw);
}

/** A weight as its float32 value, with enough digits to identify it exactly. */
function formatWeight(v) {
  if (!Number.isFinite(v)) return String(v);
  return String(parseFloat(v.toPrecision(9)));
}

function maxOf(values) {
  let m = 0;
  for (const v of values) if (v > m) m = v;
  return m > 0 ? m : 1;
}

function bytesToBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Plain-data copy of the last run: typed arrays become { $typed, base64 } (exact bytes). */
function serialize(value) {
  if (ArrayBuffer.isView(value)) {
    return { $typed: value.constructor.name, base64: bytesToBase64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  }
  if (Array.isArray(value)) return value.map(serialize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, serialize(v)]));
  }
  return value;
}

function cached(key, make) {
  if (!state.weightCache.has(key)) {
    if (state.weightCache.size >= 4) state.weightCache.delete(state.weightCache.keys().next().value);
    state.weightCache.set(key, make());
  }
  return state.weightCache.get(key);
}

// ---------- errors and status ----------

function showErrors(messages) {
  const box = $('error');
  box.hidden = messages.length === 0;
  box.textContent = messages.join('\n');
}

function describe(where, e) {
  const kind = e && e.name ? `${e.name}: ` : '';
  return `${where} failed — ${kind}${e && e.message ? e.message : String(e)}`;
}

function showEngine(info, note, timing) {
  const box = $('engine');
  box.replaceChildren(
    'Engine: ',
    el('b', { 'data-testid': 'engine-version', text: `wasm-attention ${info.version}` }),
    ' · SIMD ',
    el('b', { 'data-testid': 'engine-simd', text: info.simd ? 'on' : 'off' }),
    ' · threads ',
    el('b', { 'data-testid': 'engine-threads', text: String(info.threads) }),
    ` · cross-origin isolated: ${window.crossOriginIsolated ? 'yes' : 'no'}`,
  );
  if (timing) {
    box.append(' · last computation ',
      el('b', { 'data-testid': 'engine-time', text: `${timing.engineMs.toFixed(1)} ms` }),
      ` in the engine (${timing.totalMs.toFixed(1)} ms with the trip to its worker and drawing)`);
  }
  if (note) box.append(el('span', { class: 'note', text: ` · ${note}` }));
}

// ---------- settings and inputs ----------

function readSettings() {
  return {
    text: $('text').value,
    mode: form.elements.mode.value,
    dModel: numberField('dModel'),
    numHeads: numberField('heads'),
    isCausal: $('causal').checked,
    seed: numberField('seed'),
    preset: $('preset').value,
  };
}

/** Problems the page itself must refuse (to stay responsive); the engine checks the rest. */
function pageProblems(s, tokens) {
  const out = [];
  if (tokens.length === 0) out.push('Type a sentence: there are no tokens to attend over.');
  if (tokens.length > LIMITS.tokens) out.push(`The demo shows at most ${LIMITS.tokens} tokens; this sentence has ${tokens.length}.`);
  if (!Number.isInteger(s.dModel) || s.dModel < 1 || s.dModel > LIMITS.dModel) {
    out.push(`d_model must be a whole number from 1 to ${LIMITS.dModel} in the demo, got ${Number.isNaN(s.dModel) ? 'nothing' : s.dModel}.`);
  }
  if (Number.isNaN(s.numHeads)) out.push('heads: enter a number of heads.');
  else if (s.numHeads > LIMITS.heads) out.push(`The demo draws at most ${LIMITS.heads} heads, got ${s.numHeads}.`);
  if (!Number.isInteger(s.seed)) out.push(`seed must be a whole number, got ${Number.isNaN(s.seed) ? 'nothing' : s.seed}.`);
  return out;
}

function buildArgs(s, tokens) {
  const n = tokens.length;
  const x = embed(tokens, s.dModel);
  const sw = cached(`self|${s.dModel}|${s.seed}|${s.preset}`, () =>
    selfAttentionWeights({ dModel: s.dModel, seed: s.seed, preset: s.preset }));
  const headsKey = s.preset === 'identity' ? s.numHeads : '*';
  const mw = cached(`mha|${s.dModel}|${headsKey}|${s.seed}|${s.preset}`, () =>
    multiHeadWeights({ embedDim: s.dModel, numHeads: s.numHeads, seed: s.seed, preset: s.preset }));
  const mha = {
    query: x,
    embedDim: s.dModel,
    numHeads: s.numHeads,
    inProjWeight: mw.inProjWeight,
    outProjWeight: mw.outProjWeight,
    isCausal: s.isCausal,
    needWeights: true,
  };
  return {
    self: { x, seqLen: n, dModel: s.dModel, wq: sw.wq, wk: sw.wk, wv: sw.wv, isCausal: s.isCausal, needWeights: true, returnIntermediates: true },
    mhaHeads: { ...mha, averageAttnWeights: false, returnIntermediates: true },
    mhaAverage: { ...mha, averageAttnWeights: true },
  };
}

// ---------- the computation ----------

function schedule(delay = DEBOUNCE_MS) {
  clearTimeout(state.timer);
  state.timer = setTimeout(compute, delay);
}

// Every change asks for a new computation; the worker gets at most one request at a time, and
// of the requests made meanwhile only the newest is sent next. A reply is shown only if no
// newer compute() happened since its request (a newer result, or a page-level error, stays).
function compute() {
  clearTimeout(state.timer);
  if (!state.engine) return;
  const generation = ++state.generation;
  state.wanted = null;
  const t0 = performance.now();
  const s = readSettings();
  const tokens = tokenize(s.text, s.mode);
  const problems = pageProblems(s, tokens);
  const last = { settings: s, tokens, args: null, results: null, errors: problems };
  if (problems.length) {
    finish(last, null, t0, 0);
    return;
  }
  last.args = buildArgs(s, tokens);
  state.wanted = { generation, t0, last };
  pump();
}

function pump() {
  if (state.busy) return;
  const job = state.wanted;
  if (!job) {
    for (const resolve of state.idle.splice(0)) resolve();
    return;
  }
  state.wanted = null;
  state.busy = true;
  const { args } = job.last;
  const groups = [
    { label: 'Self-attention', calls: [{ key: 'self', method: 'selfAttention', args: args.self }] },
    { label: 'Multi-head attention', calls: [
      { key: 'mhaHeads', method: 'multiHeadAttention', args: args.mhaHeads },
      { key: 'mhaAverage', method: 'multiHeadAttention', args: args.mhaAverage },
    ] },
  ];
  state.engine.run(groups).then(
    (reply) => {
      if (job.generation !== state.generation) return; // stale: a newer compute() happened
      job.last.results = { self: reply.results.self, mhaHeads: reply.results.mhaHeads, mhaAverage: reply.results.mhaAverage };
      job.last.errors = reply.errors.map(({ label, error }) => describe(label, error));
      finish(job.last, job.last.results, job.t0, reply.engineMs);
    },
    (e) => {
      if (job.generation !== state.generation) return;
      job.last.errors = [describe('The engine', e)];
      finish(job.last, null, job.t0, 0);
    },
  ).finally(() => {
    state.busy = false;
    pump();
  });
}

function finish(last, results, t0, engineMs) {
  const run = results && (results.self || results.mhaHeads) ? { ...last, n: last.tokens.length } : null;
  state.run = run;
  render(run, last);
  showErrors(last.errors);
  const totalMs = performance.now() - t0;
  last.timing = { engineMs, totalMs };
  if (results) showEngine(state.engine.info, state.engine.note, last.timing);
  demo.last = last;
  demo.computeCount += 1;
  document.body.dataset.computeCount = String(demo.computeCount);
}

// ---------- views ----------

function renderTokens(tokens) {
  $('tokens').replaceChildren(
    ...tokens.map((t, i) => el('span', { class: 'token' }, el('small', { text: String(i + 1) }), t)),
  );
}

function registerMap(canvas, meta) {
  state.maps.set(canvas, meta);
}

function drawWeights(canvas, matrix, run, { maxSize, maxCell, label, key, domain }) {
  const n = run.n;
  const causal = run.settings.isCausal;
  const layout = drawHeatmap(canvas, {
    matrix,
    rows: n,
    cols: n,
    rowLabels: run.tokens,
    colLabels: run.tokens,
    domain,
    colormap: viridis,
    masked: causal ? (i, j) => j > i : undefined,
    maxSize,
    maxCell,
    selectedRow: state.selection.bars === key ? state.selection.query : -1,
  });
  canvas.dataset.weights = JSON.stringify(Array.from(matrix));
  canvas.dataset.rows = String(n);
  canvas.dataset.cols = String(n);
  canvas.setAttribute('aria-label', `${label}: attention weights heatmap, ${n} × ${n}`);
  registerMap(canvas, { layout, matrix, n, label, key });
}

function render(run, last) {
  renderTokens(last.tokens);
  const self = run?.results.self;
  const heads = run?.results.mhaHeads;
  const avg = run?.results.mhaAverage;
  if (run) {
    const n = run.n;
    if (state.selection.query >= n) state.selection.query = 0;
    if (state.selection.source.startsWith('head:') && (!heads || Number(state.selection.source.slice(5)) >= run.settings.numHeads)) {
      state.selection.source = 'self';
    }
    if (!['self', 'average'].includes(state.selection.bars) && (!heads || Number(state.selection.bars.slice(5)) >= run.settings.numHeads)) {
      state.selection.bars = 'self';
    }
  }
  renderSelf(run, self);
  renderHeads(run, heads, avg, last);
  renderQuery(run);
}

function renderSelf(run, self) {
  const canvas = $('self-map');
  const section = $('self-section');
  section.hidden = !self;
  if (!self) {
    delete canvas.dataset.weights;
    return;
  }
  const s = run.settings;
  const domain = [0, maxOf(self.weights)];
  drawWeights(canvas, self.weights, run, { maxSize: 400, maxCell: 56, label: 'single head', key: 'self', domain });
  drawLegend($('self-legend'), { domain, colormap: viridis, label: 'attention weight (0 … largest in this view)' });
  $('self-caption').textContent =
    `Every token's embedding x (d_model = ${s.dModel}) is projected to a query q = x·W_Qᵀ, a key k = x·W_Kᵀ and a value v = x·W_Vᵀ. ` +
    `Row i shows where query token i looks: its scores q·kⱼ against every key are scaled by 1/√d_k = 1/√${s.dModel}, ` +
    `softmax turns them into weights that sum to 1 across the row, and the token's output is the weighted sum of the values. ` +
    `Bright = much attention.` +
    (s.isCausal ? ' Hatched grey cells are masked by the causal mask: a token may not look at later tokens, so their weight is exactly 0.' : '') +
    ' Hover a cell for its exact weight; click a row to follow that query below.';
}

function renderHeads(run, heads, avg, last) {
  const box = $('mha-maps');
  const errBox = $('mha-error');
  const mhaErrors = (last.errors || []).filter((m) => m.startsWith('Multi-head'));
  errBox.hidden = mhaErrors.length === 0;
  errBox.textContent = mhaErrors.join('\n');
  box.replaceChildren();
  if (!run || !heads) {
    $('mha-legend').hidden = true;
    return;
  }
  $('mha-legend').hidden = false;
  const s = run.settings;
  const n = run.n;
  const H = s.numHeads;
  const headDim = s.dModel / H;
  let max = 0;
  for (const v of heads.weights) if (v > max) max = v;
  const domain = [0, max > 0 ? max : 1];
  const maxSize = H <= 4 ? 240 : H <= 8 ? 200 : 150;
  for (let h = 0; h < H; h++) {
    const canvas = el('canvas', { 'data-testid': 'heatmap-head', 'data-head': String(h) });
    const fig = el('figure', { class: 'map', 'data-view': 'head', 'data-head': String(h) },
      el('figcaption', { text: `head ${h + 1} · dims ${h * headDim}–${(h + 1) * headDim - 1}` }), canvas);
    box.append(fig);
    drawWeights(canvas, heads.weights.subarray(h * n * n, (h + 1) * n * n), run,
      { maxSize, label: `head ${h + 1}`, key: `head:${h}`, domain });
  }
  const avgCanvas = el('canvas', { 'data-testid': 'heatmap-average' });
  box.append(el('figure', { class: 'map', 'data-view': 'average' },
    el('figcaption', { text: `average of the ${H} heads` }), avgCanvas));
  drawWeights(avgCanvas, avg.weights, run, { maxSize, label: `average of ${H} heads`, key: 'average', domain });
  drawLegend($('mha-legend'), { domain, colormap: viridis, label: 'attention weight (0 … largest over all heads)' });
  $('mha-caption').textContent =
    `nn.MultiheadAttention splits d_model = ${s.dModel} into ${H} heads of ${headDim} dimensions. ` +
    `Each head projects Q, K and V into its own ${headDim}-dimensional subspace and runs the same steps there — scores, scaling by 1/√${headDim}, softmax, weighted sum — ` +
    `so different heads can attend to different things. Their outputs are concatenated and mixed by the output projection. ` +
    `The last map is the average over heads, what PyTorch returns by default.`;
}

function rowSource(run, key) {
  const n = run.n;
  const { self, mhaHeads, mhaAverage } = run.results;
  // max: the top of the colour scale of the heatmap the row comes from, so bars match it.
  if (key === 'self' && self) return { matrix: self.weights, label: 'the single head', max: maxOf(self.weights) };
  if (key === 'average' && mhaAverage) {
    return { matrix: mhaAverage.weights, label: `the average of ${run.settings.numHeads} heads`, max: maxOf(mhaHeads.weights) };
  }
  if (key.startsWith('head:') && mhaHeads) {
    const h = Number(key.slice(5));
    return { matrix: mhaHeads.weights.subarray(h * n * n, (h + 1) * n * n), label: `head ${h + 1}`, max: maxOf(mhaHeads.weights) };
  }
  return null;
}

function stepsData(run, source, i) {
  const n = run.n;
  const s = run.settings;
  const masked = s.isCausal ? (j) => j > i : () => false;
  if (source === 'self') {
    const r = run.results.self;
    const it = r?.intermediates;
    if (!it) return null;
    const dK = s.dModel;
    const dV = r.output.length / n;
    return {
      source: 'single head', tokens: run.tokens, query: i, dK, dV, scale: 1 / Math.sqrt(dK), masked, causal: s.isCausal,
      q: it.q.subarray(i * dK, (i + 1) * dK), K: it.k, V: it.v,
      scores: it.scores.subarray(i * n, (i + 1) * n),
      scaledScores: it.scaledScores.subarray(i * n, (i + 1) * n),
      weights: r.weights.subarray(i * n, (i + 1) * n),
      output: r.output.subarray(i * dV, (i + 1) * dV),
    };
  }
  const r = run.results.mhaHeads;
  const it = r?.intermediates;
  if (!it) return null;
  const h = Number(source.slice(5));
  const E = s.dModel;
  const H = s.numHeads;
  const d = E / H;
  const columns = (m, row) => m.subarray(row * E + h * d, row * E + (h + 1) * d);
  const gather = (m) => {
    const out = new Float32Array(n * d);
    for (let j = 0; j < n; j++) out.set(columns(m, j), j * d);
    return out;
  };
  const base = (h * n + i) * n;
  return {
    source: `head ${h + 1} of ${H}`, tokens: run.tokens, query: i, dK: d, dV: d, scale: 1 / Math.sqrt(d), masked, causal: s.isCausal,
    q: columns(it.q, i), K: gather(it.k), V: gather(it.v),
    scores: it.scores.subarray(base, base + n),
    scaledScores: it.scaledScores.subarray(base, base + n),
    weights: r.weights.subarray(base, base + n),
    output: columns(it.attnOutput, i),
  };
}

function renderQuery(run) {
  const section = $('query-section');
  section.hidden = !run;
  if (!run) return;
  const sel = state.selection;
  const querySelect = $('query');
  querySelect.replaceChildren(...run.tokens.map((t, i) => el('option', { value: String(i), text: `${i + 1}: ${t}` })));
  querySelect.value = String(sel.query);
  const sources = [];
  if (run.results.self) sources.push(['self', 'the single head']);
  if (run.results.mhaHeads) {
    for (let h = 0; h < run.settings.numHeads; h++) sources.push([`head:${h}`, `head ${h + 1}`]);
  }
  const sourceSelect = $('source');
  sourceSelect.replaceChildren(...sources.map(([v, t]) => el('option', { value: v, text: t })));
  if (!sources.some(([v]) => v === sel.source)) sel.source = sources[0]?.[0] ?? 'self';
  sourceSelect.value = sel.source;

  const row = rowSource(run, sel.bars) ?? rowSource(run, sel.source);
  const bars = $('row-bars');
  if (row) {
    const n = run.n;
    const values = row.matrix.subarray(sel.query * n, (sel.query + 1) * n);
    drawBars(bars, {
      values,
      labels: run.tokens,
      colormap: viridis,
      max: row.max,
      masked: run.settings.isCausal ? (j) => j > sel.query : undefined,
    });
    bars.dataset.weights = JSON.stringify(Array.from(values));
    $('row-caption').textContent =
      `Below: how query “${run.tokens[sel.query]}” (position ${sel.query + 1}) spreads its attention over the keys in ${row.label}, on the colour scale of that heatmap.`;
    bars.setAttribute('aria-label', `weights of query ${run.tokens[sel.query]} in ${row.label}`);
  }

  const steps = $('steps');
  const data = stepsData(run, sel.source, sel.query);
  if (data) {
    renderSteps(steps, data);
  } else {
    steps.replaceChildren(el('p', { class: 'error inline', text:
      'The engine returned no intermediates (the returnIntermediates option), so the four steps cannot be shown with its numbers.' }));
  }
}

// ---------- interaction ----------

function tooltipFor(canvas, event) {
  const meta = state.maps.get(canvas);
  if (!meta || !state.run) return null;
  const rect = canvas.getBoundingClientRect();
  const cell = cellAt(meta.layout, event.clientX - rect.left, event.clientY - rect.top);
  if (!cell) return null;
  return { ...cell, meta };
}

function showTooltip(event, hit) {
  const tip = $('tooltip');
  const tokens = state.run.tokens;
  const q = tokens[hit.i];
  if (hit.j < 0) {
    tip.replaceChildren(el('div', {}, 'query ', el('span', { class: 'tok', text: q }), ` #${hit.i + 1}: click to follow this row`));
  } else {
    const k = tokens[hit.j];
    const masked = state.run.settings.isCausal && hit.j > hit.i;
    const w = hit.meta.matrix[hit.i * hit.meta.n + hit.j];
    tip.replaceChildren(
      el('div', {}, 'query ', el('span', { class: 'tok', 'data-testid': 'tip-query', text: q }), ` #${hit.i + 1} → key `,
        el('span', { class: 'tok', 'data-testid': 'tip-key', text: k }), ` #${hit.j + 1}`),
      el('div', {}, 'weight ', el('b', { 'data-testid': 'tip-weight', text: formatWeight(w) }),
        masked ? ' (masked: later token)' : ''),
      el('div', { class: 'muted', text: hit.meta.label }),
    );
  }
  tip.hidden = false;
  const pad = 14;
  const { innerWidth, innerHeight } = window;
  const box = tip.getBoundingClientRect();
  let x = event.clientX + pad;
  let y = event.clientY + pad;
  if (x + box.width > innerWidth - 4) x = event.clientX - pad - box.width;
  if (y + box.height > innerHeight - 4) y = event.clientY - pad - box.height;
  tip.style.left = `${Math.max(4, x)}px`;
  tip.style.top = `${Math.max(4, y)}px`;
}

function onMapMove(event) {
  if (!(event.target instanceof HTMLCanvasElement)) return;
  const hit = tooltipFor(event.target, event);
  if (hit) showTooltip(event, hit);
  else $('tooltip').hidden = true;
}

function onMapClick(event) {
  if (!(event.target instanceof HTMLCanvasElement)) return;
  const hit = tooltipFor(event.target, event);
  if (!hit) return;
  state.selection.query = hit.i;
  state.selection.bars = hit.meta.key;
  if (hit.meta.key !== 'average') state.selection.source = hit.meta.key;
  render(state.run, demo.last);
}

function bind() {
  for (const id of ['self-map', 'mha-maps']) {
    const area = $(id);
    area.addEventListener('mousemove', onMapMove);
    area.addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
    area.addEventListener('click', onMapClick);
  }
  form.addEventListener('input', (e) => {
    const immediate = e.target.type === 'radio' || e.target.type === 'checkbox' || e.target.tagName === 'SELECT';
    schedule(immediate ? 0 : DEBOUNCE_MS);
  });
  $('query').addEventListener('change', () => {
    state.selection.query = Number($('query').value);
    if (state.run) render(state.run, demo.last);
  });
  $('source').addEventListener('change', () => {
    state.selection.source = $('source').value;
    state.selection.bars = state.selection.source;
    if (state.run) render(state.run, demo.last);
  });
  $('export-json').addEventListener('click', () => {
    const run = state.run;
    if (!run) return;
    downloadJSON(buildExport({
      tokens: run.tokens,
      settings: run.settings,
      engine: state.engine.info,
      selfWeights: run.results.self?.weights ?? null,
      headWeights: run.results.mhaHeads?.weights ?? null,
      averageWeights: run.results.mhaAverage?.weights ?? null,
      numHeads: run.settings.numHeads,
    }));
  });
  $('export-png').addEventListener('click', () => {
    if (!state.run) return;
    const panels = [];
    if (state.run.results.self) panels.push({ title: 'self-attention (one head)', canvas: $('self-map') });
    for (const fig of $('mha-maps').querySelectorAll('figure')) {
      panels.push({ title: fig.querySelector('figcaption').textContent, canvas: fig.querySelector('canvas') });
    }
    panels.push({ title: 'colour scale', canvas: $('mha-legend').hidden ? $('self-legend') : $('mha-legend') });
    downloadPNG(panels, { columns: 3, heading: `“${state.run.settings.text}” · d_model ${state.run.settings.dModel} · ${state.run.settings.numHeads} heads` });
  });
}

// ---------- start ----------

/** ?threads=1 (or another count, or auto, the default); the engine checks the count. */
function requestedThreads() {
  const requested = new URLSearchParams(location.search).get('threads');
  return requested === null || requested === 'auto' ? 'auto' : Number(requested);
}

async function start() {
  bind();
  try {
    const engine = await startEngine({ threads: requestedThreads() });
    state.engine = engine;
    demo.info = engine.info;
    showEngine(engine.info, engine.note, null);
  } catch (e) {
    $('engine').textContent = 'Engine not loaded.';
    showErrors([`Could not load the WebAssembly engine from ${ENGINE_URL} in a Web Worker — ${e && e.name ? `${e.name}: ` : ''}${e && e.message ? e.message : e}. ` +
      'Build it with `npm run build` and serve the package folder (`npm start`).']);
    document.body.dataset.state = 'no-engine';
    return;
  }
  compute();
  await demo.settled();
  demo.ready = true;
  document.body.dataset.state = 'ready';
}

start();
