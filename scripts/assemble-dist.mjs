// Assembles dist/ from the Emscripten output and bindings/: the files the package ships.
//   wasm-attention.wasm   the module
//   wasm-attention.cjs    Emscripten's glue as emitted (CommonJS-shaped; Node)
//   wasm-attention.mjs    the same glue as an ES module (browsers, workers, bundlers)
//   *.mjs                 the API sources; create.cjs is them bundled for CommonJS by esbuild
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const wasmBuild = join(root, 'build', 'wasm');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(dist, { recursive: true });

copyFileSync(join(wasmBuild, 'wasm-attention.wasm'), join(dist, 'wasm-attention.wasm'));
const glue = readFileSync(join(wasmBuild, 'wasm-attention.js'), 'utf8');
writeFileSync(join(dist, 'wasm-attention.cjs'), glue);
writeFileSync(join(dist, 'wasm-attention.mjs'), `${glue}\nexport default createAttentionModule;\n`);

const withVersion = (text) => text.replaceAll('__VERSION__', version);
for (const name of ['api.mjs', 'checks.mjs', 'heap.mjs', 'layer-args.mjs', 'index.mjs', 'index.cjs', 'index.d.ts']) {
  writeFileSync(join(dist, name), withVersion(readFileSync(join(root, 'bindings', name), 'utf8')));
}
writeFileSync(join(dist, 'create.mjs'), withVersion(readFileSync(join(root, 'bindings', 'create.mjs'), 'utf8')));
await build({
  entryPoints: [join(dist, 'create.mjs')],
  outfile: join(dist, 'create.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  logLevel: 'warning',
});
