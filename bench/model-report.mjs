// The model rows' printed table and the targets of issue 18 (bench, not tests): decode and prefill
// tokens/s ≥ 1.5× onnxruntime-web on the same model at 1 and 2 threads; the 135M-shape model
// loaded from bytes in memory in under 2 s.
import { fmtMs, fmtNum, fmtRatio, renderTable } from './util.mjs';
import { verdict } from './targets.mjs';

export const SPEEDUP_TARGET = 1.5;
export const LOAD_TARGET_MS = 2000;
const BIG = 'smollm-135m-shape';

const stepLabel = (row) => (row.kind === 'prefill' ? `prefill ${row.tokens}` : `decode after ${row.ctx}`);
const tps = (v) => (v && !v.error ? v.tokensPerSecond : null);

/** Every row of every model and thread count: [model, threads, row]. */
function allRows(res) {
  const out = [];
  for (const [threads, child] of Object.entries(res.byThreads ?? {}))
    for (const m of child.models ?? []) for (const row of m.rows ?? []) out.push([m.name, Number(threads), row]);
  return out;
}

export function modelTargets(res) {
  const rows = allRows(res);
  const vs = (key) =>
    rows.map(([name, t, r]) => {
      const ours = tps(r.ours),
        peer = tps(r[key]);
      return [`${name} ${stepLabel(r)} ${t}t`, ours && peer ? ours / peer : null];
    });
  const judge = (vals) =>
    vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => v >= SPEEDUP_TARGET) : null;
  const full = vs('ort');
  const compute = vs('ortLogitsOnly').filter(([k]) => !k.includes('prefill'));
  const loads = Object.entries(res.byThreads ?? {}).flatMap(([t, c]) =>
    (c.models ?? []).filter((m) => m.name === BIG).map((m) => [`${t}t`, m.oursLoadMs?.median ?? null]),
  );
  const fmt = (vals, f) => vals.map(([k, v]) => `${k} ${f(v)}`).join(', ');
  // the worst row, and every row short of the target (the full list is in the JSON)
  const summary = (vals) => {
    const known = vals.filter(([, v]) => v != null);
    if (!known.length) return '';
    const [worstKey, worst] = known.reduce((a, b) => (b[1] < a[1] ? b : a));
    const short = known.filter(([, v]) => v < SPEEDUP_TARGET);
    return `worst ${fmtRatio(worst)} (${worstKey})${short.length ? `; short of it: ${fmt(short, fmtRatio)}` : ''}`;
  };
  return [
    [
      `decode and prefill tokens/s ≥ ${SPEEDUP_TARGET}× onnxruntime-web, same model, 1 and 2 threads`,
      judge(full),
      summary(full),
    ],
    [
      `(stricter, not the target) decode ≥ ${SPEEDUP_TARGET}× onnxruntime-web's step without copying its cache out`,
      judge(compute),
      summary(compute),
    ],
    [
      `${BIG} loads from bytes in memory in < ${LOAD_TARGET_MS / 1000} s (median of 3)`,
      loads.length && loads.every(([, v]) => v != null) ? loads.every(([, v]) => v < LOAD_TARGET_MS) : null,
      fmt(loads, (v) => `${fmtMs(v)} ms`),
    ],
  ];
}

export function modelReport(res) {
  const out = [
    '',
    'Models: tokens per second (median), ours (loadModel, logits "last") against onnxruntime-web on the same checkpoint',
  ];
  if (res.error) return [...out, `  not run: ${res.error}`];
  const table = [];
  const notes = [];
  // grouped by model, then thread count (each thread count is a child process of its own)
  const entries = [];
  for (const [threads, child] of Object.entries(res.byThreads ?? {})) {
    if (child.error) notes.push(`${threads} thread(s): ${child.error}`);
    else if (child.oursVia && child.oursVia !== 'loadModel')
      notes.push(`${threads} thread(s), ours via ${child.oursVia}`);
    for (const m of child.models ?? []) entries.push([Number(threads), m]);
  }
  const order = (name) => (res.models ?? []).indexOf(name);
  entries.sort(([ta, a], [tb, b]) => order(a.name) - order(b.name) || ta - tb);
  let previous = null;
  for (const [threads, m] of entries) {
    if (m.error) {
      notes.push(`${m.name}, ${threads} thread(s): ${m.error}`);
      continue;
    }
    if (m.oursError) notes.push(`${m.name}, ${threads} thread(s), ours: ${m.oursError}`);
    const first = m.name !== previous;
    if (first && previous !== null) table.push(null); // a blank line between models
    previous = m.name;
    m.rows.forEach((r, i) => {
      const ours = tps(r.ours),
        ort = tps(r.ort),
        bare = tps(r.ortLogitsOnly);
      table.push([
        i === 0 && first ? m.name : '',
        stepLabel(r),
        String(threads),
        fmtNum(ours),
        fmtNum(ort),
        ours && ort ? fmtRatio(ours / ort) : 'n/a',
        bare ? fmtNum(bare) : '',
        ours && bare ? fmtRatio(ours / bare) : '',
        r.worstVsOrt == null
          ? 'n/a'
          : r.worstVsOrt <= 1
            ? `ok (${r.worstVsOrt.toFixed(2)})`
            : `DIFFERS (${r.worstVsOrt.toFixed(1)})`,
        r.ours?.error ?? r.oursError ?? r.ort?.error ?? '',
      ]);
    });
    const load = m.oursLoadMs ? `${fmtMs(m.oursLoadMs.median)} ms` : 'n/a';
    const busy = m.cpu ? `; other processes used ${fmtNum(m.cpu.otherCores, 2)} cores meanwhile` : '';
    notes.push(
      `${m.name}, ${threads} thread(s): load from bytes in memory: ours ${load} (median of 3); onnxruntime-web session ${fmtMs(m.ortLoadMs)} ms${busy}`,
    );
  }
  out.push(
    renderTable(
      [
        'model',
        'step',
        'threads',
        'ours tok/s',
        'ORT tok/s',
        'ours÷ORT',
        'ORT no-copy tok/s',
        'ours÷that',
        'logits vs ORT',
        'note',
      ],
      table,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
    ),
  );
  out.push(
    '  ORT: the step as a generation loop runs it (new cache fetched as present_*); "no-copy": logits only, the',
    '  cache still computed inside (its compute alone). Logits vs ORT: worst |ours − ORT| ÷ (1e-3 + 1e-3·|ORT|) ≤ 1.',
    ...notes.map((n) => '  ' + n),
    '',
    'Targets of issue 18 (models):',
  );
  for (const [what, ok, figures] of modelTargets(res))
    out.push(`  ${verdict(ok).padEnd(7)} ${what}${figures ? `: ${figures}` : ''}`);
  return out;
}
