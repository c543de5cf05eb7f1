// createAttention: its options, the choice of build, and a start that either succeeds or rejects
// cleanly. Shared by every entry; an entry differs only in how it finds files (its `loader`):
//   index.mjs  browsers, workers, bundlers: URLs written as literals, module workers
//   index.cjs  Node (node.mjs re-exports it): file paths, Node's worker_threads
import { makeApi } from './api.mjs';
import { describe } from './checks.mjs';

export const VERSION = '__VERSION__'; // replaced by scripts/assemble-dist.mjs

const OPTIONS = ['threads', 'simd', 'relaxedSimd', 'wasmBinary', 'locateFile'];
const MAX_THREADS = 64;
// More threads than this rarely pay for attention-sized work, and each holds a worker.
const MAX_AUTO_THREADS = 8;

// The six builds: instruction set (SIMD, SIMD with relaxed SIMD's fused multiply-add, scalar) ×
// threading. Each is one .wasm beside its glue.
export const BUILDS = ['wasm-attention-simd', 'wasm-attention-simd-mt', 'wasm-attention-relaxed', 'wasm-attention-relaxed-mt',
  'wasm-attention-scalar', 'wasm-attention-scalar-mt'];
// relaxedSimd's default: use it where the engine has it. Measured (bench/README.md) at 1.2× the
// SIMD build's speed on one thread; its results differ from the SIMD build's in rounding only.
const RELAXED_SIMD_DEFAULT = 'auto';
const WASM_FILES = BUILDS.map((build) => `${build}.wasm`);

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);

function checkOptions(options) {
  if (options === undefined) return { threads: 1, simd: 'auto', relaxedSimd: RELAXED_SIMD_DEFAULT };
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`createAttention: options must be an object, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!OPTIONS.includes(name) && options[name] !== undefined) {
      throw new TypeError(`createAttention: unknown option ${name} (known: ${OPTIONS.join(', ')})`);
    }
  }
  const { threads = 1, simd = 'auto', relaxedSimd = RELAXED_SIMD_DEFAULT, wasmBinary, locateFile } = options;
  if (threads !== 'auto' && !(Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS)) {
    throw new RangeError(`createAttention: threads must be an integer from 1 to ${MAX_THREADS} or 'auto', got ${describe(threads)}`);
  }
  if (simd !== 'auto' && typeof simd !== 'boolean') {
    throw new TypeError(`createAttention: simd must be true, false or 'auto', got ${describe(simd)}`);
  }
  if (relaxedSimd !== 'auto' && typeof relaxedSimd !== 'boolean') {
    throw new TypeError(`createAttention: relaxedSimd must be true, false or 'auto', got ${describe(relaxedSimd)}`);
  }
  if (simd === false && relaxedSimd === true) {
    throw new RangeError('createAttention: relaxedSimd: true needs SIMD, but simd is false (relaxed SIMD extends SIMD)');
  }
  if (wasmBinary !== undefined && !isBytes(wasmBinary)) {
    if (wasmBinary === null || typeof wasmBinary !== 'object' || Array.isArray(wasmBinary)) {
      throw new TypeError(`createAttention: wasmBinary must be an ArrayBuffer, a Uint8Array or an object { fileName: bytes }, got ${describe(wasmBinary)}`);
    }
    for (const [file, bytes] of Object.entries(wasmBinary)) {
      if (!WASM_FILES.includes(file)) {
        throw new TypeError(`createAttention: wasmBinary has no use for ${JSON.stringify(file)} (the package's files: ${WASM_FILES.join(', ')})`);
      }
      if (!isBytes(bytes)) throw new TypeError(`createAttention: wasmBinary[${JSON.stringify(file)}] must be an ArrayBuffer or Uint8Array, got ${describe(bytes)}`);
    }
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw new TypeError(`createAttention: locateFile must be a function (fileName) => url, got ${describe(locateFile)}`);
  }
  return { threads, simd, relaxedSimd, wasmBinary, locateFile };
}

// 'auto': what the environment allows. Threads need SharedArrayBuffer, which browsers grant only to
// cross-origin-isolated pages; without it every request runs on one thread, without error.
function threadsAllowed(loader) {
  if (typeof SharedArrayBuffer !== 'function') return 1;
  if (typeof crossOriginIsolated === 'boolean' && !crossOriginIsolated) return 1;
  return Math.max(1, Math.min(loader.hardwareThreads(), MAX_AUTO_THREADS));
}

// The smallest module with one SIMD instruction (i8x16.splat; as wasm-feature-detect probes).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
const simdSupported = () => WebAssembly.validate(SIMD_PROBE);
// (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2)))
const RELAXED_SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);
const relaxedSimdSupported = () => WebAssembly.validate(RELAXED_SIMD_PROBE);

function chooseBuild(opts, loader) {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') {
    throw new Error('createAttention: this JavaScript engine has no WebAssembly');
  }
  const allowed = threadsAllowed(loader);
  // An explicit count is honoured wherever threads exist at all (the caller knows the machine).
  const threads = opts.threads === 'auto' || allowed === 1 ? allowed : opts.threads;
  const haveSimd = simdSupported();
  if (opts.simd === true && !haveSimd) {
    throw new Error("createAttention: simd: true was asked for, but this engine lacks WebAssembly SIMD (leave simd unset and the scalar build is used)");
  }
  const simd = opts.simd === 'auto' ? haveSimd : opts.simd;
  const haveRelaxed = simd && relaxedSimdSupported();
  if (opts.relaxedSimd === true && !haveRelaxed) {
    throw new Error("createAttention: relaxedSimd: true was asked for, but this engine lacks WebAssembly relaxed SIMD (leave relaxedSimd unset or 'auto' and the SIMD build is used)");
  }
  const isa = !simd ? 'scalar' : opts.relaxedSimd !== false && haveRelaxed ? 'relaxed' : 'simd';
  return { threads, build: `wasm-attention-${isa}${threads > 1 ? '-mt' : ''}` };
}

async function instantiate(source, imports) {
  if (typeof source !== 'string') return WebAssembly.instantiate(source, imports);
  const response = await fetch(source, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`fetching ${source} gave HTTP ${response.status}`);
  // Streaming compiles while the bytes arrive, but needs the application/wasm type; any host works.
  if (typeof WebAssembly.instantiateStreaming === 'function' && /^application\/wasm\b/.test(response.headers.get('Content-Type') ?? '')) {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

// Starts the Emscripten module of `build`. Whatever fails (the .wasm, a worker, the module itself)
// rejects with an Error that says what, and every worker started so far is terminated, so a
// Node process can exit and a page keeps no stray threads.
async function startModule(loader, build, threads, opts) {
  const wasmFile = `${build}.wasm`;
  const workers = [];
  let starting = true;
  let fail;
  const failed = new Promise((resolve, reject) => {
    fail = (error) => {
      if (starting) reject(error);
    };
  });
  const startMessages = [];
  const moduleArgs = {
    print: (text) => console.log(text),
    // While starting, the glue's complaints become part of the rejection instead of stray output.
    printErr: (text) => (starting ? startMessages.push(text) : console.error(text)),
    onAbort: (what) => fail(new Error(`createAttention: the WebAssembly module of ${build} aborted while starting: ${what}`)),
    locateFile: (file) => loader.locateFile(file, opts.locateFile),
    instantiateWasm(imports, receiveInstance) {
      const given = isBytes(opts.wasmBinary) ? opts.wasmBinary : opts.wasmBinary?.[wasmFile];
      const what = given ? `the wasmBinary given for ${wasmFile}` : wasmFile;
      Promise.resolve(given ?? loader.wasmSource(wasmFile, opts.locateFile))
        .then((source) => instantiate(source, imports))
        .then(
          ({ instance, module }) => receiveInstance(instance, module),
          (e) => fail(new Error(`createAttention: could not instantiate ${what}: ${e && e.message}`)),
        );
      return {}; // asynchronous: receiveInstance comes later
    },
  };
  if (threads > 1) {
    moduleArgs.mainScriptUrlOrBlob = loader.mainScript?.(build);
    // Evaluated by the glue as its pool size (see CMakeLists.txt): the pool's workers are created
    // here, so each is known, watched for errors and terminated if the start fails.
    moduleArgs.startPool = (PThread) => {
      const emscriptenAllocate = PThread.allocateUnusedWorker;
      PThread.allocateUnusedWorker = () => {
        const worker = loader.pthreadWorker?.(build, opts.locateFile);
        if (worker) PThread.unusedWorkers.push(worker);
        else emscriptenAllocate.call(PThread);
        const created = PThread.unusedWorkers[PThread.unusedWorkers.length - 1];
        workers.push(created);
        const onError = (e) => {
          const message = `createAttention: a worker thread of ${build} could not start: ${(e && e.message) || 'its script failed to load'}`;
          if (starting) fail(new Error(message));
          else console.error(message);
        };
        if (loader.isNode) created.on('error', onError);
        else created.addEventListener('error', onError);
      };
      // Emscripten's own onerror throws from an event handler (in Node: an uncaught exception).
      const emscriptenLoad = PThread.loadWasmModuleToWorker;
      PThread.loadWasmModuleToWorker = (worker, onFinishedLoading) => {
        emscriptenLoad.call(PThread, worker, onFinishedLoading);
        worker.onerror = () => {};
      };
      return threads - 1;
    };
  }
  try {
    const factory = await loader.glue(build);
    return await Promise.race([factory(moduleArgs), failed]);
  } catch (e) {
    for (const worker of workers) worker.terminate();
    const detail = startMessages.length ? ` (${startMessages.join('; ')})` : '';
    if (e instanceof Error) {
      e.message += detail;
      throw e;
    }
    throw new Error(`createAttention: ${build} failed to start: ${e}${detail}`);
  } finally {
    starting = false;
  }
}

// loader: { isNode, glue(build) → Promise<factory>, wasmSource(file, userLocateFile) → bytes or URL,
//           locateFile(file, userLocateFile), pthreadWorker?(build, userLocateFile) → Worker,
//           mainScript?(build), hardwareThreads() }
export async function createAttentionWith(loader, options) {
  const opts = checkOptions(options);
  const { threads, build } = chooseBuild(opts, loader);
  const Module = await startModule(loader, build, threads, opts);
  const running = Module.setThreads(threads);
  if (threads > 1 && loader.isNode) {
    // Idle pool workers must not keep the user's Node process alive.
    for (const worker of [...Module.PThread.runningWorkers, ...Module.PThread.unusedWorkers]) worker.unref?.();
  }
  return makeApi(Module, { version: VERSION, simd: Module.simdEnabled(), relaxedSimd: Module.relaxedSimdEnabled(), threads: running });
}
