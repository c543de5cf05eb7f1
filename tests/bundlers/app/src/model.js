// The model the app loads with ?mode=model: loadModel from a folder URL (a checkpoint with its
// tokenizer, served by the test from another origin, as a CDN would), then greedy generation of the
// given prompt. Proves loadModel's lazy chunk and the vendored tokenizer survive the bundler.
export async function runModel(createAttention, loadModel, { model, prompt, maxNewTokens }) {
  const attn = await createAttention();
  try {
    const loaded = await loadModel(attn, model);
    const { ids, text } = await loaded.generate(prompt, { maxNewTokens, stopAtEos: false });
    return { ids: Array.from(ids), text, decoded: loaded.decode(ids), info: { ...attn.info } };
  } finally {
    attn.dispose();
  }
}
