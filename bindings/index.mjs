// ESM entry: Node, browsers, Web Workers and bundlers.
import { createAttentionWith } from './create.mjs';

const isNode = typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined';
const glueName = (variant) => (variant === 'mt' ? 'wasm-attention-mt' : 'wasm-attention');

// Node's modules, loaded on first use (no top-level await: some bundlers and engines lack it).
let node = null;

// Node needs file paths (its Worker does not take file: URL strings); browsers need URLs.
const locateFile = (name) => {
  const url = new URL(`./${name}`, import.meta.url);
  return isNode ? node.url.fileURLToPath(url) : url.href;
};

const loader = {
  isNode,
  async factory(variant) {
    if (isNode) {
      // The Emscripten glue is CommonJS-shaped; Node loads it as such.
      const { createRequire } = await import('node:module');
      return createRequire(import.meta.url)(`./${glueName(variant)}.cjs`);
    }
    return variant === 'mt'
      ? (await import('./wasm-attention-mt.mjs')).default
      : (await import('./wasm-attention.mjs')).default;
  },
  // Emscripten 3.1.6 would fetch() a file path under Node and fail: read the bytes ourselves.
  async wasmBytes(variant, userLocateFile) {
    if (!isNode) return null;
    const { readFile } = await import('node:fs/promises');
    const name = `${glueName(variant)}.wasm`;
    return readFile(userLocateFile ? userLocateFile(name) : locateFile(name));
  },
  locateFile,
  hardwareThreads() {
    if (typeof navigator === 'object' && navigator.hardwareConcurrency) return navigator.hardwareConcurrency;
    return isNode ? node.os.availableParallelism?.() ?? node.os.cpus().length : 1;
  },
};

export async function createAttention(options) {
  if (isNode && !node) node = { url: await import('node:url'), os: await import('node:os') };
  return createAttentionWith(loader, options);
}

export { VERSION as version } from './create.mjs';
