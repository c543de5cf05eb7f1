// createAttention's options and start-up, shared by the ESM and CommonJS entries. The entries
// differ only in how they find the Emscripten factory and the .wasm bytes (a `loader`).
import { makeApi } from './api.mjs';
import { describe } from './checks.mjs';

export const VERSION = '__VERSION__'; // replaced by scripts/assemble-dist.mjs

const OPTIONS = new Set(['threads', 'wasmBinary', 'locateFile']);

function checkOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`createAttention: options must be an object, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!OPTIONS.has(name) && options[name] !== undefined) {
      throw new TypeError(`createAttention: unknown option ${name} (known: ${[...OPTIONS].join(', ')})`);
    }
  }
  const { threads = 1, wasmBinary, locateFile } = options;
  if (threads !== 'auto') {
    if (typeof threads !== 'number') throw new TypeError(`createAttention: threads must be a positive integer or 'auto', got ${describe(threads)}`);
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`createAttention: threads must be a positive integer or 'auto', got ${threads}`);
  }
  if (wasmBinary !== undefined && !(wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary))) {
    throw new TypeError(`createAttention: wasmBinary must be an ArrayBuffer or Uint8Array, got ${describe(wasmBinary)}`);
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw new TypeError(`createAttention: locateFile must be a function (name) => url, got ${describe(locateFile)}`);
  }
  return { threads, wasmBinary, locateFile };
}

// 'auto': what the environment allows. Threads need SharedArrayBuffer, which browsers grant only to
// cross-origin-isolated pages; without it every request runs on one thread, without error.
function threadsAllowed(loader) {
  if (typeof SharedArrayBuffer !== 'function') return 1;
  if (typeof crossOriginIsolated === 'boolean' && !crossOriginIsolated) return 1;
  return Math.max(1, Math.min(loader.hardwareThreads(), MAX_AUTO_THREADS));
}

// More threads than this rarely pay for attention-sized work and each holds a worker.
const MAX_AUTO_THREADS = 8;

// loader: { factory(variant), wasmBytes(variant, locateFile?), locateFile(name), hardwareThreads(),
//           isNode }   variant: 'st' (one thread) or 'mt' (pthreads)
export async function createAttentionWith(loader, options) {
  const opts = checkOptions(options);
  const allowed = threadsAllowed(loader);
  // An explicit count is honoured wherever threads exist at all (the caller knows the machine).
  const threads = opts.threads === 'auto' || allowed === 1 ? allowed : opts.threads;
  const variant = threads > 1 ? 'mt' : 'st';
  const factory = await loader.factory(variant);
  const locateFile = opts.locateFile ?? loader.locateFile;
  const moduleArgs = { locateFile };
  const wasmBinary = opts.wasmBinary && variant === 'st' ? opts.wasmBinary : await loader.wasmBytes(variant, opts.locateFile);
  if (wasmBinary) moduleArgs.wasmBinary = wasmBinary;
  if (variant === 'mt') {
    moduleArgs.poolSize = threads - 1;
    // Pool workers load the glue as a classic script (importScripts), so they get the CommonJS file.
    moduleArgs.mainScriptUrlOrBlob = locateFile(`wasm-attention-mt.cjs`);
  }
  const Module = await factory(moduleArgs);
  const running = Module.setThreads(threads);
  if (variant === 'mt' && loader.isNode) {
    // Idle pool workers must not keep the user's Node process alive.
    for (const worker of [...Module.PThread.runningWorkers, ...Module.PThread.unusedWorkers]) worker.unref?.();
  }
  return makeApi(Module, { version: VERSION, simd: Module.simdEnabled(), threads: running });
}
