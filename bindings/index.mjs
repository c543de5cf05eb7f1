// Entry for browsers, Web Workers and bundlers (the package's default export condition). No Node
// code: Node resolves node.mjs / index.cjs instead. Every file is named by a literal
// `new URL('./name', import.meta.url)` or `import('./name')`, the forms Vite, webpack and Rollup
// plugins follow: a bundle gets exactly these files, and a static host of dist/ serves them as they are.
import { createAttentionWith } from './create.mjs';

const GLUES = {
  'wasm-attention-simd': () => import('./wasm-attention-simd.mjs'),
  'wasm-attention-simd-mt': () => import('./wasm-attention-simd-mt.mjs'),
  'wasm-attention-relaxed': () => import('./wasm-attention-relaxed.mjs'),
  'wasm-attention-relaxed-mt': () => import('./wasm-attention-relaxed-mt.mjs'),
  'wasm-attention-scalar': () => import('./wasm-attention-scalar.mjs'),
  'wasm-attention-scalar-mt': () => import('./wasm-attention-scalar-mt.mjs'),
};

const WASM_URLS = {
  'wasm-attention-simd.wasm': () => new URL('./wasm-attention-simd.wasm', import.meta.url),
  'wasm-attention-simd-mt.wasm': () => new URL('./wasm-attention-simd-mt.wasm', import.meta.url),
  'wasm-attention-relaxed.wasm': () => new URL('./wasm-attention-relaxed.wasm', import.meta.url),
  'wasm-attention-relaxed-mt.wasm': () => new URL('./wasm-attention-relaxed-mt.wasm', import.meta.url),
  'wasm-attention-scalar.wasm': () => new URL('./wasm-attention-scalar.wasm', import.meta.url),
  'wasm-attention-scalar-mt.wasm': () => new URL('./wasm-attention-scalar-mt.wasm', import.meta.url),
};

// Module workers whose script imports the glue statically, so bundlers build them with it.
const PTHREAD_WORKERS = {
  'wasm-attention-simd-mt': () =>
    new Worker(new URL('./wasm-attention-simd-mt.worker.mjs', import.meta.url), { type: 'module' }),
  'wasm-attention-relaxed-mt': () =>
    new Worker(new URL('./wasm-attention-relaxed-mt.worker.mjs', import.meta.url), { type: 'module' }),
  'wasm-attention-scalar-mt': () =>
    new Worker(new URL('./wasm-attention-scalar-mt.worker.mjs', import.meta.url), { type: 'module' }),
};

const userUrl = (userLocateFile, file) => String(userLocateFile(file, ''));

// A browser refuses a worker whose script is on another origin than the page's (a SecurityError), so
// the package served by a CDN or another static host, or a locateFile pointing there, starts each
// pthread worker from a same-origin bootstrap: a Blob URL module whose only content imports the real
// script by its absolute URL (a module worker from a blob URL takes its creator's origin and policies;
// the import is a CORS request, as the package's other files from that origin are).
const here = () =>
  typeof location === 'object' && location !== null && typeof location.origin === 'string' ? location : null;
// The absolute URL of url when it is an http(s) URL on another origin than this page's (or worker's); else null.
function otherOrigin(url) {
  const page = here();
  if (!page) return null;
  let absolute;
  try {
    absolute = new URL(url, page.href);
  } catch {
    return null; // not a URL: the Worker constructor says so itself
  }
  return /^https?:$/.test(absolute.protocol) && absolute.origin !== page.origin ? absolute.href : null;
}
const bootstraps = new Map(); // absolute script URL → its bootstrap's blob URL (one per script, kept for the realm)
function bootstrapWorker(absolute) {
  let blobUrl = bootstraps.get(absolute);
  if (!blobUrl) {
    blobUrl = URL.createObjectURL(new Blob([`import ${JSON.stringify(absolute)};\n`], { type: 'text/javascript' }));
    bootstraps.set(absolute, blobUrl);
  }
  return new Worker(blobUrl, { type: 'module' });
}
// Where an unbundled package keeps a pthread worker's script: beside its .wasm (and index.mjs). A
// bundle renames both, but serves them from one origin, so the .wasm's origin is the script's.
const besideWasm = (build) => new URL(`${build}.worker.mjs`, WASM_URLS[`${build}.wasm`]()).href;

const loader = {
  isNode: false,
  glue: async (build) => (await GLUES[build]()).default,
  glueFile: (build) => `${build}.mjs`,
  wasmSource: (file, userLocateFile) => (userLocateFile ? userUrl(userLocateFile, file) : WASM_URLS[file]().href),
  locateFile: (file, userLocateFile) => (userLocateFile ? userUrl(userLocateFile, file) : file),
  pthreadWorker(build, userLocateFile) {
    const script = userLocateFile ? userUrl(userLocateFile, `${build}.worker.mjs`) : besideWasm(build);
    const absolute = otherOrigin(script);
    if (absolute) return bootstrapWorker(absolute);
    // Same origin: the literal form, which bundlers follow (they build the worker with its glue).
    return userLocateFile ? new Worker(script, { type: 'module' }) : PTHREAD_WORKERS[build]();
  },
  workerScript: (build, userLocateFile) => {
    if (userLocateFile) return userUrl(userLocateFile, `${build}.worker.mjs`);
    const script = besideWasm(build);
    return otherOrigin(script) ?? `${build}.worker.mjs`; // the bundler's name for it is not known here
  },
  hardwareThreads: () => (typeof navigator === 'object' && navigator.hardwareConcurrency) || 1,
};

export function createAttention(options) {
  return createAttentionWith(loader, options);
}

// The model runtime's JavaScript loads with the first model (a page that only runs attention fetches
// none of it). Here every source string is a URL (a relative one resolves against the page or
// worker): there is no file system to read a folder from.
export async function loadModel(attn, source, options) {
  const { loadModelWith } = await import('../lib/model/load-model.mjs');
  return loadModelWith(null, attn, source, options);
}

export { VERSION as version } from './create.mjs';
export { readSafetensors } from '../lib/readers/safetensors.mjs';
export { attentionArgsFromStateDict } from '../lib/readers/state-dict.mjs';
export { isKeyMasked, kvHeadOf } from '../lib/attention/attention-rules.mjs';
export { mulberry32 } from '../lib/random.mjs';
// The model types loadModel takes (a page can tell a checkpoint it cannot run before loading it).
export { SUPPORTED_MODEL_TYPES } from '../lib/model/families/registry.mjs';
