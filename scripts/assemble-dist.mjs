// Assembles dist/ from the Emscripten output and bindings/: the files the package ships.
//   wasm-attention.wasm   the module (wasm-attention-mt.*: the pthreads build, + .worker.js)
//   wasm-attention.cjs    Emscripten's glue as emitted (CommonJS-shaped; Node, classic workers)
//   wasm-attention.mjs    the same glue as an ES module (browsers, workers, bundlers)
//   *.mjs                 the API sources; create.cjs is them bundled for CommonJS by esbuild
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, writeFileSync as writeAlways } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const wasmBuild = join(root, 'build', 'wasm');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(dist, { recursive: true });

// Writes only what changed: a test that packs the package (prepack runs this) must not rewrite
// files another test process is loading at that moment.
function writeFileSync(path, content) {
  const bytes = Buffer.from(content);
  if (existsSync(path) && readFileSync(path).equals(bytes)) return;
  writeAlways(path, bytes);
}
const copyFileSync = (from, to) => writeFileSync(to, readFileSync(from));

// Two builds: single-threaded, and pthreads (with its worker script) for threads > 1.
for (const name of ['wasm-attention', 'wasm-attention-mt']) {
  copyFileSync(join(wasmBuild, `${name}.wasm`), join(dist, `${name}.wasm`));
  const glue = readFileSync(join(wasmBuild, `${name}.js`), 'utf8');
  writeFileSync(join(dist, `${name}.cjs`), glue);
  writeFileSync(join(dist, `${name}.mjs`), `${glue}\nexport default createAttentionModule;\n`);
}
copyFileSync(join(wasmBuild, 'wasm-attention-mt.worker.js'), join(dist, 'wasm-attention-mt.worker.js'));

const withVersion = (text) => text.replaceAll('__VERSION__', version);
for (const name of ['api.mjs', 'checks.mjs', 'create.mjs', 'heap.mjs', 'layer-args.mjs', 'index.mjs', 'index.cjs', 'index.d.ts']) {
  writeFileSync(join(dist, name), withVersion(readFileSync(join(root, 'bindings', name), 'utf8')));
}
await build({
  entryPoints: [join(dist, 'create.mjs')],
  outfile: join(dist, 'create.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  logLevel: 'warning',
});
