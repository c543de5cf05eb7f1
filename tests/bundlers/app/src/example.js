// The worked example every consumer app computes: 4 tokens, embedDim 16, 2 heads, causal,
// inputs from a seeded generator. The result carries its inputs, so the test can check it
// against its float64 reference without a copy of this generator. random.js is the package's
// lib/random.mjs (the generator the demo page uses), copied into the app by the test.
import { mulberry32 } from './random.js';

/** Runs the example with an engine from createAttention(options); resolves to plain JSON data. */
export async function runExample(createAttention, options) {
  const attn = await createAttention(options);
  const rng = mulberry32(2024);
  const uniform = (n, scale) => Float32Array.from({ length: n }, () => (rng() * 2 - 1) * scale);
  const E = 16;
  const L = 4;
  const args = {
    embedDim: E,
    numHeads: 2,
    query: uniform(L * E, 1),
    inProjWeight: uniform(3 * E * E, 0.5),
    inProjBias: uniform(3 * E, 0.1),
    outProjWeight: uniform(E * E, 0.5),
    outProjBias: uniform(E, 0.1),
    isCausal: true,
  };
  const { output, weights } = attn.multiHeadAttention(args);
  const info = { ...attn.info };
  attn.dispose();
  const plain = Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]),
  );
  return {
    info,
    crossOriginIsolated: globalThis.crossOriginIsolated ?? null,
    args: plain,
    output: Array.from(output),
    weights: Array.from(weights),
  };
}
