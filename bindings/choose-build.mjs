// Which build runs: the threads the environment allows (and the one warning when fewer than asked
// for run), and whether the engine has WebAssembly SIMD and relaxed SIMD, probed by tiny modules.

// More threads than this rarely pay for attention-sized work, and each holds a worker.
const MAX_AUTO_THREADS = 8;

// 'auto': what the environment allows. Threads need SharedArrayBuffer, which browsers grant only to
// cross-origin-isolated pages. Where they cannot run: { allowed: 1, reason } (the reason a user reads
// in info.threadsReason and in the one warning).
const ISOLATION_HEADERS = 'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';
function threadsAllowed(loader) {
  if (typeof crossOriginIsolated === 'boolean' && !crossOriginIsolated) {
    return {
      allowed: 1,
      reason:
        'this page is not cross-origin isolated (threads need SharedArrayBuffer, which browsers give only to ' +
        `cross-origin-isolated pages): serve it with ${ISOLATION_HEADERS}`,
    };
  }
  if (typeof SharedArrayBuffer !== 'function') {
    return {
      allowed: 1,
      reason:
        'this JavaScript engine has no SharedArrayBuffer, which threads need' +
        (loader.isNode
          ? ''
          : ` (browsers give it only to cross-origin-isolated pages: serve the page with ${ISOLATION_HEADERS})`),
    };
  }
  return { allowed: Math.max(1, Math.min(loader.hardwareThreads(), MAX_AUTO_THREADS)), reason: null };
}

// Threads asked for but not honoured are said once per realm (by any copy of the package), not per engine.
const WARNED = Symbol.for('wasm-attention: threads warning given');
export function warnThreadsOnce(asked, reason) {
  if (globalThis[WARNED]) return;
  globalThis[WARNED] = true;
  console.warn(
    `wasm-attention: threads: ${asked === 'auto' ? "'auto'" : asked} was asked for, but the engine runs on 1 thread: ${reason}`,
  );
}

// The smallest module with one SIMD instruction (i8x16.splat; as wasm-feature-detect probes).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);
const simdSupported = () => WebAssembly.validate(SIMD_PROBE);
// (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2)))
const RELAXED_SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2,
  253, 133, 2, 11,
]);
const relaxedSimdSupported = () => WebAssembly.validate(RELAXED_SIMD_PROBE);

export function chooseBuild(opts, loader) {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') {
    throw new Error('createAttention: this JavaScript engine has no WebAssembly');
  }
  const { allowed, reason } = threadsAllowed(loader);
  // An explicit count is honoured wherever threads exist at all (the caller knows the machine).
  const threads = opts.threads === 'auto' || allowed === 1 ? allowed : opts.threads;
  // Only a request that could not be honoured has a reason ('auto' on a one-core machine is honoured).
  const threadsReason = opts.threads !== 1 && reason !== null ? reason : null;
  const haveSimd = simdSupported();
  if (opts.simd === true && !haveSimd) {
    throw new Error(
      'createAttention: simd: true was asked for, but this engine lacks WebAssembly SIMD (leave simd unset and the scalar build is used)',
    );
  }
  const simd = opts.simd === 'auto' ? haveSimd : opts.simd;
  const haveRelaxed = simd && relaxedSimdSupported();
  if (opts.relaxedSimd === true && !haveRelaxed) {
    throw new Error(
      "createAttention: relaxedSimd: true was asked for, but this engine lacks WebAssembly relaxed SIMD (leave relaxedSimd unset or 'auto' and the SIMD build is used)",
    );
  }
  const isa = !simd ? 'scalar' : opts.relaxedSimd !== false && haveRelaxed ? 'relaxed' : 'simd';
  return { threads, threadsReason, build: `wasm-attention-${isa}${threads > 1 ? '-mt' : ''}` };
}
