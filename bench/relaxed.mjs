// The relaxed-SIMD side of the bench: Node 20 runs relaxed SIMD only behind a V8 flag, so the bench
// restarts itself with it; and the issue-11 target, the relaxed build against the mul+add build.
import { spawnSync } from 'node:child_process';

export const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

// (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd …)), as bindings/create.mjs probes.
const PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);
export const relaxedSimdHere = () => WebAssembly.validate(PROBE);

/** Where this Node lacks relaxed SIMD and was not started with the flag: runs this script again with it, and exits with its status. */
export function restartWithRelaxedSimd() {
  if (relaxedSimdHere() || process.execArgv.includes(RELAXED_FLAG)) return;
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

export const RELAXED_TARGET = { ratio: 1.15, minTokens: 96 };

/** [target, met (true/false/null), detail]: relaxed 1 thread ÷ mul+add 1 thread, every shape from 96 tokens. */
export function relaxedTarget(shapes, fmtRatio) {
  const vals = Object.entries(shapes)
    .filter(([, r]) => r.n >= RELAXED_TARGET.minTokens)
    .map(([k, r]) => {
      const mulAdd = r.impls['wa-prepared-1'], relaxed = r.impls['wa-relaxed-1'];
      return [k, mulAdd?.median && relaxed?.median ? mulAdd.median / relaxed.median : null];
    });
  const met = vals.length && vals.every(([, v]) => v != null) ? vals.every(([, v]) => v >= RELAXED_TARGET.ratio) : null;
  return [`relaxed SIMD, 1 thread ≥ ${RELAXED_TARGET.ratio}× the mul+add build, ${RELAXED_TARGET.minTokens} tokens and up`, met,
    vals.map(([k, v]) => `${k} ${fmtRatio(v)}`).join(', ')];
}
