// The TensorFlow.js peer: @tensorflow/tfjs-core + @tensorflow/tfjs-backend-wasm (XNNPACK kernels).
//
// One thread: the backend's own 'wasm' registration (in Node it picks tfjs-backend-wasm-simd.wasm
// from node_modules; tfjs-backend-wasm turns threads off under Node).
// Two threads: tfjs-backend-wasm's threaded-SIMD build, loaded from its wasm-out/ folder and
// registered as a second backend 'wasm-mt' with the same kernels. Two Node-only obstacles are
// worked around, neither touches the kernels: the pthread worker script (shipped as a JS string)
// is written to a temporary .cjs file, and tfjs caps its thread pool at hardwareConcurrency/2
// ("2 hyper-threads per core"), which is 1 here, so os.cpus() reports 2× the CPUs while the
// module initialises. setThreadsCount(2) then gives an XNNPACK pool of 2 (checked).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
let tf, tfw;

export async function loadTfjs() {
  tf = await import('@tensorflow/tfjs-core');
  tfw = await import('@tensorflow/tfjs-backend-wasm');
  tf.enableProdMode();
  tfw.setThreadsCount(1);
  const ok = await tf.setBackend('wasm');
  if (!ok || tf.getBackend() !== 'wasm') throw new Error('tf.setBackend("wasm") failed');
  return { version: tfw.version_wasm, threads: tfw.getThreadsCount() };
}

export async function loadTfjsThreaded(threads = 2) {
  const js = require.resolve('@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js');
  const dir = path.dirname(js);
  const factory = require(js);
  const { wasmWorkerContents } = require(path.join(dir, 'tfjs-backend-wasm-threaded-simd.worker.js'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wa-bench-tfjs-'));
  const workerPath = path.join(tmp, 'tfjs-backend-wasm-threaded-simd.worker.cjs');
  // the same escaping tfjs-backend-wasm applies before it turns the string into a Blob
  fs.writeFileSync(workerPath, wasmWorkerContents.replace(/\n/g, '\\n'));
  const cleanup = () => fs.rmSync(tmp, { recursive: true, force: true });
  process.once('exit', cleanup);
  const realCpus = os.cpus;
  os.cpus = () => {
    const c = realCpus();
    return [...c, ...c];
  };
  let mod;
  try {
    mod = await factory({ locateFile: (p) => (p.endsWith('.worker.js') ? workerPath : path.join(dir, p)) });
  } finally {
    os.cpus = realCpus;
  }
  mod.tfjs = {
    init: mod.cwrap('init', null, []),
    initWithThreadsCount: mod.cwrap('init_with_threads_count', null, ['number']),
    getThreadsCount: mod.cwrap('get_threads_count', 'number', []),
    registerTensor: mod.cwrap('register_tensor', null, ['number', 'number', 'number']),
    disposeData: mod.cwrap('dispose_data', null, ['number']),
    dispose: mod.cwrap('dispose', null, []),
  };
  tfw.setThreadsCount(threads);
  tf.registerBackend('wasm-mt', () => new tfw.BackendWasm(mod), 0);
  for (const k of tf.getKernelsForBackend('wasm')) tf.registerKernel({ ...k, backendName: 'wasm-mt' });
  await tf.setBackend('wasm-mt');
  const got = mod.tfjs.getThreadsCount();
  await tf.setBackend('wasm');
  tfw.setThreadsCount(1);
  if (got !== threads) throw new Error(`threaded tfjs backend runs ${got} thread(s), not ${threads}`);
  return { threads: got, cleanup };
}

function transpose2d(w, rows, cols) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
  return t;
}

/**
 * Prepares one problem on a tfjs backend. Weights are transposed to [in, out] and uploaded once
 * (tf.matMul with transposeB does not reach XNNPACK in tfjs-backend-wasm 4.22: ~13× slower).
 * Returns { variants: { perHead, batched }, dispose } where each variant maps a Float32Array
 * input [n, d] to a fresh Float32Array output [n, d] (tensor2d in, dataSync out).
 */
export async function prepareTfjs(backendName, p) {
  await tf.setBackend(backendName);
  const { n, d, h } = p,
    hd = d / h;
  const kept = [
    tf.tensor2d(transpose2d(p.inProjWeight, 3 * d, d), [d, 3 * d]),
    tf.tensor1d(p.inProjBias),
    tf.tensor2d(transpose2d(p.outProjWeight, d, d), [d, d]),
    tf.tensor1d(p.outProjBias),
    tf.scalar(1 / Math.sqrt(hd)),
  ];
  const [winT, bin, woT, bo, scale] = kept;
  // one 2-D tf.matMul per head for Q·Kᵀ and for P·V
  const perHead = (x) =>
    tf.tidy(() => {
      const X = tf.tensor2d(x, [n, d]);
      const qkv = tf.add(tf.matMul(X, winT), bin); // [n, 3d]
      const q = tf.mul(tf.slice(qkv, [0, 0], [n, d]), scale);
      const kT = tf.transpose(tf.slice(qkv, [0, d], [n, d])); // [d, n]
      const v = tf.slice(qkv, [0, 2 * d], [n, d]);
      const heads = [];
      for (let i = 0; i < h; i++) {
        const s = tf.matMul(tf.slice(q, [0, i * hd], [n, hd]), tf.slice(kT, [i * hd, 0], [hd, n]));
        heads.push(tf.matMul(tf.softmax(s), tf.slice(v, [0, i * hd], [n, hd])));
      }
      const ctx = h > 1 ? tf.concat(heads, 1) : heads[0];
      return tf.add(tf.matMul(ctx, woT), bo).dataSync();
    });
  // all heads in one batched tf.matMul
  const batched = (x) =>
    tf.tidy(() => {
      const X = tf.tensor2d(x, [n, d]);
      const qkv = tf.reshape(tf.add(tf.matMul(X, winT), bin), [n, 3, h, hd]);
      const q = tf.mul(tf.transpose(tf.slice(qkv, [0, 0, 0, 0], [n, 1, h, hd]), [1, 2, 0, 3]), scale); // [1,h,n,hd]
      const kT = tf.transpose(tf.slice(qkv, [0, 1, 0, 0], [n, 1, h, hd]), [1, 2, 3, 0]); // [1,h,hd,n]
      const v = tf.transpose(tf.slice(qkv, [0, 2, 0, 0], [n, 1, h, hd]), [1, 2, 0, 3]); // [1,h,n,hd]
      const probs = tf.softmax(tf.matMul(tf.reshape(q, [h, n, hd]), tf.reshape(kT, [h, hd, n])));
      const ctx = tf.reshape(tf.transpose(tf.matMul(probs, tf.reshape(v, [h, n, hd])), [1, 0, 2]), [n, d]);
      return tf.add(tf.matMul(ctx, woT), bo).dataSync();
    });
  return {
    variants: { perHead, batched },
    activate: () => tf.setBackend(backendName),
    dispose: async () => {
      await tf.setBackend(backendName);
      for (const t of kept) t.dispose();
    },
  };
}
