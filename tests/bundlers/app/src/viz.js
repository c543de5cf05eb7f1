// ?mode=viz: the app draws with wasm-attention/viz (no engine): a heatmap and a model view of
// made-up causal weights, and reports what they drew.
import { createHeatmap, createModelView } from 'wasm-attention/viz';

function causal(T, shift) {
  const w = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    let sum = 0;
    for (let j = 0; j <= i; j++) sum += w[i * T + j] = 1 + ((i * 7 + j * 3 + shift) % 5);
    for (let j = 0; j <= i; j++) w[i * T + j] /= sum;
  }
  return w;
}

export async function runViz() {
  const T = 6;
  const tokens = ['The', ' cat', ' sat', ' on', ' the', ' mat'];
  const box = document.createElement('main');
  document.body.append(box);
  createHeatmap(box, { weights: causal(T, 0), queryTokens: tokens, causal: true, title: 'layer 0, head 0' });
  const heads = new Float32Array(2 * T * T);
  heads.set(causal(T, 1));
  heads.set(causal(T, 2), T * T);
  createModelView(box, { attention: [heads, heads], tokens, numKvHeads: 1 });
  const canvases = Array.from(box.querySelectorAll('canvas'));
  const colours = canvases.map((c) => {
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let k = 0; k < data.length; k += 4) seen.add((data[k] << 16) | (data[k + 1] << 8) | data[k + 2]);
    return seen.size;
  });
  return {
    canvases: canvases.length,
    heatmap: JSON.parse(canvases[0].dataset.layout),
    thumbs: box.querySelectorAll('[role=gridcell]').length,
    groups: box.querySelector('[data-testid=viz-kv-groups]').textContent,
    colours,
  };
}
