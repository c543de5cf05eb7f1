// V8 runs new WebAssembly in a baseline compiler and swaps in optimised code only between calls
// (no on-stack replacement). A few small calls here get the kernels optimised, so the user's
// first real call does not run entirely in code about 4x slower.
export function warmUp(api) {
  const embedDim = 64;
  const tokens = 48;
  const fill = (n) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = Math.sin(i) * 0.1;
    return a;
  };
  const layer = api.createMultiHeadAttention({
    embedDim,
    numHeads: 2,
    inProjWeight: fill(3 * embedDim * embedDim),
    outProjWeight: fill(embedDim * embedDim),
  });
  const query = fill(tokens * embedDim);
  for (let i = 0; i < 12; i++) layer.forward({ query, isCausal: i % 2 === 0 });
  layer.dispose();
}
