// Runs one bundler on the consumer app, as its user would with its default configuration,
// in a process of its own (Vite is ESM-only; Jest's CommonJS sandbox cannot import it).
//
//   node bundle.mjs build <vite|vite-es-worker|webpack|esbuild|rollup> <consumerDir> <outDir>
//     builds the app into outDir (with an index.html that loads the bundle) and prints one line
//     "RESULT {json}" with the bundler's warnings; exits 1 with its errors on stderr on failure.
//   node bundle.mjs dev <consumerDir> [isolated]
//     starts Vite's dev server and prints "URL http://127.0.0.1:port/"; runs until killed.
//     `isolated` adds the COOP/COEP headers that a user adds for threads.
//
// The bundlers come from this repository's devDependencies; the package they bundle comes from
// the consumer's node_modules (the installed tarball).
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [command, ...rest] = process.argv.slice(2);

// The step a user of esbuild or Rollup adds (as docs/building.md says): copy the package's .wasm files,
// and for threads its pthread workers with the glue and helper they import, next to the bundle;
// both bundlers leave `new URL('./file', import.meta.url)` as it is, relative to the bundle.
const RUNTIME_FILE = /\.wasm$|\.worker\.mjs$|^wasm-attention-.*-mt\.mjs$|^pthread-worker\.mjs$/;
function copyRuntimeFiles(consumer, outDir) {
  const dist = join(consumer, 'node_modules', 'wasm-attention', 'dist');
  for (const name of readdirSync(dist)) {
    if (RUNTIME_FILE.test(name)) copyFileSync(join(dist, name), join(outDir, name));
  }
}

// The app's page for bundlers that emit no HTML: the same page, loading the bundle.
function writePage(consumer, outDir, script) {
  const page = readFileSync(join(consumer, 'index.html'), 'utf8');
  const tag = '<script type="module" src="/src/main.js"></script>';
  if (!page.includes(tag)) throw new Error(`index.html has no ${tag}`);
  writeFileSync(join(outDir, 'index.html'), page.replace(tag, script));
}

async function viteBuild(consumer, outDir, config) {
  const { build, createLogger } = await import('vite');
  const warnings = [];
  const logger = createLogger('warn');
  // Rolldown's PLUGIN_TIMINGS note says how long plugins ran on a slow machine: not about the app.
  logger.warn = (msg) => {
    if (!String(msg).includes('[PLUGIN_TIMINGS]')) warnings.push(msg);
  };
  logger.warnOnce = logger.warn;
  await build({
    root: consumer,
    configFile: false,
    customLogger: logger,
    build: { outDir, emptyOutDir: true },
    ...config,
  });
  return warnings;
}

const builders = {
  // `vite build` with no config file; only the output folder differs from ./dist.
  vite: (consumer, outDir) => viteBuild(consumer, outDir, {}),

  // The one line of vite.config.js docs/building.md advises for apps whose own workers use the package:
  // ES module workers, which load the six builds' glues on demand (the default 'iife' inlines all six).
  'vite-es-worker': (consumer, outDir) => viteBuild(consumer, outDir, { worker: { format: 'es' } }),

  async webpack(consumer, outDir) {
    const { default: webpack } = await import('webpack');
    // webpack.config.js: { mode: 'production', entry: './src/main.js' }, output in outDir, not ./dist.
    const compiler = webpack({
      mode: 'production',
      context: consumer,
      entry: './src/main.js',
      output: { path: outDir },
    });
    const stats = await new Promise((resolve, reject) => {
      compiler.run((err, s) => (err ? reject(err) : resolve(s)));
    });
    await new Promise((resolve) => {
      compiler.close(resolve);
    });
    if (stats.hasErrors()) throw new Error(stats.toString('errors-only'));
    writePage(consumer, outDir, '<script src="main.js"></script>');
    return stats.toJson('errors-warnings').warnings.map((w) => w.message);
  },

  async esbuild(consumer, outDir) {
    const { build } = await import('esbuild');
    // esbuild --bundle --format=esm --platform=browser src/main.js src/worker.js --outdir=…
    const result = await build({
      absWorkingDir: consumer,
      entryPoints: ['src/main.js', 'src/worker.js'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      outdir: outDir,
      logLevel: 'silent',
    });
    copyRuntimeFiles(consumer, outDir);
    writePage(consumer, outDir, '<script type="module" src="main.js"></script>');
    return result.warnings.map((w) => w.text);
  },

  async rollup(consumer, outDir) {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const warnings = [];
    // rollup.config.js: { input, output: { dir, format: 'es' }, plugins: [nodeResolve()] }
    const bundle = await rollup({
      input: { main: join(consumer, 'src/main.js'), worker: join(consumer, 'src/worker.js') },
      plugins: [nodeResolve()],
      onwarn: (w) => warnings.push(w.message),
    });
    await bundle.write({ dir: outDir, format: 'es' });
    await bundle.close();
    copyRuntimeFiles(consumer, outDir);
    writePage(consumer, outDir, '<script type="module" src="main.js"></script>');
    return warnings;
  },
};

async function dev(consumer, isolated) {
  const { createServer } = await import('vite');
  const headers = {
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
  };
  const server = await createServer({
    root: consumer,
    configFile: false,
    logLevel: 'warn',
    server: { host: '127.0.0.1', port: 0, ...(isolated ? { headers } : {}) },
  });
  await server.listen();
  console.log(`URL http://127.0.0.1:${server.httpServer.address().port}/`);
  const stop = () => server.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

try {
  if (command === 'build') {
    const [bundler, consumer, outDir] = rest;
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const warnings = await builders[bundler](consumer, outDir);
    // eslint-disable-next-line no-control-regex
    const plain = warnings.map((w) => String(w).replace(/\x1b\[[0-9;]*m/g, ''));
    console.log(`RESULT ${JSON.stringify({ warnings: plain })}`);
  } else if (command === 'dev') {
    await dev(rest[0], rest[1] === 'isolated');
  } else {
    throw new Error(`usage: node bundle.mjs build <bundler> <consumer> <outDir> | dev <consumer> [isolated]`);
  }
} catch (e) {
  console.error(e?.stack ?? String(e));
  process.exit(1);
}
