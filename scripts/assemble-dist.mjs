// Assembles dist/ from the Emscripten output (build/wasm/web, build/wasm/node), bindings/ and lib/:
// exactly the files the package ships, and nothing left over from an older layout.
//   wasm-attention-{simd,relaxed,scalar}[-mt].wasm   the six builds (one .wasm serves both glues)
//   wasm-attention-*.mjs                     their ES module glues (browsers, workers, bundlers)
//   wasm-attention-*-mt.worker.mjs           pthread workers as ES modules (see pthread-worker.mjs)
//   node/wasm-attention-*.js (+ .worker.js)  the CommonJS glues for Node and Emscripten's worker
//   index.mjs, node.mjs, index.cjs           the entries; create.cjs is the API bundled for CommonJS
//   safetensors.mjs, state-dict.mjs, …       weight loading (pure JavaScript; in create.cjs too)
//   attention-rules.mjs                      from lib/: the K/V-head and masked-key rules (in create.cjs too)
//   load-model.mjs, model.mjs, config.mjs, … loadModel and its model object (in create.cjs too)
//   vendor/tokenizers.mjs (+ .cjs, .LICENSE)  @huggingface/tokenizers, loaded only when a model has a tokenizer
//   index.d.ts / .d.mts / .d.cts             one file from bindings/types/'s parts, named for each resolution mode
//   viz.cjs, viz.d.cts                        wasm-attention/viz for require (its ES modules ship in viz/)
import { build, transform } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync as writeAlways } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILDS } from '../bindings/create.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const wasmBuild = join(root, 'build', 'wasm');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// The modules index.cjs takes from create.cjs, bundled from their ES sources.
const CJS_MODULES = [
  'create.mjs',
  'safetensors.mjs',
  'state-dict.mjs',
  'attention-rules.mjs',
  'random.mjs',
  'model.mjs',
  'load-model.mjs',
  'registry.mjs',
];
// The package's JavaScript: every module under bindings/ (the seam: what talks to the module) and lib/
// (the library over it). dist/ holds them side by side, so each relative import is rewritten to its
// file's name, and two sources may not share a name.
const sourcesUnder = (folder) =>
  readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(mjs|cjs)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
const API_SOURCES = [...sourcesUnder('bindings'), ...sourcesUnder('lib')];
// Packages whose code dist/ carries in vendor/, each imported by relative path (static hosts and CDNs
// need no bundler or import map). They are build inputs (devDependencies): a user installs nothing
// more. lib/model/tokenizer.mjs, the only importer, is reached by a dynamic import() in loadModel.
const VENDORED = {
  '@huggingface/tokenizers': { name: 'tokenizers', esm: 'dist/tokenizers.mjs', cjs: 'dist/tokenizers.cjs' },
};

mkdirSync(join(dist, 'node'), { recursive: true });
mkdirSync(join(dist, 'vendor'), { recursive: true });
const written = new Set();

// Writes only what changed: a test that packs the package (prepack runs this) must not rewrite
// files another test process is loading at that moment.
function writeFileSync(path, content) {
  written.add(path);
  const bytes = Buffer.from(content);
  if (existsSync(path) && readFileSync(path).equals(bytes)) return;
  writeAlways(path, bytes);
}
const copyFileSync = (from, to) => writeFileSync(to, readFileSync(from));

// The relaxed builds link at -O1 (see CMakeLists.txt), where Emscripten leaves its glue unminified
// (2.7× the bytes of an -O3 glue): esbuild minifies whitespace and syntax, never a name, since the
// loader and the pthread workers reach the glue's functions and Module fields by name.
async function copyGlue(from, to, build) {
  if (!build.includes('-relaxed')) return copyFileSync(from, to);
  const { code } = await transform(readFileSync(from, 'utf8'), {
    minifyWhitespace: true,
    minifySyntax: true,
    charset: 'utf8',
  });
  writeFileSync(to, code);
}

for (const name of BUILDS) {
  const wasm = readFileSync(join(wasmBuild, 'web', `${name}.wasm`));
  if (!wasm.equals(readFileSync(join(wasmBuild, 'node', `${name}.wasm`)))) {
    throw new Error(`assemble-dist: the web and node links of ${name}.wasm differ; the package ships one`);
  }
  writeFileSync(join(dist, `${name}.wasm`), wasm);
  await copyGlue(join(wasmBuild, 'web', `${name}.mjs`), join(dist, `${name}.mjs`), name);
  await copyGlue(join(wasmBuild, 'node', `${name}.js`), join(dist, 'node', `${name}.js`), name);
  if (name.endsWith('-mt')) {
    copyFileSync(join(wasmBuild, 'node', `${name}.worker.js`), join(dist, 'node', `${name}.worker.js`));
    writeFileSync(
      join(dist, `${name}.worker.mjs`),
      `// A pthread worker of ${name} (see pthread-worker.mjs).\n` +
        `import createAttentionModule from './${name}.mjs';\nimport { servePthread } from './pthread-worker.mjs';\n\n` +
        'servePthread(createAttentionModule);\n',
    );
  }
}

const withVersion = (text) => text.replaceAll('__VERSION__', version);
const flatImports = (text) =>
  text
    .replace(/((?:from|import)\s*\(?\s*')\.\.?\/(?:[^'/]+\/)*([^'/]+)'/g, "$1./$2'")
    .replace(/((?:from|import)\s*\(?\s*')([^'.][^']*)'/g, (whole, head, specifier) =>
      Object.hasOwn(VENDORED, specifier) ? `${head}./vendor/${VENDORED[specifier].name}.mjs'` : whole,
    );
const distNames = API_SOURCES.map((source) => basename(source));
if (new Set(distNames).size !== distNames.length)
  throw new Error('assemble-dist: two sources share a file name, which dist/ cannot hold');
for (const source of API_SOURCES) {
  writeFileSync(join(dist, basename(source)), flatImports(withVersion(readFileSync(join(root, source), 'utf8'))));
}
// The vendored packages: their ES module (dist/'s modules import it), their CommonJS build (create.cjs
// requires it, lazily), and their licence.
for (const [pkg, { name, esm, cjs }] of Object.entries(VENDORED)) {
  const folder = join(root, 'node_modules', pkg);
  copyFileSync(join(folder, esm), join(dist, 'vendor', `${name}.mjs`));
  copyFileSync(join(folder, cjs), join(dist, 'vendor', `${name}.cjs`));
  copyFileSync(join(folder, 'LICENSE'), join(dist, 'vendor', `${name}.LICENSE`));
}
// The types: bindings/types/'s parts joined in this order (a blank line between two) into one file,
// written under the three names. A part not listed here would be left out silently, so it throws.
const TYPE_PARTS = ['tensors', 'engine-options', 'layers', 'engine', 'readers', 'rules', 'random', 'model'];
const typesFolder = join(root, 'bindings', 'types');
const unlisted = readdirSync(typesFolder).filter((file) => !TYPE_PARTS.includes(file.replace(/\.d\.ts$/, '')));
if (unlisted.length > 0) throw new Error(`assemble-dist: bindings/types/ has parts TYPE_PARTS lacks: ${unlisted}`);
// ModelType is written from the registry of model families, so a new family is its file (and fixture)
// alone; the source's union is only what an editor shows before a build.
const { SUPPORTED_MODEL_TYPES } = await import('../lib/model/families/registry.mjs');
const MODEL_TYPE = /^export type ModelType = [^;]+;$/m;
const joined = TYPE_PARTS.map((part) => readFileSync(join(typesFolder, `${part}.d.ts`), 'utf8')).join('\n');
if (!MODEL_TYPE.test(joined))
  throw new Error('assemble-dist: bindings/types/model.d.ts has no ModelType union to write');
const types = withVersion(
  joined.replace(MODEL_TYPE, `export type ModelType = ${SUPPORTED_MODEL_TYPES.map((t) => `'${t}'`).join(' | ')};`),
);
for (const name of ['index.d.ts', 'index.d.mts', 'index.d.cts']) writeFileSync(join(dist, name), types);

await build({
  stdin: { contents: CJS_MODULES.map((name) => `export * from './${name}';\n`).join(''), resolveDir: dist },
  outfile: join(dist, 'create.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  logLevel: 'warning',
  // import() of a bundled module becomes a lazy require: the tokenizer's code runs (and its vendored
  // CommonJS build loads) only when loadModel meets a tokenizer.
  supported: { 'dynamic-import': false },
  plugins: [
    {
      name: 'vendored-commonjs',
      setup(b) {
        b.onResolve({ filter: /^\.\/vendor\/[^/]+\.mjs$/ }, ({ path }) => ({
          path: path.replace(/\.mjs$/, '.cjs'),
          external: true,
        }));
      },
    },
  ],
});
written.add(join(dist, 'create.cjs'));

// wasm-attention/viz ships as its ES modules in viz/ (what import resolves to). For require (a
// CommonJS bundle, as webpack's or jsdom's) and its types, one CommonJS bundle of them here.
await build({
  entryPoints: [join(root, 'viz', 'index.mjs')],
  outfile: join(dist, 'viz.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  logLevel: 'warning',
});
written.add(join(dist, 'viz.cjs'));
writeFileSync(join(dist, 'viz.d.cts'), readFileSync(join(root, 'viz', 'index.d.mts'), 'utf8'));

// Anything else in dist/ is left from an older build and must not reach the package.
for (const folder of [dist, join(dist, 'node'), join(dist, 'vendor')]) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isFile() && !written.has(path)) {
      console.log(`assemble-dist: removing stale dist/${relative(dist, path)}`);
      rmSync(path);
    }
  }
}
