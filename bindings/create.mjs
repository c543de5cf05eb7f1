// createAttention: its options, the choice of build (choose-build.mjs), and a start that either
// succeeds or rejects cleanly. Shared by every entry; an entry differs only in how it finds files
// (its `loader`):
//   index.mjs  browsers, workers, bundlers: URLs written as literals, module workers
//   index.cjs  Node (node.mjs re-exports it): file paths, Node's worker_threads
import { makeApi } from '../lib/attention/api.mjs';
import { describe } from '../lib/values.mjs';
import { chooseBuild, warnThreadsOnce } from './choose-build.mjs';

export const VERSION = '__VERSION__'; // replaced by scripts/assemble-dist.mjs

const OPTIONS = ['threads', 'simd', 'relaxedSimd', 'wasmBinary', 'locateFile'];
const MAX_THREADS = 64;

// The six builds: instruction set (SIMD, SIMD with relaxed SIMD's fused multiply-add, scalar) ×
// threading. Each is one .wasm beside its glue.
export const BUILDS = [
  'wasm-attention-simd',
  'wasm-attention-simd-mt',
  'wasm-attention-relaxed',
  'wasm-attention-relaxed-mt',
  'wasm-attention-scalar',
  'wasm-attention-scalar-mt',
];
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
    throw new RangeError(
      `createAttention: threads must be an integer from 1 to ${MAX_THREADS} or 'auto', got ${describe(threads)}`,
    );
  }
  if (simd !== 'auto' && typeof simd !== 'boolean') {
    throw new TypeError(`createAttention: simd must be true, false or 'auto', got ${describe(simd)}`);
  }
  if (relaxedSimd !== 'auto' && typeof relaxedSimd !== 'boolean') {
    throw new TypeError(`createAttention: relaxedSimd must be true, false or 'auto', got ${describe(relaxedSimd)}`);
  }
  if (simd === false && relaxedSimd === true) {
    throw new RangeError(
      'createAttention: relaxedSimd: true needs SIMD, but simd is false (relaxed SIMD extends SIMD)',
    );
  }
  if (wasmBinary !== undefined && !isBytes(wasmBinary)) {
    if (wasmBinary === null || typeof wasmBinary !== 'object' || Array.isArray(wasmBinary)) {
      throw new TypeError(
        `createAttention: wasmBinary must be an ArrayBuffer, a Uint8Array or an object { fileName: bytes }, got ${describe(wasmBinary)}`,
      );
    }
    for (const [file, bytes] of Object.entries(wasmBinary)) {
      if (!WASM_FILES.includes(file)) {
        throw new TypeError(
          `createAttention: wasmBinary has no use for ${JSON.stringify(file)} (the package's files: ${WASM_FILES.join(', ')})`,
        );
      }
      if (!isBytes(bytes))
        throw new TypeError(
          `createAttention: wasmBinary[${JSON.stringify(file)}] must be an ArrayBuffer or Uint8Array, got ${describe(bytes)}`,
        );
    }
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw new TypeError(
      `createAttention: locateFile must be a function (fileName) => url, got ${describe(locateFile)}`,
    );
  }
  return { threads, simd, relaxedSimd, wasmBinary, locateFile };
}

async function instantiate(source, imports) {
  if (typeof source !== 'string') return WebAssembly.instantiate(source, imports);
  let response;
  try {
    response = await fetch(source, { credentials: 'same-origin' });
  } catch (e) {
    // A network error, or (another origin) a response without Access-Control-Allow-Origin.
    throw new Error(`fetching ${source} failed: ${errorText(e)}`);
  }
  if (!response.ok) throw new Error(`fetching ${source} gave HTTP ${response.status}`);
  // Streaming compiles while the bytes arrive, but needs the application/wasm type; any host works.
  if (
    typeof WebAssembly.instantiateStreaming === 'function' &&
    /^application\/wasm\b/.test(response.headers.get('Content-Type') ?? '')
  ) {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

// Errors the loader makes (each says what failed). Only these are ever amended: an error thrown by the
// browser or the engine (a DOMException's message is a getter; any error may be frozen) is wrapped in
// one of these instead, which keeps its name and message in its own and the error as its cause.
const OWN_ERRORS = new WeakSet();
export function startError(message, cause) {
  const error = cause === undefined ? new Error(message) : new Error(message, { cause });
  OWN_ERRORS.add(error);
  return error;
}

// A thrown value as text: "name: message" (the name left out for a plain Error); safe with any value.
export function errorText(e) {
  try {
    if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
      const name = typeof e.name === 'string' && e.name !== '' && e.name !== 'Error' ? `${e.name}: ` : '';
      return `${name}${e.message}`;
    }
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}

// One start's state: whether it is still starting, the rejection a failure makes while it is, the
// glue's complaints meanwhile, and every worker made so far (terminated if the start fails).
class Start {
  constructor(build) {
    this.build = build;
    this.starting = true;
    this.messages = [];
    this.workers = [];
    this.failed = new Promise((resolve, reject) => {
      this.reject = reject;
    });
  }

  fail(error) {
    if (this.starting) this.reject(error);
  }

  // The error a failed start rejects with (its workers terminated): the glue's complaints added to one
  // of ours, any other error wrapped in one.
  failure(e) {
    for (const worker of this.workers) worker.terminate();
    const detail = this.messages.length ? ` (${this.messages.join('; ')})` : '';
    if (OWN_ERRORS.has(e)) {
      e.message += detail;
      return e;
    }
    return startError(`createAttention: ${this.build} failed to start: ${errorText(e)}${detail}`, e);
  }
}

// The Emscripten module's arguments: output, the abort and the .wasm's instantiation reported to
// `start`, and the files found by the loader (or the user's locateFile / wasmBinary).
function moduleArguments(loader, build, opts, start) {
  const wasmFile = `${build}.wasm`;
  return {
    print: (text) => console.log(text),
    // While starting, the glue's complaints become part of the rejection instead of stray output.
    printErr: (text) => (start.starting ? start.messages.push(text) : console.error(text)),
    onAbort: (what) =>
      start.fail(startError(`createAttention: the WebAssembly module of ${build} aborted while starting: ${what}`)),
    locateFile: (file) => loader.locateFile(file, opts.locateFile),
    instantiateWasm(imports, receiveInstance) {
      const given = isBytes(opts.wasmBinary) ? opts.wasmBinary : opts.wasmBinary?.[wasmFile];
      const what = given ? `the wasmBinary given for ${wasmFile}` : wasmFile;
      Promise.resolve(given ?? loader.wasmSource(wasmFile, opts.locateFile))
        .then((source) => instantiate(source, imports))
        .then(
          ({ instance, module }) => receiveInstance(instance, module),
          (e) => start.fail(startError(`createAttention: could not instantiate ${what}: ${errorText(e)}`, e)),
        );
      return {}; // asynchronous: receiveInstance comes later
    },
  };
}

// Evaluated by the glue as its pool size (see CMakeLists.txt): the pool's workers are created here,
// so each is known, watched for errors and terminated if the start fails. Returns the pool's size.
function startPool(PThread, loader, build, threads, opts, start) {
  const emscriptenAllocate = PThread.allocateUnusedWorker;
  const script = () => {
    try {
      return loader.workerScript(build, opts.locateFile);
    } catch {
      return `${build}.worker.mjs`; // a locateFile that throws: its own error is the one reported
    }
  };
  const cannotStart = () => `createAttention: a worker thread of ${build} could not start (its script ${script()})`;
  PThread.allocateUnusedWorker = () => {
    let worker;
    try {
      worker = loader.pthreadWorker?.(build, opts.locateFile);
      if (!worker) emscriptenAllocate.call(PThread);
    } catch (e) {
      // E.g. a SecurityError DOMException: the browser refused the script.
      throw startError(`${cannotStart()}: ${errorText(e)}`, e);
    }
    if (worker) PThread.unusedWorkers.push(worker);
    const created = PThread.unusedWorkers[PThread.unusedWorkers.length - 1];
    start.workers.push(created);
    const onError = (e) => {
      // Node: an Error; browsers: an ErrorEvent with a message, or an Event without (a script that did not load).
      const message = `${cannotStart()}: ${e && e.message ? errorText(e) : 'its script failed to load'}`;
      if (start.starting) start.fail(startError(message, e));
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
}

// The glue's factory of `build`, or an error that names its file.
async function loadGlue(loader, build) {
  try {
    return await loader.glue(build);
  } catch (e) {
    throw startError(
      `createAttention: could not load ${loader.glueFile(build)} (the JavaScript of ${build}): ${errorText(e)}`,
      e,
    );
  }
}

// Starts the Emscripten module of `build`. Whatever fails (the .wasm, a worker, the module itself)
// rejects with an Error that says what, and every worker started so far is terminated, so a
// Node process can exit and a page keeps no stray threads.
async function startModule(loader, build, threads, opts) {
  const start = new Start(build);
  const moduleArgs = moduleArguments(loader, build, opts, start);
  if (threads > 1) {
    moduleArgs.mainScriptUrlOrBlob = loader.mainScript?.(build);
    moduleArgs.startPool = (PThread) => startPool(PThread, loader, build, threads, opts, start);
  }
  try {
    const factory = await loadGlue(loader, build);
    return await Promise.race([factory(moduleArgs), start.failed]);
  } catch (e) {
    throw start.failure(e);
  } finally {
    start.starting = false;
  }
}

// loader: { isNode, glue(build) → Promise<factory>, glueFile(build) → its name for messages,
//           wasmSource(file, userLocateFile) → bytes or URL, locateFile(file, userLocateFile),
//           pthreadWorker?(build, userLocateFile) → Worker, workerScript(build, userLocateFile) → the
//           pthread worker's script for messages, mainScript?(build), hardwareThreads() }
export async function createAttentionWith(loader, options) {
  const opts = checkOptions(options);
  const { threads, threadsReason, build } = chooseBuild(opts, loader);
  const Module = await startModule(loader, build, threads, opts);
  // The pool's split and polling follow the machine's cores (more threads than cores may be asked for).
  Module.setCores(loader.hardwareThreads());
  const running = Module.setThreads(threads);
  if (threads > 1 && loader.isNode) {
    // Idle pool workers must not keep the user's Node process alive.
    for (const worker of [...Module.PThread.runningWorkers, ...Module.PThread.unusedWorkers]) worker.unref?.();
  }
  if (threadsReason) warnThreadsOnce(opts.threads, threadsReason);
  return makeApi(Module, {
    version: VERSION,
    simd: Module.simdEnabled(),
    relaxedSimd: Module.relaxedSimdEnabled(),
    threads: running,
    threadsReason,
  });
}
