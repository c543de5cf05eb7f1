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

// Threads beyond one need a threaded build (not shipped yet): until then every request runs on one.
function threadsAvailable() {
  return 1;
}

// loader: { factory(): Promise<EmscriptenFactory>, wasmBytes(locateFile?): Promise<bytes> | null,
//           defaultLocateFile(name): string }
export async function createAttentionWith(loader, options) {
  const opts = checkOptions(options);
  const factory = await loader.factory();
  const moduleArgs = { locateFile: opts.locateFile ?? loader.defaultLocateFile };
  const wasmBinary = opts.wasmBinary ?? (await loader.wasmBytes(opts.locateFile));
  if (wasmBinary) moduleArgs.wasmBinary = wasmBinary;
  const Module = await factory(moduleArgs);
  const wanted = opts.threads === 'auto' ? threadsAvailable() : Math.min(opts.threads, threadsAvailable());
  const threads = Module.setThreads(wanted);
  return makeApi(Module, { version: VERSION, simd: Module.simdEnabled(), threads });
}
