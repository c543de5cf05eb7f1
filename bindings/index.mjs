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
  'wasm-attention-simd-mt': () => new Worker(new URL('./wasm-attention-simd-mt.worker.mjs', import.meta.url), { type: 'module' }),
  'wasm-attention-relaxed-mt': () => new Worker(new URL('./wasm-attention-relaxed-mt.worker.mjs', import.meta.url), { type: 'module' }),
  'wasm-attention-scalar-mt': () => new Worker(new URL('./wasm-attention-scalar-mt.worker.mjs', import.meta.url), { type: 'module' }),
};

const userUrl = (userLocateFile, file) => String(userLocateFile(file, ''));

const loader = {
  isNode: false,
  glue: async (build) => (await GLUES[build]()).default,
  wasmSource: (file, userLocateFile) => (userLocateFile ? userUrl(userLocateFile, file) : WASM_URLS[file]().href),
  locateFile: (file, userLocateFile) => (userLocateFile ? userUrl(userLocateFile, file) : file),
  pthreadWorker: (build, userLocateFile) =>
    userLocateFile
      ? new Worker(userUrl(userLocateFile, `${build}.worker.mjs`), { type: 'module' })
      : PTHREAD_WORKERS[build](),
  hardwareThreads: () => (typeof navigator === 'object' && navigator.hardwareConcurrency) || 1,
};

export function createAttention(options) {
  return createAttentionWith(loader, options);
}

export { VERSION as version } from './create.mjs';
export { readSafetensors } from '../lib/readers/safetensors.mjs';
export { attentionArgsFromStateDict } from '../lib/readers/state-dict.mjs';
export { isKeyMasked, kvHeadOf } from '../lib/attention-rules.mjs';
