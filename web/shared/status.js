// The page's status lines: the engine line and the one error box (each message once).
import { el } from './dom.js';

export function describeError(where, e) {
  const kind = e && e.name ? `${e.name}: ` : '';
  return `${where} failed — ${kind}${e && e.message ? e.message : String(e)}`;
}

export function showErrors(box, messages) {
  const unique = [...new Set(messages)];
  box.hidden = unique.length === 0;
  box.replaceChildren(...unique.map((m) => el('p', { text: m })));
}

// Which build multiplies: relaxed SIMD's fused multiply-add, SIMD's multiply then add, or no SIMD.
const simdKind = (info) => (!info.simd ? 'off' : info.relaxedSimd ? 'on (relaxed: fused multiply-add)' : 'on');

export function showEngine(box, info, note, timing) {
  box.replaceChildren(
    'Engine: ',
    el('b', { 'data-testid': 'engine-version', text: `wasm-attention ${info.version}` }),
    ' · SIMD ',
    el('b', { 'data-testid': 'engine-simd', text: simdKind(info) }),
    ' · threads ',
    el('b', { 'data-testid': 'engine-threads', text: String(info.threads) }),
    ` · cross-origin isolated: ${window.crossOriginIsolated ? 'yes' : 'no'}`,
  );
  if (timing) {
    box.append(
      ' · last computation ',
      el('b', { 'data-testid': 'engine-time', text: `${timing.engineMs.toFixed(1)} ms` }),
      ` in the engine (${timing.totalMs.toFixed(1)} ms with the trip to its worker and drawing)`,
    );
  }
  if (note) box.append(el('span', { class: 'note', text: ` · ${note}` }));
}
