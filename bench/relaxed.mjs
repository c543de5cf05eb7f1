// Relaxed SIMD under Node 20, which runs it only behind a V8 flag: whether this Node has it, and
// the bench restarting itself with the flag where it does not.
import { spawnSync } from 'node:child_process';

export const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

// (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd …)), as bindings/choose-build.mjs probes.
const PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2,
  253, 133, 2, 11,
]);
export const relaxedSimdHere = () => WebAssembly.validate(PROBE);

/** Where this Node lacks relaxed SIMD and was not started with the flag: runs this script again with it, and exits with its status. */
export function restartWithRelaxedSimd() {
  if (relaxedSimdHere() || process.execArgv.includes(RELAXED_FLAG)) return;
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}
