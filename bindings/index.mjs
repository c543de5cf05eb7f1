// ESM entry: Node, browsers, Web Workers and bundlers.
import { createAttentionWith } from './create.mjs';

const isNode = typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined';
const WASM = 'wasm-attention.wasm';

const loader = {
  async factory() {
    if (isNode) {
      // The Emscripten glue is CommonJS-shaped; Node loads it as such.
      const { createRequire } = await import('node:module');
      return createRequire(import.meta.url)('./wasm-attention.cjs');
    }
    return (await import('./wasm-attention.mjs')).default;
  },
  // Emscripten 3.1.6 would fetch() a file path under Node and fail: read the bytes ourselves.
  async wasmBytes(locateFile) {
    if (!isNode) return null;
    const { readFile } = await import('node:fs/promises');
    return readFile(locateFile ? locateFile(WASM) : new URL(`./${WASM}`, import.meta.url));
  },
  defaultLocateFile: (name) => new URL(`./${name}`, import.meta.url).href,
};

export async function createAttention(options) {
  return createAttentionWith(loader, options);
}

export { VERSION as version } from './create.mjs';
