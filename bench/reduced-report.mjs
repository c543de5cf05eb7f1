// The printed table of the reduced-precision decode rows (bench/reduced-rows.mjs's answers), with
// issue 19's targets: on the bandwidth-bound rows (1024 cached tokens or more, or the 2048-wide
// layer) an int8 step ≥ 2.5× our f32 step and f16/bf16 ≥ 1.6×; every reduced step within 1.5× of
// its bytes ÷ the copy bandwidth; ≥ 1.3× onnxruntime-web at equal threads and weight bits.
import { fmtNum, fmtPct, fmtRatio, median, renderTable } from './util.mjs';

const INT8_TARGET = 2.5,
  HALF_TARGET = 1.6,
  BOUND_TARGET = 1.5,
  ORT_TARGET = 1.3;

const boundByBandwidth = (row) => row.ctx >= 1024 || row.name.startsWith('GQA');
/** ORT's step at the same weight bits as ours (its cache is always f32): f32/f32 ↔ ort f32, int8/f32 ↔ ort int8. */
const ortPeerOf = (key) => ({ 'f32/f32': 'ort f32', 'int8/f32': 'ort int8' })[key];

/** Lines of the report for one thread count's answer; `targets` collects each checked target's status. */
function threadSection(ans, targets) {
  const out = [];
  if (ans.error) return [`reduced rows, ${ans.threads} thread(s): ${ans.error}`];
  const bandwidth = median(ans.bandwidth ?? []);
  out.push(
    `reduced-precision decode, ${ans.threads} thread(s), ${ans.build}; onnxruntime-web ${ans.ort?.version ?? '?'}; ` +
      `copy bandwidth ${fmtNum(bandwidth / 1e9)} GB/s; load average ${ans.loadAverage?.map((x) => x.toFixed(2)).join(' ') ?? '?'}`,
  );
  const table = [];
  const errors = [];
  for (const row of ans.rows) {
    const f32 = row.impls['f32/f32']?.median;
    for (const [key, v] of Object.entries(row.impls)) {
      if (v.error) {
        errors.push(`${row.name} after ${row.ctx}, ${key}: ${v.error}`);
        continue;
      }
      const boundMs = (v.bytes / bandwidth) * 1000;
      const speedup = key.startsWith('ort') ? null : f32 / v.median;
      const peer = row.impls[ortPeerOf(key)];
      const vsOrt = peer?.median ? peer.median / v.median : null;
      table.push([
        row.name,
        String(row.ctx),
        key,
        v.median.toFixed(3),
        speedup == null ? '' : fmtRatio(speedup),
        fmtNum(v.bytes / 1e6),
        fmtPct((boundMs / v.median) * 100),
        vsOrt == null ? '' : fmtRatio(vsOrt),
      ]);
      if (key.startsWith('ort')) continue;
      const [w, kv] = key.split('/');
      const label = `${ans.threads}t ${row.name} after ${row.ctx}, ${key}`;
      if (boundByBandwidth(row) && kv === 'f32' && w !== 'f32') {
        const want = w === 'int8' ? INT8_TARGET : HALF_TARGET;
        targets.push([`${label}: ≥ ${want}× our f32 step`, speedup >= want, fmtRatio(speedup)]);
      }
      if (w !== 'f32' || kv !== 'f32')
        targets.push([
          `${label}: within ${BOUND_TARGET}× of bytes ÷ bandwidth`,
          v.median <= BOUND_TARGET * boundMs,
          `${fmtNum(v.median / boundMs, 2)}×`,
        ]);
      if (vsOrt != null)
        targets.push([
          `${label}: ≥ ${ORT_TARGET}× onnxruntime-web at equal bits`,
          vsOrt >= ORT_TARGET,
          fmtRatio(vsOrt),
        ]);
    }
    table.push(null);
  }
  out.push(
    renderTable(
      ['step', 'cached', 'weights/cache', 'ms', '× our f32', 'MB read', '% of bound', 'vs ORT (equal bits)'],
      table,
      ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  out.push(...new Set(errors.map((e) => `not measured: ${e}`)));
  if (ans.modelError) out.push(`model rows: ${ans.modelError}`);
  return out;
}

/** The report's lines for { byThreads: { N: answer } }. */
export function reducedReport(res) {
  const out = ['', '## Reduced precision: decode step per weight and KV-cache dtype (bench/reduced.mjs)', ''];
  if (res.error) return [...out, `skipped: ${res.error}`];
  const targets = [];
  for (const ans of Object.values(res.byThreads)) out.push(...threadSection(ans, targets), '');
  out.push(
    'ms: median step time; × our f32: our f32/f32 step ÷ this one; MB read: the weights once and the cached K/V once;',
    '% of bound: (MB read ÷ copy bandwidth) ÷ ms; vs ORT: onnxruntime-web ÷ ours at the same weight bits (its cache is f32;',
    "ort int8: quantize_dynamic's DynamicQuantizeLinear → MatMulInteger, activations quantized per call).",
    '',
  );
  const met = targets.filter(([, ok]) => ok).length;
  out.push(`targets: ${met} of ${targets.length} met`);
  for (const [what, , got] of targets.filter(([, ok]) => !ok)) out.push(`  not met: ${what} (${got})`);
  return out;
}
